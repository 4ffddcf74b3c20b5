// The histogram is on every transaction's path (record) and merged once a second (merge,
// percentile): record must cost a few nanoseconds.

#include <benchmark/benchmark.h>

#include "common/random.h"
#include "driver/histogram.h"

namespace pgslow::driver {
namespace {

void BM_HistogramRecord(benchmark::State& state) {
  Histogram h;
  Random r(1);
  std::vector<std::int64_t> values(4096);
  for (auto& v : values) v = static_cast<std::int64_t>(r.exponential(2000));
  std::size_t i = 0;
  for (auto _ : state) {
    h.record(values[i++ & 4095]);
  }
  benchmark::DoNotOptimize(h.count());
}
BENCHMARK(BM_HistogramRecord);

void BM_HistogramMerge(benchmark::State& state) {
  Histogram a, b;
  Random r(2);
  for (int i = 0; i < 100000; ++i) b.record(static_cast<std::int64_t>(r.exponential(2000)));
  for (auto _ : state) {
    a.merge(b);
    benchmark::DoNotOptimize(a.count());
  }
}
BENCHMARK(BM_HistogramMerge);

void BM_HistogramSummary(benchmark::State& state) {
  Histogram h;
  Random r(3);
  for (int i = 0; i < 100000; ++i) h.record(static_cast<std::int64_t>(r.exponential(2000)));
  for (auto _ : state) benchmark::DoNotOptimize(h.summary());
}
BENCHMARK(BM_HistogramSummary);

void BM_RandomUniform(benchmark::State& state) {
  Random r(4);
  for (auto _ : state) benchmark::DoNotOptimize(r.uniform(1, 1000000));
}
BENCHMARK(BM_RandomUniform);

}  // namespace
}  // namespace pgslow::driver
