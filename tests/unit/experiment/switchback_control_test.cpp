// The live lab's switchback control (experiment/switchback_control.h) driven by a made-up
// clock and made-up driver readings: a look sees each block's p95/p99 once every worker has
// published after the block's end, so --precision can stop on a latency axis as on TPS; a client
// count switches with its configuration.

#include "experiment/switchback_control.h"

#include <gtest/gtest.h>

#include <map>

#include "tests/support/simulated_runs.h"

namespace pgslow::experiment {
namespace {

constexpr std::int64_t kPollUs = 50'000;  // the driver polls about every 50 ms

// What the driver would read: 1,000 completions per block, and a p99 per block (the stage's
// twice the reference's, give or take 2%) published by the workers `lag_us` behind the clock.
struct FakeDriver {
  std::int64_t clock_us = 0;
  std::int64_t lag_us = 150'000;
  bool publishes = true;
  std::map<int, std::int64_t> asked_since;  // per block: the earliest publication asked for
  static double p99_of(int block) {
    const double base = block % 2 == 1 ? 2000 : 1000;
    return base * (1 + 0.01 * ((block * 7) % 5 - 2));
  }
  driver::BlockReader reader() {
    driver::BlockReader r;
    r.finished = [](int) { return std::uint64_t{1000}; };
    r.latency = [this](int block, std::int64_t since_us) -> std::optional<results::LatencySummary> {
      asked_since.emplace(block, since_us);
      if (!publishes || clock_us - lag_us < since_us) return std::nullopt;
      results::LatencySummary s;
      s.p99_us = p99_of(block);
      s.p95_us = 0.6 * s.p99_us;
      return s;
    };
    return r;
  }
};

results::SwitchbackDesign watching_p99() {
  return testing::precision_design("p99", 10);
}

// Polls the control as the driver does until it ends the window (or 200 s pass). The
// configuration switches (`applies`) must be one between each two blocks: none after the last.
results::Switchback run(SwitchbackControl& control, FakeDriver& driver, const int& applies) {
  control.clock = [&driver] { return driver.clock_us; };
  const driver::BlockReader reader = driver.reader();
  for (; driver.clock_us < 200'000'000; driver.clock_us += kPollUs)
    if (control.poll(static_cast<double>(driver.clock_us) / 1e6, reader) == driver::kEndWindow)
      break;
  EXPECT_FALSE(control.failure());
  const results::Switchback s = control.run().result();
  EXPECT_EQ(applies, static_cast<int>(s.blocks.size()) - 1);
  // Each block's latency is asked of publications after the block ended (4 s blocks).
  for (const auto& [block, since] : driver.asked_since)
    EXPECT_GT(since, (block + 1) * 4'000'000) << "block " << block;
  EXPECT_EQ(driver.asked_since.size(), s.blocks.size());
  return s;
}

TEST(SwitchbackControl, ALookSeesEachBlocksLatencyOnceTheWorkersPublishedIt) {
  FakeDriver driver;
  int applies = 0;
  SwitchbackControl control(watching_p99(), [&](bool) { ++applies; });
  const results::Switchback s = run(control, driver, applies);
  EXPECT_EQ(s.stopped, "precision");
  EXPECT_LT(s.blocks.size(), 21u) << "a look before the budget's last (10 pairs)";
  EXPECT_EQ(s.blocks.size() % 2, 1u) << "a look follows a reference block";
  for (std::size_t b = 0; b < s.blocks.size(); ++b) {
    EXPECT_DOUBLE_EQ(s.blocks[b].p99_us, FakeDriver::p99_of(static_cast<int>(b))) << b;
    EXPECT_EQ(s.blocks[b].transactions, 1000u);
    // The kept part: the block less its settling, which starts at the switch (later after a
    // look, which waits for the latency before it switches).
    EXPECT_GE(s.blocks[b].seconds, 2.5) << b;
    EXPECT_LE(s.blocks[b].seconds, 3.0) << b;
  }
}

TEST(SwitchbackControl, WithoutPublishedLatencyTheLooksCannotStopOnIt) {
  FakeDriver driver;
  driver.publishes = false;  // no worker publishes: each block waits its 1 s, then goes on
  int applies = 0;
  SwitchbackControl control(watching_p99(), [&](bool) { ++applies; });
  const results::Switchback s = run(control, driver, applies);
  EXPECT_EQ(s.stopped, "budget");
  EXPECT_EQ(s.blocks.size(), 21u);
  EXPECT_EQ(s.blocks[1].p99_us, 0) << "filled from the run's accounts afterwards (finish)";
}

// A stage of another client count: the control asks the driver for each configuration's
// clients at every switch, and a block's kept part waits until the wanted clients have
// connected again, here 1.5 s after the switch, longer than the 1 s of settling.
TEST(SwitchbackControl, AClientCountSwitchesWithItsConfigurationAndABlockWaitsForItsClients) {
  FakeDriver driver;
  int applies = 0;
  SwitchbackControl control(watching_p99(), [&](bool) { ++applies; });
  control.clients[0] = 8;
  control.clients[1] = 32;
  control.clock = [&driver] { return driver.clock_us; };
  driver::BlockReader reader = driver.reader();
  int wanted = control.active_clients();
  std::int64_t changed_at = 0;
  reader.clients_settled = [&] { return driver.clock_us - changed_at >= 1'500'000; };
  std::vector<int> sequence = {wanted};
  for (; driver.clock_us < 200'000'000; driver.clock_us += kPollUs) {
    const int b = control.poll(static_cast<double>(driver.clock_us) / 1e6, reader);
    if (b == driver::kEndWindow) break;
    if (control.active_clients() != wanted) {  // the driver reads it after every poll
      wanted = control.active_clients();
      changed_at = driver.clock_us;
      sequence.push_back(wanted);
    }
    if (b >= 0) {
      EXPECT_EQ(wanted, b % 2 == 0 ? 8 : 32) << "block " << b;
      EXPECT_GE(driver.clock_us - changed_at, 1'500'000) << "block " << b;
    }
  }
  const results::Switchback s = control.run().result();
  ASSERT_GE(s.blocks.size(), 3u);
  EXPECT_EQ(sequence.size(), s.blocks.size());
  for (std::size_t i = 0; i < sequence.size(); ++i) EXPECT_EQ(sequence[i], i % 2 == 0 ? 8 : 32);
  for (const auto& block : s.blocks) EXPECT_LE(block.seconds, 2.5 + 1e-9);
}

}  // namespace
}  // namespace pgslow::experiment
