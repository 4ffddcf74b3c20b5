#pragma once
// A small, fast, seedable random generator (xoshiro256**, the family pgbench uses) for
// workload inputs and arrival schedules. Same seed, same sequence: runs are comparable.
// Header-only so workloads can use it without linking the driver.

#include <cmath>
#include <cstdint>

namespace pgslow {

class Random {
 public:
  explicit Random(std::uint64_t seed = 1) { reseed(seed); }

  void reseed(std::uint64_t seed) {
    // SplitMix64 spreads a small seed over the whole state (xoshiro's recommended seeding).
    for (auto& s : state_) {
      seed += 0x9e3779b97f4a7c15ULL;
      std::uint64_t z = seed;
      z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
      z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
      s = z ^ (z >> 31);
    }
  }

  std::uint64_t next() {
    const std::uint64_t result = rotl(state_[1] * 5, 7) * 9;
    const std::uint64_t t = state_[1] << 17;
    state_[2] ^= state_[0];
    state_[3] ^= state_[1];
    state_[1] ^= state_[2];
    state_[0] ^= state_[3];
    state_[2] ^= t;
    state_[3] = rotl(state_[3], 45);
    return result;
  }

  // Uniform in [0, 1).
  double uniform01() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }

  // Uniform integer in [lo, hi], both inclusive (pgbench's random(lo, hi)).
  std::int64_t uniform(std::int64_t lo, std::int64_t hi) {
    auto span = static_cast<std::uint64_t>(hi - lo) + 1;
    if (span == 0) return static_cast<std::int64_t>(next());  // the full 64-bit range
    // Lemire's multiply-shift: no modulo bias worth measuring for spans far below 2^64.
    __extension__ using U128 = unsigned __int128;  // -Wpedantic: a GCC/Clang extension
    auto m = static_cast<U128>(next()) * span;
    return lo + static_cast<std::int64_t>(m >> 64);
  }

  // Exponentially distributed with the given mean (Poisson arrival gaps, pgbench -R).
  double exponential(double mean) { return -mean * std::log(1.0 - uniform01()); }

 private:
  static std::uint64_t rotl(std::uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }
  std::uint64_t state_[4];
};

}  // namespace pgslow
