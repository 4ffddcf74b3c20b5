// `pgslow run SCENARIO` and `pgslow plan SCENARIO`.

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <fstream>
#include <iostream>

#include "apply/interrupt.h"
#include "cli/commands.h"
#include "cli/scenario_support.h"
#include "workshop/dashboard.h"
#include "common/paths.h"
#include "common/progress.h"
#include "common/strings.h"
#include "knobs/validate.h"
#include "pg/connection.h"
#include "report/reporter.h"
#include "scenario/plan.h"
#include "scenario/run.h"
#include "server/target.h"

namespace pgslow::cli {

namespace fs = std::filesystem;

// A scenario argument is a file, or the name of one in scenarios/ ("quick").
fs::path resolve_scenario(const std::string& arg) {
  fs::path p(arg);
  if (fs::exists(p)) return p;
  for (const fs::path& candidate :
       {data_root() / "scenarios" / (arg + ".yaml"), data_root() / "scenarios" / arg,
        data_root() / "scenarios" / "workshop" / (arg + ".yaml")}) {
    if (fs::exists(candidate)) return candidate;
  }
  std::vector<std::string> names;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(data_root() / "scenarios", ec)) {
    if (e.path().extension() == ".yaml") names.push_back(e.path().stem().string());
  }
  auto suggestion = closest_match(arg, names);
  throw InputError(fmt::format(
      "no scenario file or named scenario '{}'{}; the named ones are: {}", arg,
      suggestion ? fmt::format(" (did you mean '{}'?)", *suggestion) : "", join(names, ", ")));
}

// Parse, open the target, validate against the live server. Changes nothing.
Prepared prepare(Context& ctx, const std::string& arg, bool allow_changes) {
  Prepared p;
  p.scenario = scenario::load_scenario(resolve_scenario(arg));
  if (allow_changes) p.scenario.target.allow_changes = true;
  p.catalog = knobs::Catalog::load_default();
  server::TargetSpec spec = p.scenario.target;
  spec.workdir = ctx.workdir;
  spec.pg_bin = ctx.pg_bin;
  p.server = server::open_target(spec);
  pg::Connection conn = pg::Connection::open(p.server->conninfo());
  knobs::ServerSettings settings = knobs::ServerSettings::read(conn);
  p.plan = scenario::make_plan(p.scenario, p.catalog, settings);
  return p;
}

scenario::RunOptions run_options_for(const Context& ctx, const Prepared& prepared) {
  scenario::RunOptions options;
  options.target = prepared.scenario.target;
  options.target->workdir = ctx.workdir;
  options.target->pg_bin = ctx.pg_bin;
  return options;
}

fs::path default_out_dir(const std::string& scenario_name) {
  std::time_t t = std::time(nullptr);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y%m%d-%H%M%S", std::localtime(&t));
  return fs::path("results") / fmt::format("{}-{}", scenario_name, buf);
}

void render(const report::Run& run, std::string_view format, std::ostream& out) {
  report::make_reporter(format)->report(run, out);
}

// report.md/.json/.csv/.html and one server log excerpt per stage.
void write_results(const report::Run& run, const fs::path& dir) {
  fs::create_directories(dir / "logs");
  for (const auto& [format, file] :
       std::vector<std::pair<std::string, std::string>>{{"md", "report.md"},
                                                        {"json", "report.json"},
                                                        {"csv", "report.csv"},
                                                        {"html", "report.html"}}) {
    std::ofstream out(dir / file);
    render(run, format, out);
  }
  for (std::size_t i = 0; i < run.stages.size(); ++i) {
    const auto& st = run.stages[i];
    std::string name = fmt::format("{:02}-{}.log", i, st.name);
    for (char& c : name) {
      if (!std::isalnum(static_cast<unsigned char>(c)) && c != '.' && c != '-') c = '_';
    }
    std::ofstream out(dir / "logs" / name);
    out << st.log_excerpt;
  }
}

