#include "results/cliff.h"

#include <algorithm>

#include "results/switchback.h"

namespace pgslow::results {

std::string to_string(CliffVerdict v) {
  switch (v) {
    case CliffVerdict::kSafe:
      return "safe";
    case CliffVerdict::kHarmful:
      return "harmful";
    case CliffVerdict::kUncertain:
      return "uncertain";
  }
  return "?";
}

std::string cliff_direction(const CliffResult& r) {
  return r.to_value < r.baseline.base_value ? "down" : "up";
}

std::vector<const CliffPoint*> points_in_value_order(const CliffResult& r) {
  std::vector<const CliffPoint*> out;
  for (const auto& p : r.points) out.push_back(&p);
  const bool down = cliff_direction(r) == "down";
  std::stable_sort(out.begin(), out.end(), [down](const CliffPoint* a, const CliffPoint* b) {
    return down ? a->base_value > b->base_value : a->base_value < b->base_value;
  });
  out.insert(out.begin(), &r.baseline);
  return out;
}

std::vector<AxisEffect> cliff_point_axes(const std::vector<const Measurement*>& runs,
                                         const std::vector<int>& calls, int point,
                                         double confidence) {
  const std::size_t n = std::min(runs.size(), calls.size());
  std::size_t first = n;
  std::size_t last = 0;
  for (std::size_t c = 0; c < n; ++c)
    if (calls[c] == point) {
      first = std::min(first, c);
      last = c;
    }
  if (first == n) return {};
  // The baseline run right before the first and right after the last are the point's too.
  const std::size_t from = first > 0 && calls[first - 1] == -1 ? first - 1 : first;
  const std::size_t to = last + 1 < n && calls[last + 1] == -1 ? last + 1 : last;
  std::vector<const Measurement*> series;
  std::vector<bool> stage;
  for (std::size_t c = from; c <= to; ++c) {
    if (calls[c] != point && calls[c] != -1) continue;
    series.push_back(runs[c]);
    stage.push_back(calls[c] == point);
  }
  return axis_effects(alternating_axes(series, stage, confidence));
}

}  // namespace pgslow::results
