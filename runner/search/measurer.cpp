#include "search/measurer.h"

#include <fmt/format.h>

#include "common/errors.h"
#include "evidence/evidence.h"

namespace pgslow::search {

double search_sample_of(const results::Metric& metric, const results::Measurement& run,
                        const std::map<std::string, double>& evidence) {
  const std::optional<double> value = results::metric_value(metric, run, evidence);
  if (!value)
    throw RuntimeError(fmt::format("a run has no {}: {}", results::metric_name(metric),
                                   results::metric_missing(metric)));
  return results::search_sample(metric, *value);
}

void require_measurable(const results::Metric& metric, const server::ServerControl& server) {
  if (metric.kind != results::Metric::Kind::kCpuPerTx) return;
  // The lab session reads the server's CPU time through its postmaster's pid, as here.
  const auto data_dir = server.data_dir();
  if (data_dir && evidence::postmaster_pid_of(*data_dir)) return;
  throw InputError(fmt::format(
      "--metric cpu_per_tx needs the CPU time of the server's processes, which pgslow reads "
      "from /proc on the machine that runs them; {} is {}: use --metric tps (or p99)",
      server.describe(),
      data_dir ? "not running from its data directory's postmaster.pid"
               : "reached by connection only"));
}

}  // namespace pgslow::search
