#include <fmt/format.h>

#include "common/strings.h"
#include "workload/workload.h"

namespace pgslow::workload {

std::vector<CheckResult> check_data(const Workload& workload, const std::string& conninfo,
                                    const WorkloadParams& params) {
  pg::Connection conn = pg::Connection::open(conninfo);
  std::vector<CheckResult> results = workload.check(conn, params);
  std::vector<std::string> failed;
  for (const auto& r : results)
    if (!r.passed) failed.push_back(fmt::format("{} ({}): {}", r.clause, r.description, r.detail));
  if (!failed.empty())
    throw RuntimeError(fmt::format("{}: {} of {} consistency checks failed after the run: {}",
                                   workload.name(), failed.size(), results.size(),
                                   join(failed, "; ")));
  return results;
}

void resolve_clients(const Workload& workload, WorkloadParams& params, int fallback) {
  if (params.clients != 0) return;
  const int d = workload.default_clients(params);
  params.clients = d > 0 ? d : fallback;
}

}  // namespace pgslow::workload
