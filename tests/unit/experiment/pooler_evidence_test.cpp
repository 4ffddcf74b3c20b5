// The pooler's wait over a measured window or a switchback block (experiment/pooler_path.h)
// from two readings of PgBouncer's console: each wait counts for its part inside the window,
// also a wait under way at either end, which SHOW STATS alone counts only once it ends.

#include <gtest/gtest.h>

#include <map>
#include <string>

#include "evidence/evidence.h"
#include "experiment/pooler_path.h"
#include "server/pgbouncer.h"

namespace pgslow::experiment {
namespace {

server::PoolerStats reading(std::int64_t finished_waits_us, std::int64_t waits_under_way_us) {
  server::PoolerStats s;
  s.total_wait_time_us = finished_waits_us;
  s.current_wait_us = waits_under_way_us;
  return s;
}

// Session mode with more clients than the pool: a client waits out the whole window and never
// gets a server connection. Its 5 s inside the window are the window's wait.
TEST(PoolerWait, AClientWaitingTheWholeWindowCountsItsPartInside) {
  std::map<std::string, double> evidence;
  add_pooler_evidence(reading(2'000, 1'000'000), reading(2'000, 6'000'000), evidence);
  EXPECT_DOUBLE_EQ(evidence.at("pooler_wait_ms"), 5'000.0);
}

// A wait that began 0.3 s before the window and ended 0.5 s into it: its 0.5 s inside; and one
// that began and ended inside (0.2 s) counts whole.
TEST(PoolerWait, AWaitEndingInsideCountsFromTheWindowsStart) {
  std::map<std::string, double> evidence;
  add_pooler_evidence(reading(0, 300'000), reading(800'000 + 200'000, 0), evidence);
  EXPECT_DOUBLE_EQ(evidence.at("pooler_wait_ms"), 700.0);
}

// A switchback block's wait is the difference of two snapshots' counters: the same rule.
TEST(PoolerWait, ABlocksWaitIsTheSameDifferenceOfItsSnapshots) {
  evidence::Snapshot before, after;
  add_pooler_counters(reading(2'000, 1'000'000), before);
  add_pooler_counters(reading(2'000, 6'000'000), after);
  EXPECT_DOUBLE_EQ(evidence::delta(before, after).at("pooler_wait_ms"), 5'000.0);
}

}  // namespace
}  // namespace pgslow::experiment
