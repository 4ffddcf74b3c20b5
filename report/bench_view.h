#pragma once
// `pgslow bench`'s result (results/bench.h) as a console table and JSON.

#include <cstdint>
#include <iosfwd>
#include <nlohmann/json_fwd.hpp>
#include <string>

#include "report/views.h"
#include "results/bench.h"

namespace pgslow::report {

// The per-transaction-type table, then TPS with its transaction count, the headline figures a
// workload has (tpmC and NOPM for TPC-C-lite), schedule lag, pool wait, failures and refused
// clients, the retries' time per type and the transactions in flight as the window closed.
void render_bench_console(const BenchResult& bench, std::ostream& out);
// "3 transactions still running when the window closed, ...": the in-flight line of `bench`
// and of a stage in `run`'s console; empty when none was.
std::string in_flight_text(const Measurement& m);
// measurement_json (report/json.h) plus the workload, scale, reset time and whether it was
// interrupted.
nlohmann::ordered_json bench_to_json(const BenchResult& bench);

}  // namespace pgslow::report
