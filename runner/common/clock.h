#pragma once
// Time as 64-bit microseconds on the monotonic clock (pgbench's rule): cheap, never goes back.

#include <chrono>
#include <cstdint>

namespace pgslow {

inline std::int64_t now_us() {
  return std::chrono::duration_cast<std::chrono::microseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

}  // namespace pgslow
