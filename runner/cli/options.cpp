#include "cli/options.h"

#include <fmt/format.h>

#include "report/metric.h"

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

void add_metric_option(CLI::App* cmd, std::optional<report::Metric>& metric,
                       const std::string& what) {
  cmd->add_option_function<std::string>(
      "--metric",
      [&metric](const std::string& v) {
        metric = report::parse_metric(v);
        if (!metric)
          throw CLI::ValidationError(
              "--metric", fmt::format("unknown metric '{}': use {}", v, report::metric_names()));
      },
      "what the search judges a configuration by: tps (higher is better), cpu_per_tx (the "
      "server's CPU seconds per transaction, a local server only) or p99 (latency); " +
          what);
}

}  // namespace pgslow::cli
