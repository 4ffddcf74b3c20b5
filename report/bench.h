#pragma once
// `pgslow bench`'s result: one measurement of a workload with no knob changes (like pgbench),
// as a plain struct, rendered here like every other result (console table, JSON).

#include <cstdint>
#include <iosfwd>
#include <nlohmann/json.hpp>
#include <string>

#include "report/model.h"

namespace pgslow::report {

struct BenchResult {
  std::string workload;
  int scale = 0;
  LoadSettings load;
  Measurement measurement;
  std::uint64_t data_bytes = 0;
  double reset_seconds = 0;
  bool interrupted = false;  // the figures cover the time until Ctrl-C
};

// The per-transaction-type table, then TPS with its transaction count, the headline figures a
// workload has (tpmC and NOPM for TPC-C-lite), schedule lag, pool wait, failures and refused
// clients.
void render_bench_console(const BenchResult& bench, std::ostream& out);
// measurement_json (report/json.h) plus the workload, scale, reset time and whether it was
// interrupted.
nlohmann::ordered_json bench_to_json(const BenchResult& bench);

}  // namespace pgslow::report
