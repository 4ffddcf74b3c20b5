#include "cli/options.h"

#include <fmt/format.h>

#include <algorithm>
#include <iostream>
#include <type_traits>

#include "common/errors.h"
#include "common/paths.h"
#include "common/printable.h"
#include "common/strings.h"
#include "knobs/evidence_keys.h"
#include "results/load_fields.h"
#include "results/metric.h"

namespace pgslow::cli {

void add_protocol_option(CLI::App* cmd, driver::Protocol& protocol) {
  cmd->add_option_function<std::string>(
      "--protocol,-M",
      [&protocol](const std::string& v) {
        auto p = driver::parse_protocol(v);
        if (!p) throw CLI::ValidationError("--protocol", "use simple, extended or prepared");
        protocol = *p;
      },
      "how statements are sent, like pgbench -M: simple, extended or prepared (default)");
}

void add_load_options(CLI::App* cmd, results::LoadSettings& load) {
  results::for_each_load_field([&](const auto& row) {
    if (row.option == nullptr) return;
    auto& value = load.*(row.member);
    if constexpr (std::is_same_v<std::remove_reference_t<decltype(value)>, bool>)
      cmd->add_flag(row.option, value, row.help);
    else
      cmd->add_option(row.option, value, row.help);
  });
}

void add_pooler_option(CLI::App* cmd, std::optional<server::PoolerSpec>& pooler) {
  cmd->add_option_function<std::string>(
      "--pooler", [&pooler](const std::string& v) { pooler = server::parse_pooler_option(v); },
      "put a pooler between the clients and the server: pgbouncer, pgbouncer:transaction "
      "(session, transaction, statement), with ,default_pool_size=N and other PgBouncer "
      "settings; or the conninfo of the target's own pooler ('host=/run/pgbouncer port=6432')");
}

CLI::Option* add_size_option(CLI::App* cmd, int& scale, const std::string& help) {
  CLI::Option* s = cmd->add_option("--scale,-s", scale, help);
  cmd->add_option("--warehouses", scale, "tpcc-lite's name for --scale")->excludes(s);
  return s;
}

std::optional<results::Metric> parse_metric_option(const std::string& name, std::string& error) {
  std::optional<results::Metric> m = results::parse_metric(name);
  // An evidence key names a metric only when the evidence code reports it (knobs/evidence_keys.h).
  if (m && m->kind == results::Metric::Kind::kEvidencePerTx && !knobs::is_evidence_key(m->evidence))
    m.reset();
  if (!m) {
    const auto near = closest_match(name, results::metric_name_list());
    error = fmt::format("unknown metric '{}'{}: use {}", name,
                        near ? fmt::format(" (did you mean '{}'?)", *near) : "",
                        results::metric_names());
  }
  return m;
}

void add_metric_option(CLI::App* cmd, std::optional<results::Metric>& metric,
                       const std::string& what, bool* is_auto) {
  cmd->add_option_function<std::string>(
      "--metric",
      [&metric, is_auto](const std::string& v) {
        if (is_auto != nullptr && v == "auto") {
          *is_auto = true;
          metric.reset();
          return;
        }
        std::string error;
        metric = parse_metric_option(v, error);
        if (!metric) throw CLI::ValidationError("--metric", error);
      },
      "what the search judges a configuration by: tps (higher is better), p99 (latency), "
      "cpu_per_tx (the server's CPU seconds per transaction, a local server only), "
      "wal_bytes_per_tx, or an evidence key per committed transaction (blocks_read, temp_bytes, "
      "...); every one but tps is a cost, lower is better; " +
          what);
}

std::vector<knobs::Setting> parse_knob_assignments(const std::vector<std::string>& args,
                                                   const knobs::Catalog& catalog) {
  std::vector<knobs::Setting> out;
  for (const std::string& arg : args) {
    const auto eq = arg.find('=');
    const std::string name = to_lower(trim(arg.substr(0, eq)));
    if (eq == std::string::npos || name.empty() || trim(arg.substr(eq + 1)).empty()) {
      throw InputError(
          fmt::format("{}: write KNOB=VALUE, e.g. shared_buffers=128MB", printable(arg)));
    }
    if (catalog.find(name) == nullptr) {
      auto m = closest_match(name, catalog.knob_names());
      throw InputError(fmt::format("{}: \"{}\" is not a knob pgslow knows{}", printable(arg),
                                   printable(name),
                                   m ? fmt::format(" (did you mean {}?)", *m) : ""));
    }
    if (std::any_of(out.begin(), out.end(),
                    [&](const knobs::Setting& s) { return s.name == name; }))
      throw InputError(fmt::format("{}: {} is given twice", printable(arg), name));
    out.push_back({name, trim(arg.substr(eq + 1)), {}});
  }
  return out;
}

std::unique_ptr<Progress> command_progress(const Context& /*ctx*/) {
  return std::make_unique<ConsoleProgress>();  // -q and -P: set_console_options, from main
}

void write_requested_output(const std::string& path, const std::string& text, Progress& progress) {
  if (path == "-") {
    std::cout << text << std::flush;
    return;
  }
  write_file_durably(path, text);
  progress.note("wrote " + path);
}

std::ostream& result_stream(const std::vector<std::string>& paths) {
  const auto to_stdout = std::count(paths.begin(), paths.end(), std::string("-"));
  if (to_stdout > 1)
    throw InputError("only one output can be `-` (standard output): give the others a file");
  return to_stdout == 1 ? std::cerr : std::cout;
}

}  // namespace pgslow::cli
