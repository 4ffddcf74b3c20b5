#pragma once
// A latency histogram with log-linear buckets at microsecond resolution (HdrHistogram's
// shape): exact below 2 × 2^SubBits µs, then 2^SubBits buckets per power of two. Fixed size,
// no allocation after construction, so a worker records on its hot path without locks;
// workers' histograms are merged once a second and at the end.
//   Histogram: exact below 128 µs, 64 buckets per power of two (relative error under 1.6%),
//     18 kB: a run's, a type's, a second's, a switchback block's latency.
//   CoarseHistogram: exact below 16 µs, 8 per power of two (a reported midpoint within 6.3%),
//     2.4 kB: one per transaction type and interval of a run's shape over time.

#include <array>
#include <cstdint>

#include "results/model.h"

namespace pgslow::driver {

template <int SubBits>
class LogHistogram {
 public:
  static constexpr int kSubBits = SubBits;                     // 2^SubBits per power of two
  static constexpr std::int64_t kLinearLimit = 2 << kSubBits;  // exact below this
  static constexpr int kMaxBits = 40;                          // ~12 days: larger values clamp
  static constexpr int kBuckets = kLinearLimit + (kMaxBits - kSubBits - 1) * (1 << kSubBits);

  void record(std::int64_t micros) {
    if (micros < 0) micros = 0;
    ++counts_[index_of(micros)];
    ++count_;
    sum_ += micros;
    if (micros > max_) max_ = micros;
    if (micros < min_) min_ = micros;
  }
  void merge(const LogHistogram& other);
  void clear();

  std::uint64_t count() const { return count_; }
  std::int64_t max() const { return count_ ? max_ : 0; }
  std::int64_t min() const { return count_ ? min_ : 0; }
  double mean() const {
    return count_ ? static_cast<double>(sum_) / static_cast<double>(count_) : 0;
  }
  // The value at quantile q (0..1]: the smallest recorded value's bucket such that at least
  // q of the values are at or below it, reported as the bucket's midpoint (never above max).
  double percentile(double q) const;
  // mean, p50, p90, p95, p99, p99.9, max.
  results::LatencySummary summary() const;

  // Bucket arithmetic, public for tests.
  static int index_of(std::int64_t micros);
  static std::int64_t bucket_low(int index);
  static std::int64_t bucket_width(int index);

 private:
  std::array<std::uint64_t, kBuckets> counts_{};
  std::uint64_t count_ = 0;
  std::int64_t sum_ = 0;
  std::int64_t max_ = 0;
  std::int64_t min_ = INT64_MAX;
};

template <int SubBits>
inline int LogHistogram<SubBits>::index_of(std::int64_t v) {
  if (v < kLinearLimit) return static_cast<int>(v);
  if (v >= (std::int64_t{1} << kMaxBits)) v = (std::int64_t{1} << kMaxBits) - 1;
  int msb = 63 - __builtin_clzll(static_cast<unsigned long long>(v));
  int shift = msb - kSubBits;  // v >> shift is in [2^kSubBits, 2^(kSubBits + 1))
  return static_cast<int>(kLinearLimit + (shift - 1) * (1 << kSubBits) +
                          ((v >> shift) - (1 << kSubBits)));
}

using Histogram = LogHistogram<6>;
using CoarseHistogram = LogHistogram<3>;
extern template class LogHistogram<6>;
extern template class LogHistogram<3>;

}  // namespace pgslow::driver
