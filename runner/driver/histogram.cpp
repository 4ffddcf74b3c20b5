#include "driver/histogram.h"

#include <algorithm>
#include <cmath>

namespace pgslow::driver {

template <int SubBits>
std::int64_t LogHistogram<SubBits>::bucket_low(int index) {
  if (index < kLinearLimit) return index;
  int k = index - static_cast<int>(kLinearLimit);
  int shift = k / (1 << kSubBits) + 1;
  std::int64_t sub = k % (1 << kSubBits) + (1 << kSubBits);
  return sub << shift;
}

template <int SubBits>
std::int64_t LogHistogram<SubBits>::bucket_width(int index) {
  if (index < kLinearLimit) return 1;
  int k = index - static_cast<int>(kLinearLimit);
  return std::int64_t{1} << (k / (1 << kSubBits) + 1);
}

template <int SubBits>
void LogHistogram<SubBits>::merge(const LogHistogram& other) {
  if (other.count_ == 0) return;
  for (int i = 0; i < kBuckets; ++i) counts_[i] += other.counts_[i];
  count_ += other.count_;
  sum_ += other.sum_;
  max_ = std::max(max_, other.max_);
  min_ = std::min(min_, other.min_);
}

template <int SubBits>
void LogHistogram<SubBits>::clear() {
  counts_.fill(0);
  count_ = 0;
  sum_ = 0;
  max_ = 0;
  min_ = INT64_MAX;
}

template <int SubBits>
double LogHistogram<SubBits>::percentile(double q) const {
  if (count_ == 0) return 0;
  q = std::clamp(q, 0.0, 1.0);
  auto rank = static_cast<std::uint64_t>(std::ceil(q * static_cast<double>(count_)));
  if (rank == 0) rank = 1;
  std::uint64_t seen = 0;
  for (int i = 0; i < kBuckets; ++i) {
    seen += counts_[i];
    if (seen >= rank) {
      double mid =
          static_cast<double>(bucket_low(i)) + static_cast<double>(bucket_width(i) - 1) / 2.0;
      return std::clamp(mid, static_cast<double>(min_), static_cast<double>(max_));
    }
  }
  return static_cast<double>(max_);
}

template <int SubBits>
results::LatencySummary LogHistogram<SubBits>::summary() const {
  results::LatencySummary s;
  s.mean_us = mean();
  s.p50_us = percentile(0.50);
  s.p90_us = percentile(0.90);
  s.p95_us = percentile(0.95);
  s.p99_us = percentile(0.99);
  s.p999_us = percentile(0.999);
  s.max_us = static_cast<double>(max());
  return s;
}

template class LogHistogram<6>;
template class LogHistogram<3>;

}  // namespace pgslow::driver
