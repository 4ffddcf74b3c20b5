// A Trial becomes the driver's options in one place (experiment::driver_options): every field
// of its load and timing reaches the driver, and what it leaves at 0 takes the defaults.

#include "experiment/trial.h"

#include <gtest/gtest.h>

namespace pgslow::experiment {
namespace {

TEST(Trial, EveryFieldOfItsLoadAndTimingReachesTheDriver) {
  Trial t;
  t.load.clients = 12;
  t.load.pool_size = 3;
  t.load.connect_per_transaction = true;
  t.load.rate = 250;
  t.load.workers = 2;
  t.timing.warmup_s = 90;
  t.timing.ramp_s = 30;  // bench --spec's staggered start: it once stopped short of the driver
  t.timing.duration_s = 300;
  t.timing.max_tries = 5;
  t.timing.allow_partial = true;
  t.timing.protocol = driver::Protocol::kSimple;
  t.timing.schedule_seed = 42;
  const driver::DriverOptions d = driver_options(t, 8);
  EXPECT_EQ(d.clients, 12);
  EXPECT_EQ(d.pool_size, 3);
  EXPECT_TRUE(d.connect_per_transaction);
  EXPECT_EQ(d.rate, 250);
  EXPECT_EQ(d.workers, 2);
  EXPECT_EQ(d.warmup_s, 90);
  EXPECT_EQ(d.ramp_s, 30);
  EXPECT_EQ(d.duration_s, 300);
  EXPECT_EQ(d.max_tries, 5);
  EXPECT_TRUE(d.allow_partial);
  EXPECT_EQ(d.protocol, driver::Protocol::kSimple);
  EXPECT_EQ(d.seed, 42u);
}

TEST(Trial, ClientsAndWorkersLeftAtZeroTakeTheWorkloadsAndTheTimings) {
  Trial t;
  t.timing.workers = 4;
  const driver::DriverOptions d = driver_options(t, 8);
  EXPECT_EQ(d.clients, 8);
  EXPECT_EQ(d.workers, 4);
  const results::LoadSettings recorded = recorded_load(t, 8);
  EXPECT_EQ(recorded.clients, 8);
  EXPECT_EQ(recorded.workers, 4);
  EXPECT_EQ(t.with_repeats(3).timing.repeats, 3);
  EXPECT_EQ(t.timing.repeats, 1);
}

}  // namespace
}  // namespace pgslow::experiment
