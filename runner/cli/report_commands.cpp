// `pgslow report RUN.json`: re-render a saved run in any format.
// `pgslow compare A.json B.json`: the same scenario run twice, side by side.

#include <fmt/format.h>

#include <fstream>
#include <iostream>
#include <sstream>

#include "cli/commands.h"
#include "common/errors.h"
#include "common/paths.h"
#include "common/safe_fs.h"
#include "common/strings.h"
#include "report/json.h"
#include "report/registry.h"
#include "report/text.h"

namespace pgslow::cli {

namespace {

results::Run load_run(const std::string& path) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec)) {
    throw InputError(
        fmt::format("{}: no such file (give the report.json of a run, e.g. "
                    "results/<scenario>-<timestamp>/report.json)",
                    path));
  }
  try {
    return report::read_json(read_trusted_file(path, "the report"), path);
  } catch (const report::ReadError& e) {
    throw InputError(e.what());
  }
}

// Writes through a temporary file so a failed render never leaves half a report behind.
void write_output(const std::string& out_path, const std::string& text) {
  if (out_path.empty() || out_path == "-") {
    std::cout << text << std::flush;
    return;
  }
  write_file_durably(out_path, text);
  std::cerr << "wrote " << out_path << "\n";
}

}  // namespace

void add_report_commands(CLI::App& app, Context& ctx) {
  struct ReportOptions {
    std::string run_json;
    std::string format = "console";
    std::string out;
    bool detail = false;
  };
  auto opts = std::make_shared<ReportOptions>();
  auto* report_cmd = app.add_subcommand(
      "report", "render a saved run (report.json) as console text, Markdown, JSON, CSV or HTML");
  report_cmd->add_option("RUN.json", opts->run_json, "the report.json a run wrote")->required();
  report_cmd->add_option("--format,-f", opts->format,
                         "console | md | json | csv | html (default: console)");
  report_cmd->add_option("--out,-o", opts->out, "write to FILE instead of standard output");
  report_cmd->add_flag("--detail", opts->detail,
                       "console: under each stage, every axis, the evidence, waits, warnings and "
                       "the attribution");
  report_cmd->callback([opts, &ctx] {
    before_command(ctx, "report");
    report::check_format<results::Run>(opts->format);
    const results::Run run = load_run(opts->run_json);
    if (opts->format == "console") {
      std::ostringstream text;
      report::render_console(run, text, {opts->detail, report::output_columns()});
      write_output(opts->out, text.str());
      return;
    }
    write_output(opts->out, report::rendered(run, opts->format));
  });

  struct CompareOptions {
    std::string a, b;
    std::string format = "console";
    std::string out;
  };
  auto cmp = std::make_shared<CompareOptions>();
  auto* compare_cmd = app.add_subcommand(
      "compare",
      "the same scenario run twice (another version or machine): per stage, side by "
      "side, with the difference");
  compare_cmd->add_option("A.json", cmp->a, "the first run's report.json")->required();
  compare_cmd->add_option("B.json", cmp->b, "the second run's report.json")->required();
  compare_cmd->add_option("--format,-f", cmp->format, "console | md (default: console)");
  compare_cmd->add_option("--out,-o", cmp->out, "write to FILE instead of standard output");
  compare_cmd->callback([cmp, &ctx] {
    before_command(ctx, "report");
    report::check_format<report::RunComparison>(cmp->format);
    const results::Run a = load_run(cmp->a);
    const results::Run b = load_run(cmp->b);
    write_output(cmp->out,
                 report::rendered(report::RunComparison{a, b, cmp->a, cmp->b}, cmp->format));
  });
}

}  // namespace pgslow::cli
