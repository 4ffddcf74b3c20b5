// Prints the run-count table of docs/bisect.md (runs used versus candidate count on the
// simulated server, against one knob at a time) and checks the bound it illustrates.
// Regenerate: build-*/tests/unit/search/bisect_unit_tests --gtest_filter='RunCountTable.*'

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <iostream>

#include "good_again.h"
#include "search/bisector.h"
#include "search/simulated_server.h"

namespace pgslow::search {
namespace {

struct Stats {
  int min = 1 << 30;
  int max = 0;
  double sum = 0;
  int count = 0;
  void add(int v) {
    min = std::min(min, v);
    max = std::max(max, v);
    sum += v;
    ++count;
  }
  std::string str() const { return fmt::format("{:.1f} ({}-{})", sum / count, min, max); }
};

// Runs after good and bad (3 runs each), over every culprit position.
Stats single(int n) {
  Stats s;
  for (int c = 0; c < n; ++c) {
    SimulatedModel m = harmless_model(n, static_cast<std::uint64_t>(n * 131 + c));
    m.knobs[static_cast<std::size_t>(c)].factor = 0.1;
    SimulatedServer sim(m);
    Result r = Bisector(sim, sim.candidates()).run();
    EXPECT_EQ(r.culprits.size(), 1u);
    s.add(r.total_runs - 6 - good_again(r));
  }
  return s;
}

// A pair slow only together, over a spread of positions.
Stats pair(int n) {
  Stats s;
  for (int a = 0; a < n; a += std::max(1, n / 8))
    for (int b = a + 1; b < n; b += std::max(1, n / 8)) {
      SimulatedModel m = harmless_model(n, static_cast<std::uint64_t>(n * 977 + a * 31 + b));
      m.interactions.push_back({m.knobs[static_cast<std::size_t>(a)].name,
                                m.knobs[static_cast<std::size_t>(b)].name, 0.1});
      SimulatedServer sim(m);
      Result r = Bisector(sim, sim.candidates()).run();
      EXPECT_EQ(r.culprits.size(), 1u);
      if (!r.culprits.empty()) {
        EXPECT_EQ(r.culprits[0].knobs.size(), 2u);
      }
      s.add(r.total_runs - 6 - good_again(r));
    }
  return s;
}

TEST(RunCountTable, PrintsTheDocsTable) {
  std::cout << "| candidates | bound 2*ceil(log2 n)+2 | single culprit: mean (min-max) | "
               "two-knob interaction: mean (min-max) | one knob at a time |\n"
            << "| ---: | ---: | ---: | ---: | ---: |\n";
  for (int n : {8, 16, 32, 64}) {
    int bound = 2 * static_cast<int>(std::ceil(std::log2(n))) + 2;
    Stats s = single(n);
    Stats p = pair(n);
    EXPECT_LE(s.max, bound);
    // One knob at a time needs n runs and still cannot see an interaction.
    std::cout << fmt::format("| {} | {} | {} | {} | {} (misses interactions) |\n", n, bound,
                             s.str(), p.str(), n);
  }
}

}  // namespace
}  // namespace pgslow::search
