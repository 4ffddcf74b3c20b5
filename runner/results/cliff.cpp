#include "results/cliff.h"

#include <algorithm>

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

}  // namespace pgslow::results