void add_run_commands(CLI::App& app, Context& ctx) {
  // pgslow plan
  {
    auto* cmd = app.add_subcommand("plan", "show what a run would do, changing nothing");
    auto scenario_arg = std::make_shared<std::string>();
    cmd->add_option("scenario", *scenario_arg, "scenario file or name (scenarios/NAME.yaml)")
        ->required();
    cmd->callback([&ctx, scenario_arg] {
      before_command(ctx, "plan");
      Prepared p = prepare(ctx, *scenario_arg, false);
      scenario::print_plan(p.plan, std::cout);
    });
  }
  // pgslow run
  {
    auto* cmd = app.add_subcommand("run", "run a scenario and print the before/after table");
    struct Args {
      std::string scenario;
      std::string out;
      bool allow_changes = false;
      std::optional<double> duration, warmup;
      std::optional<int> repeats;
      int workers = 0;
      int max_tries = 1;
      bool allow_partial = false;
      driver::Protocol protocol = driver::Protocol::kPrepared;
      bool check_data = false;
    };
    auto a = std::make_shared<Args>();
    cmd->add_option("scenario", a->scenario, "scenario file or name (scenarios/NAME.yaml)")
        ->required();
    cmd->add_option("--out", a->out, "results folder (default results/<scenario>-<time>)");
    cmd->add_flag("--allow-changes", a->allow_changes,
                  "allow changing a server that is not the managed cluster");
    cmd->add_option("--duration", a->duration, "seconds per measured run (overrides the scenario)");
    cmd->add_option("--warmup", a->warmup, "warm-up seconds (overrides the scenario)");
    cmd->add_option("--repeats", a->repeats, "measured runs per stage (overrides the scenario)");
    cmd->add_option("--workers", a->workers, "driver threads (default: one per core)");
    cmd->add_option("--max-tries", a->max_tries,
                    "attempts per transaction on serialization failure or deadlock");
    cmd->add_flag("--allow-partial", a->allow_partial, "go on when some clients cannot connect");
    cmd->add_option_function<std::string>(
        "--protocol,-M",
        [a](const std::string& v) {
          auto p = driver::parse_protocol(v);
          if (!p) throw CLI::ValidationError("--protocol", "use simple, extended or prepared");
          a->protocol = *p;
        },
        "how statements are sent, like pgbench -M: simple, extended or prepared (default)");
    cmd->add_flag("--check-data", a->check_data,
                  "run the workload's consistency checks after each run; a failed check fails the stage");
    auto dashboard = add_dashboard_options(cmd);
    cmd->callback([&ctx, a, cmd, dashboard] {
      before_command(ctx, "run");
      Prepared p = prepare(ctx, a->scenario, a->allow_changes);
      scenario::RunOptions options = run_options_for(ctx, p);
      options.duration_s = a->duration;
      options.warmup_s = a->warmup;
      options.repeats = a->repeats;
      options.workers = a->workers;
      options.max_tries = a->max_tries;
      options.allow_partial = a->allow_partial;
      options.protocol = a->protocol;
      options.check_data = a->check_data;
      fs::path out_dir = a->out.empty() ? default_out_dir(p.scenario.name) : fs::path(a->out);

      ConsoleProgress console;
      std::unique_ptr<workshop::Dashboard> board = open_dashboard(cmd, *dashboard, "pgslow run " + p.scenario.name);
      if (board) board->watch_server(p.server->conninfo());
      SilentProgress none;
      TeeProgress progress(console, board ? static_cast<Progress&>(*board) : none);
      progress.note(fmt::format("pgslow run {}: {} stages on {}, about {:.0f} s of measuring",
                                p.scenario.name, p.plan.stages.size(), p.server->describe(),
                                p.plan.estimated_seconds));
      report::Run run;
      try {
        scenario::run_plan(p.plan, *p.server, p.catalog, ctx.workdir, options, progress, run);
      } catch (const apply::Interrupted&) {
        if (!run.stages.empty()) {
          write_results(run, out_dir);
          render(run, "console", std::cout);
          std::cerr << fmt::format(
              "pgslow: interrupted; configuration restored; partial results in {}\n",
              out_dir.string());
        }
        throw;
      }
      write_results(run, out_dir);
      render(run, "console", std::cout);
      std::cout << fmt::format("\nResults: {}/report.md (.json .csv .html)\n", out_dir.string());
      linger(board.get(), *dashboard);
      // A run whose every changed stage failed measured nothing it was asked to: exit 1.
      std::size_t failed = 0;
      for (std::size_t i = 1; i < run.stages.size(); ++i)
        failed += run.stages[i].error.empty() ? 0 : 1;
      if (!run.stages.empty() && !run.stages.front().error.empty())
        throw RuntimeError(
            fmt::format("the baseline stage failed: {}; nothing could be compared (the "
                        "configuration is restored)",
                        run.stages.front().error));
      if (run.stages.size() > 1 && failed == run.stages.size() - 1)
        throw RuntimeError(
            fmt::format("every changed stage failed ({} of {}); see the errors above and "
                        "the logs in {} (the configuration is restored)",
                        failed, run.stages.size() - 1, (out_dir / "logs").string()));
      for (const auto& e : run.expectations) {
        if (!e.passed) {
          throw Error(kExitExpectation,
                      fmt::format("expectation failed: {} (measured: {})", e.text, e.detail));
        }
      }
    });
  }
}

}  // namespace pgslow::cli
