#pragma once
// The load columns of the stage table: the figures the scenario varies, decided once for
// every format (console, Markdown, HTML, CSV). Mean latency always; pool wait p50/p99 when a
// stage uses a pool; offered rate, schedule lag p99 and the on-time share when a stage has a
// fixed rate; connect time p50/p99 when a stage connects per transaction; failed transactions
// and refused connections when any stage had one (CSV always has `failed`).
//
// A fixed-rate stage is judged on latency, lag and whether it kept the offered rate, never on
// "x slower" against a closed loop: its throughput is the rate it was given.

#include <string>
#include <vector>

#include "report/views.h"
#include "results/summary.h"

namespace pgslow::report {

struct LoadColumn {
  std::string header;  // "pool wait p99"
  std::string key;     // CSV column: "pool_wait_p99_ms"
  // The cell of one stage ("—" when the stage did not run or the figure does not apply) and
  // the plain number for CSV (empty when none).
  std::string (*cell)(const StageResult& stage, const Measurement* median);
  std::string (*csv)(const StageResult& stage, const Measurement* median);
};

std::vector<LoadColumn> load_columns(const Run& run);

// "1,998 of 2,000/s (99.9%)": the rate kept versus the rate offered.
std::string describe_rate_kept(const StageResult& stage, const Measurement& m);

}  // namespace pgslow::report
