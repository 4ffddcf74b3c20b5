// TPC-C-lite's random generators: the loader calls them for every field of ~5 million rows
// per warehouse, and NURand runs several times per transaction.

#include <benchmark/benchmark.h>

#include <string>

#include "workload/tpcc/random.h"

namespace pgslow::workload::tpcc {
namespace {

void BM_Uniform(benchmark::State& state) {
  Rng rng(1);
  for (auto _ : state) benchmark::DoNotOptimize(rng.uniform(1, 100'000));
}
BENCHMARK(BM_Uniform);

void BM_NURandItemId(benchmark::State& state) {
  Rng rng(2);
  for (auto _ : state) benchmark::DoNotOptimize(nurand(rng, 8191, 1, 100'000, 7911));
}
BENCHMARK(BM_NURandItemId);

void BM_NURandCustomerId(benchmark::State& state) {
  Rng rng(3);
  for (auto _ : state) benchmark::DoNotOptimize(nurand(rng, 1023, 1, 3000, 259));
}
BENCHMARK(BM_NURandCustomerId);

// Bytes per second of a-string generation at the lengths the loader uses most.
void BM_AString(benchmark::State& state) {
  Rng rng(4);
  std::string out;
  const int len = static_cast<int>(state.range(0));
  for (auto _ : state) {
    out.clear();
    append_a_string(rng, out, len, len);
    benchmark::DoNotOptimize(out.data());
  }
  state.SetBytesProcessed(state.iterations() * len);
}
BENCHMARK(BM_AString)->Arg(24)->Arg(50)->Arg(500);

void BM_ItemData(benchmark::State& state) {
  Rng rng(5);
  std::string out;
  for (auto _ : state) {
    out.clear();
    append_item_data(rng, out);
    benchmark::DoNotOptimize(out.data());
  }
}
BENCHMARK(BM_ItemData);

void BM_LastName(benchmark::State& state) {
  Rng rng(6);
  std::string out;
  for (auto _ : state) {
    out.clear();
    append_last_name(out, static_cast<int>(nurand(rng, 255, 0, 999, 157)));
    benchmark::DoNotOptimize(out.data());
  }
}
BENCHMARK(BM_LastName);

}  // namespace
}  // namespace pgslow::workload::tpcc
