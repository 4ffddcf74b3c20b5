#pragma once
// `pgslow bench`'s result: one measurement of a workload with no knob changes (like pgbench),
// as a plain struct; report/bench_view.h renders it (console table, JSON).

#include <cstdint>
#include <map>
#include <string>

#include "results/model.h"

namespace pgslow::results {

struct BenchResult {
  std::string workload;
  int scale = 0;
  LoadSettings load;
  Measurement measurement;
  std::uint64_t data_bytes = 0;
  double reset_seconds = 0;
  std::string reset_method;  // Run::reset_method; "" with --no-reset
  bool interrupted = false;  // the figures cover the time until Ctrl-C
  // The pooler the clients went through ("pgbouncer (transaction)"), empty: directly; what it
  // did over the measured window (the pooler_* evidence keys, docs/pooler.md).
  std::string pooler;
  std::map<std::string, double> pooler_evidence;
};

}  // namespace pgslow::results
