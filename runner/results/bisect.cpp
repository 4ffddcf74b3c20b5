#include "results/bisect.h"

namespace pgslow::results {

std::string to_string(BisectVerdict v) {
  switch (v) {
    case BisectVerdict::kGood:
      return "fast";
    case BisectVerdict::kBad:
      return "slow";
    case BisectVerdict::kUncertain:
      return "uncertain";
  }
  return "?";
}

}  // namespace pgslow::results
