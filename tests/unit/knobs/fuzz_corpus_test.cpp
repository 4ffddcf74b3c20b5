// Replays tests/fuzz/corpus (nasty inputs, and anything libFuzzer found) through the fuzz
// target's entry point on every build, so the bounded fuzz run's findings stay fixed.

#include <gtest/gtest.h>

#include <filesystem>

#include "common/paths.h"
#include "tests/fuzz/settings_entry.h"

namespace pgslow::knobs {
namespace {

namespace fs = std::filesystem;

TEST(FuzzCorpus, EveryInputIsHandled) {
  const fs::path dir = fs::path(PGSLOW_SOURCE_DIR) / "tests" / "fuzz" / "corpus";
  std::size_t replayed = 0;
  for (const auto& entry : fs::directory_iterator(dir)) {
    if (!entry.is_regular_file()) continue;
    SCOPED_TRACE(entry.path().string());
    testing::run_settings_input(read_file(entry.path()));
    ++replayed;
  }
  EXPECT_GE(replayed, 10u);
}

TEST(FuzzCorpus, ByteSoupIsHandled) {
  // Deterministic variations of a valid file: truncations and single-byte flips.
  const std::string base =
      "name: x\ndescription: d\nsettings:\n  shared_buffers: 8MB\n  wal_level: minimal\n"
      "  random_page_cost: 1e300\n  log_destination: [stderr, jsonlog]\n";
  for (std::size_t cut = 0; cut <= base.size(); ++cut)
    testing::run_settings_input(base.substr(0, cut));
  for (std::size_t i = 0; i < base.size(); ++i) {
    for (char c : {'\0', '\n', '[', '{', ':', '&', '*', '"', '\xff', '-', '!'}) {
      std::string s = base;
      s[i] = c;
      testing::run_settings_input(s);
    }
  }
  SUCCEED();
}

}  // namespace
}  // namespace pgslow::knobs
