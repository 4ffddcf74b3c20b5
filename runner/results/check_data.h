#pragma once
// `pgslow check-data`'s result: a workload's consistency checks on one clone. The workloads
// fill the checks (workload::Workload::check); report/check_data_view.h renders them (console,
// Markdown, JSON).

#include <string>
#include <vector>

namespace pgslow::results {

// One consistency condition checked after a run (TPC-C clause 3.3.2.x, ...).
struct CheckResult {
  std::string clause;       // "3.3.2.1"
  std::string description;  // "W_YTD = sum(D_YTD)"
  bool passed = false;
  std::string detail;  // on failure: the offending keys and values
};

struct CheckDataResult {
  std::string workload;  // "tpcc-lite"
  std::string database;  // the clone checked
  std::vector<CheckResult> checks;

  bool passed() const {
    for (const CheckResult& c : checks)
      if (!c.passed) return false;
    return true;
  }
};

}  // namespace pgslow::results
