// The worker's accounting (driver/accounting.h) driven with made-up times: no server, no
// clock, no threads.

#include "driver/accounting.h"

#include <gtest/gtest.h>

#include <deque>

namespace pgslow::driver {
namespace {

constexpr std::int64_t kSecond = 1'000'000;
// Warm-up 0..10 s, window 10..70 s.
const Window kWindow{10 * kSecond, 70 * kSecond};

Outcome committed(int retries = 0) {
  Outcome o;
  o.retries = retries;
  return o;
}
Outcome rolled_back() {
  Outcome o;
  o.kind = Outcome::Kind::kRolledBack;
  return o;
}
Outcome failed(pg::ErrorClass c, int retries = 0) {
  Outcome o;
  o.kind = Outcome::Kind::kFailed;
  o.error_class = c;
  o.retries = retries;
  return o;
}

// A transaction of `type` scheduled at `at` that took `latency` µs.
Finished tx(std::int64_t at, std::int64_t latency, Outcome o = committed(), std::size_t type = 0) {
  Finished f;
  f.type = type;
  f.outcome = o;
  f.scheduled = at;
  f.started = at;
  f.granted = at;
  f.ended = at + latency;
  return f;
}

TEST(Window, CountsWhatEndsInsideWhateverItsStart) {
  EXPECT_FALSE(kWindow.counts(5 * kSecond, committed()));       // the warm-up's
  EXPECT_FALSE(kWindow.counts(kWindow.start, committed()));     // its last instant
  EXPECT_TRUE(kWindow.counts(kWindow.start + 1, committed()));  // the window's first
  EXPECT_TRUE(kWindow.counts(kWindow.end, committed()));
  EXPECT_FALSE(kWindow.counts(kWindow.end + 1, committed()));
  Outcome stopped = failed(pg::ErrorClass::kSerialization);
  stopped.window_closed = true;  // retrying stopped by the window's end: in flight
  EXPECT_FALSE(kWindow.counts(30 * kSecond, stopped));
}

TEST(Accounts, WarmUpTransactionsAreNotCountedButShowOnTheLiveLine) {
  Accounts a(AccountsShape{});
  EXPECT_FALSE(a.record(tx(2 * kSecond, 500), kWindow));
  EXPECT_FALSE(a.record(tx(9 * kSecond, 900'000, failed(pg::ErrorClass::kOther)), kWindow));
  // Began in the warm-up, ended in the window: counted, with its whole latency.
  EXPECT_TRUE(a.record(tx(9'500'000, 800'000), kWindow));
  EXPECT_EQ(a.tallies[0].committed, 1u);
  EXPECT_EQ(a.tallies[0].failed, 0u);
  EXPECT_EQ(a.tallies[0].latency.max(), 800'000);
  EXPECT_EQ(a.live.count(), 2u);  // both completions, warm-up included
  EXPECT_EQ(a.live_failed, 1u);
  EXPECT_EQ(a.per_minute.size(), 1u);
  EXPECT_EQ(a.per_minute[0][0], 1u);
}

TEST(Accounts, OutcomesGoToTheirTypeAndFailuresByClass) {
  AccountsShape shape;
  shape.types = 2;
  Accounts a(shape);
  a.record(tx(20 * kSecond, 100, committed(2), 0), kWindow);
  a.record(tx(20 * kSecond, 50, rolled_back(), 1), kWindow);
  a.record(tx(21 * kSecond, 70, failed(pg::ErrorClass::kDeadlock, 1), 1), kWindow);
  a.record(tx(22 * kSecond, 70, failed(pg::ErrorClass::kQueryCanceled), 0), kWindow);
  EXPECT_EQ(a.tallies[0].committed, 1u);
  EXPECT_EQ(a.tallies[0].retries, 2u);
  EXPECT_EQ(a.tallies[0].failed, 1u);
  EXPECT_EQ(a.tallies[1].rolled_back, 1u);
  EXPECT_EQ(a.tallies[1].failed, 1u);
  EXPECT_EQ(a.tallies[1].retries, 1u);
  EXPECT_EQ(a.tallies[1].failures_by_class[static_cast<std::size_t>(pg::ErrorClass::kDeadlock)],
            1u);
  // Latency of committed and rolled back only; failures are no latency sample.
  EXPECT_EQ(a.tallies[0].latency.count(), 1u);
  EXPECT_EQ(a.tallies[1].latency.count(), 1u);
  EXPECT_EQ(a.tallies[1].latency.max(), 50);
  EXPECT_EQ(a.live_failed, 2u);
}

TEST(Accounts, FailuresTheWindowsEndCausedAreNotOnTheLiveLine) {
  Accounts a(AccountsShape{});
  Finished cancelled = tx(69 * kSecond, 2 * kSecond, failed(pg::ErrorClass::kQueryCanceled));
  EXPECT_FALSE(a.record(cancelled, kWindow));  // ended after the window: in flight, not failed
  Outcome stopped = failed(pg::ErrorClass::kSerialization, 3);
  stopped.window_closed = true;
  EXPECT_FALSE(a.record(tx(60 * kSecond, 100, stopped), kWindow));
  EXPECT_EQ(a.live_failed, 0u);
  EXPECT_EQ(a.tallies[0].failed, 0u);
  EXPECT_EQ(a.tallies[0].retries, 0u);  // retries of uncounted transactions are not counted
}

TEST(Accounts, FixedRateLatencyCountsFromTheScheduleAndLatenessApart) {
  AccountsShape shape;
  shape.fixed_rate = true;
  Accounts a(shape);
  Finished on_time = tx(20 * kSecond, 300);
  on_time.started = on_time.scheduled + 1'000;  // exactly kOnTimeLagUs late: still on time
  Finished late = tx(30 * kSecond, 5'000);
  late.started = late.scheduled + 4'000;
  a.record(on_time, kWindow);
  a.record(late, kWindow);
  a.record(tx(5 * kSecond, 10, committed()), kWindow);  // warm-up: no lag sample
  EXPECT_EQ(a.schedule_lag.count(), 2u);
  EXPECT_EQ(a.schedule_lag.max(), 4'000);
  EXPECT_EQ(a.schedule_lag.min(), 1'000);
  EXPECT_EQ(a.on_time, 1u);
  EXPECT_EQ(a.tallies[0].latency.max(), 5'000);  // from the scheduled start, lag included

  RunFacts facts;
  facts.measure_start = kWindow.start;
  facts.fixed_rate = true;
  a.window_end = kWindow.end;
  const results::Measurement m = measurement_of(a, facts);
  EXPECT_DOUBLE_EQ(m.on_time_ratio, 0.5);
  EXPECT_GT(m.schedule_lag.max_us, 0);
}

TEST(Accounts, ClosedLoopKeepsNoLateness) {
  Accounts a(AccountsShape{});
  Finished f = tx(20 * kSecond, 300);
  f.started = f.scheduled + 4'000;
  a.record(f, kWindow);
  EXPECT_EQ(a.schedule_lag.count(), 0u);
  // Nor does its Measurement, whatever the accounts hold.
  a.schedule_lag.record(4'000);
  a.on_time = 1;
  a.window_end = kWindow.end;
  RunFacts facts;
  facts.measure_start = kWindow.start;
  const results::Measurement m = measurement_of(a, facts);
  EXPECT_EQ(m.schedule_lag, results::LatencySummary{});
  EXPECT_EQ(m.on_time_ratio, 0);
}

TEST(Accounts, PoolWaitIsFromTheStartToTheGrant) {
  AccountsShape shape;
  shape.pooled = true;
  Accounts a(shape);
  Finished f = tx(20 * kSecond, 9'000);
  f.granted = f.started + 7'000;
  a.record(f, kWindow);
  Finished refused = tx(21 * kSecond, 10, failed(pg::ErrorClass::kTooManyConnections));
  refused.connected = false;
  refused.granted = refused.started + 50'000;
  a.record(refused, kWindow);
  EXPECT_EQ(a.pool_wait.count(), 1u);
  EXPECT_EQ(a.pool_wait.max(), 7'000);
  EXPECT_EQ(
      a.tallies[0].failures_by_class[static_cast<std::size_t>(pg::ErrorClass::kTooManyConnections)],
      1u);
  a.window_end = kWindow.end;
  RunFacts facts;
  facts.measure_start = kWindow.start;
  EXPECT_EQ(measurement_of(a, facts).pool_wait, results::LatencySummary{});  // not pooled
  facts.pooled = true;
  EXPECT_DOUBLE_EQ(measurement_of(a, facts).pool_wait.max_us, 7'000);
}

// A switchback run's accounts of `blocks` blocks, whose live counts go to `live`.
template <std::size_t blocks>
Accounts switchback_accounts(std::atomic<std::uint64_t> (&live)[blocks]) {
  AccountsShape shape;
  shape.max_blocks = static_cast<int>(blocks);
  shape.block_finished = live;
  return Accounts(shape);
}
Finished in_block(Finished f, int block) {
  f.block = block;
  return f;
}

TEST(Accounts, SwitchbackBlocksCountCompletionsByBlockAndFailuresByConfiguration) {
  std::atomic<std::uint64_t> live[3] = {0, 0, 0};
  Accounts a = switchback_accounts(live);
  a.record(in_block(tx(20 * kSecond, 100), 0), kWindow);
  a.record(in_block(tx(21 * kSecond, 300), 1), kWindow);
  a.record(in_block(tx(22 * kSecond, 500, rolled_back()), 2), kWindow);
  a.record(in_block(tx(23 * kSecond, 70, failed(pg::ErrorClass::kOther)), 1), kWindow);
  a.record(in_block(tx(24 * kSecond, 70), -1), kWindow);  // settling: in no block
  a.record(in_block(tx(2 * kSecond, 70), 0), kWindow);    // warm-up: in no count
  EXPECT_EQ(live[0].load(), 1u);
  EXPECT_EQ(live[1].load(), 1u);
  EXPECT_EQ(live[2].load(), 1u);
  EXPECT_EQ(a.tallies[0].started(), 5u);  // the settling one too

  const BlockTallies t = block_tallies(a);
  EXPECT_EQ(t.finished, (std::vector<std::uint64_t>{1, 1, 1}));
  ASSERT_EQ(t.block_latency.size(), 3u);
  EXPECT_DOUBLE_EQ(t.block_latency[1].max_us, 300);
  EXPECT_EQ(t.counted[0], 2u);  // blocks 0 and 2: the reference
  EXPECT_EQ(t.counted[1], 1u);
  EXPECT_DOUBLE_EQ(t.latency[0].max_us, 500);
  EXPECT_EQ(t.failed[0], 0u);
  EXPECT_EQ(t.failed[1], 1u);
}

// A look during a switchback run reads each block's latency from what the workers published:
// each publication copies the blocks recorded into since the last one, whole.
TEST(Accounts, APublicationCopiesTheBlocksRecordedSinceTheLastOne) {
  std::atomic<std::uint64_t> live[4] = {0, 0, 0, 0};
  Accounts a = switchback_accounts(live);
  std::vector<Histogram> published(4);
  a.record(in_block(tx(20 * kSecond, 100), 0), kWindow);
  a.record(in_block(tx(21 * kSecond, 300), 1), kWindow);
  a.publish_blocks(published);
  EXPECT_EQ(published[0].count(), 1u);
  EXPECT_EQ(published[1].count(), 1u);
  EXPECT_EQ(published[2].count(), 0u);

  a.record(in_block(tx(22 * kSecond, 900), 1), kWindow);
  a.record(in_block(tx(23 * kSecond, 50), 2), kWindow);
  published[0].clear();  // not recorded into since: left as it was
  a.publish_blocks(published);
  EXPECT_EQ(published[0].count(), 0u);
  EXPECT_EQ(published[1].count(), 2u);  // the block's whole latency, not the increment
  EXPECT_EQ(published[1].max(), 900);
  EXPECT_EQ(published[2].count(), 1u);
  EXPECT_EQ(published[3].count(), 0u);

  a.publish_blocks(published);  // nothing new: nothing copied
  EXPECT_EQ(published[0].count(), 0u);
  a.record(in_block(tx(24 * kSecond, 70), -1), kWindow);  // settling: in no block
  a.publish_blocks(published);
  EXPECT_EQ(published[0].count(), 0u);
  EXPECT_EQ(published[3].count(), 0u);
}

TEST(Accounts, CompletionsPerMinuteOfTheWindowAndWholeMinutesOnly) {
  AccountsShape shape;
  shape.types = 2;
  Accounts a(shape);
  const Window w{0, 150 * kSecond};
  a.record(tx(10 * kSecond, 100, committed(), 0), w);
  a.record(tx(59 * kSecond, 100, rolled_back(), 1), w);
  a.record(tx(61 * kSecond, 100, committed(), 1), w);
  a.record(tx(62 * kSecond, 100, failed(pg::ErrorClass::kOther), 1), w);  // no completion
  a.record(tx(130 * kSecond, 100, committed(), 0), w);                    // the partial minute
  ASSERT_EQ(a.per_minute.size(), 3u);
  EXPECT_EQ(a.per_minute[0], (std::vector<std::uint64_t>{1, 1}));
  EXPECT_EQ(a.per_minute[1], (std::vector<std::uint64_t>{0, 1}));

  a.window_end = w.end;
  RunFacts facts;
  const results::Measurement m = measurement_of(a, facts);
  workload::RunCounts run;
  add_run_counts(a, m, 0, run);
  ASSERT_EQ(run.per_minute.size(), 2u);  // 150 s: two whole minutes
  EXPECT_EQ(run.per_minute[1], (std::vector<std::uint64_t>{0, 1}));
}

TEST(Accounts, KeyingAndThinkTimesCountPerTypeInsideTheWindowUnlessCutShort) {
  Accounts a(AccountsShape{});
  a.record_wait(Wait::kKeying, 0, 5 * kSecond, 1'100, kWindow, false);  // warm-up
  a.record_wait(Wait::kKeying, 0, 20 * kSecond, 2'050, kWindow, false);
  a.record_wait(Wait::kThink, 1, 30 * kSecond, 3'010, kWindow, false);
  a.record_wait(Wait::kThink, 1, 69 * kSecond, 400, kWindow, true);  // the end cut it
  ASSERT_EQ(a.waits.size(), 2u);
  EXPECT_EQ(a.waits[0].keyings, 1u);
  EXPECT_EQ(a.waits[0].keying_us, 2'050);
  EXPECT_EQ(a.waits[0].thinks, 0u);
  EXPECT_EQ(a.waits[1].thinks, 1u);
  EXPECT_EQ(a.waits[1].think_us, 3'010);
  Accounts b(AccountsShape{});
  b.merge(a);
  b.merge(a);
  EXPECT_EQ(b.waits[1].think_us, 6'020);
}

TEST(Accounts, InFlightAtTheEndIsReportedNotCounted) {
  AccountsShape shape;
  shape.types = 2;
  Accounts a(shape);
  a.record_in_flight(0, 0, kWindow);                      // between transactions
  a.record_in_flight(kWindow.end, 0, kWindow);            // scheduled at the end: not begun
  a.record_in_flight(kWindow.end - 3'000, 1, kWindow);    // under way 3 ms
  a.record_in_flight(kWindow.end - 900'000, 1, kWindow);  // the longest
  EXPECT_EQ(a.in_flight_at_end, 2u);
  EXPECT_EQ(a.in_flight_by_type, (std::vector<std::uint64_t>{0, 2}));
  EXPECT_EQ(a.in_flight_longest_us, 900'000);
  EXPECT_EQ(a.tallies[1].started(), 0u);
}

TEST(Accounts, ProbeCommitsAreJudgedAgainstTheReads) {
  Accounts a(AccountsShape{});
  const ProbeRead first{100, 10 * kSecond, 10 * kSecond + 500};
  const ProbeRead last{200, 70 * kSecond, 70 * kSecond + 500};
  auto commit = [&](std::int64_t started, std::int64_t ended, bool undecided = false) {
    a.record_probe_commit(started, ended, kWindow, first.began, first.ended, undecided);
  };
  commit(8 * kSecond, 9 * kSecond);                // before the first read began
  commit(8 * kSecond, 9 * kSecond, true);          // also when judged after the run
  commit(9 * kSecond, first.began);                // ended as the first read began
  commit(9 * kSecond, 10 * kSecond + 100);         // in flight at the first read
  commit(20 * kSecond, 21 * kSecond);              // between the reads for sure
  commit(first.ended, 22 * kSecond);               // began as the first read ended: sure
  commit(first.ended - 1, 23 * kSecond);           // began while it was read: in flight
  commit(69 * kSecond, 70 * kSecond + 100, true);  // near the end: judged after the run
  commit(69 * kSecond, 69 * kSecond + 1, true);    // near the end, inside
  EXPECT_EQ(a.probe_sure, 2u);
  EXPECT_EQ(a.probe_in_flight, 2u);
  EXPECT_EQ(a.probe_pending.size(), 2u);
  // Not read yet: every commit waits for the reads.
  a.record_probe_commit(11 * kSecond, 12 * kSecond, kWindow, 0, 0, false);
  EXPECT_EQ(a.probe_pending.size(), 3u);

  workload::RunCounts run;
  judge_pending_probes(a, first, last, run);
  EXPECT_EQ(run.probe_sure, 4u);       // 20 s, 22 s, 69 s, 11 s
  EXPECT_EQ(run.probe_in_flight, 3u);  // two at the first read, one at the last
}

// Each type over time: completions, failures and the p90 of each interval, the workers'
// merged; the last interval ends with the window, and an interval nothing ended in is zero.
TEST(Accounts, EachTypeOverTimeIsCountedPerIntervalAndMerged) {
  AccountsShape shape;
  shape.types = 2;
  shape.interval_us = 10 * kSecond;
  shape.interval_count = 4;  // 35 s: the last one 5 s
  Accounts one(shape), two(shape);
  ASSERT_EQ(one.intervals.size(), 4u);  // allocated before the clock starts
  const Window w{0, 35 * kSecond};
  for (int i = 0; i < 9; ++i) one.record(tx(1 * kSecond + i, 1'000), w);  // first interval
  one.record(tx(2 * kSecond, 20'000), w);                                 // its slowest tenth
  two.record(tx(12 * kSecond, 500, committed(), 1), w);
  two.record(tx(13 * kSecond, 500, failed(pg::ErrorClass::kSerialization), 1), w);
  two.record(tx(31 * kSecond, 700, rolled_back(), 0), w);  // the last, 5 s interval
  one.window_end = two.window_end = w.end;
  Accounts merged(shape);
  merged.merge(one);
  merged.merge(two);
  RunFacts facts;
  facts.type_names = {"new_order", "payment"};
  const results::Measurement m = measurement_of(merged, facts);
  EXPECT_EQ(m.type_series_interval_s, 10);
  ASSERT_EQ(m.type_series.size(), 2u);
  const results::TypeSeries& no = m.type_series[0];
  const results::TypeSeries& pay = m.type_series[1];
  EXPECT_EQ(no.name, "new_order");
  EXPECT_EQ(no.finished, (std::vector<std::uint64_t>{10, 0, 0, 1}));
  EXPECT_EQ(pay.finished, (std::vector<std::uint64_t>{0, 1, 0, 0}));
  EXPECT_EQ(pay.failed, (std::vector<std::uint64_t>{0, 1, 0, 0}));
  // The coarse histogram reports a bucket's midpoint: within 6.3% of the value.
  EXPECT_NEAR(no.p90_us[0], 1'000, 63);
  EXPECT_EQ(no.p90_us[1], 0);
  EXPECT_NEAR(no.p90_us[3], 700, 45);
  EXPECT_EQ(results::type_series_seconds(m, 3), 5);
  EXPECT_EQ(results::type_series_seconds(m, 4), 0);

  // A workload of one type keeps no series: its per-second TPS says the same.
  AccountsShape single;
  single.interval_us = 10 * kSecond;
  Accounts alone(single);
  alone.record(tx(1 * kSecond, 1'000), w);
  alone.window_end = w.end;
  EXPECT_TRUE(measurement_of(alone, RunFacts{}).type_series.empty());
}

// Intervals of at most 30 s (the spec's 5.6.3), at most 60 of them up to half an hour.
TEST(TypeSeries, IntervalsAreShortAndFew) {
  EXPECT_EQ(results::type_series_interval_s(10), 1);
  EXPECT_EQ(results::type_series_interval_s(60), 1);
  EXPECT_EQ(results::type_series_interval_s(61), 2);
  EXPECT_EQ(results::type_series_interval_s(300), 5);
  EXPECT_EQ(results::type_series_interval_s(600), 10);
  EXPECT_EQ(results::type_series_interval_s(1800), 30);
  EXPECT_EQ(results::type_series_interval_s(7200), 30);
}

// Two workers' accounts merge into one Measurement: sums, the latest window end, the longest
// in-flight transaction, names by type.
TEST(Accounts, WorkersMergeIntoTheMeasurement) {
  AccountsShape shape;
  shape.types = 2;
  shape.pooled = true;
  Accounts one(shape), two(shape);
  one.record(tx(20 * kSecond, 100, committed(1), 0), kWindow);
  one.record(tx(21 * kSecond, 40, rolled_back(), 1), kWindow);
  two.record(tx(22 * kSecond, 120, committed(), 1), kWindow);
  two.record(tx(23 * kSecond, 10, failed(pg::ErrorClass::kSerialization, 2), 0), kWindow);
  two.record(tx(24 * kSecond, 10, failed(pg::ErrorClass::kSerialization), 1), kWindow);
  one.connect_time.record(2'000);
  two.connect_time.record(3'000);
  one.reconnects = 1;
  two.reconnects = 2;
  one.window_end = 69 * kSecond;
  two.window_end = kWindow.end;
  one.record_in_flight(kWindow.end - 500, 0, kWindow);
  two.record_in_flight(kWindow.end - 700, 1, kWindow);
  one.counters = {1, 2};
  two.counters = {10, 20, 30};
  one.record_probe_commit(20 * kSecond, 21 * kSecond, kWindow, 0, 0, false);  // not read yet
  two.record_probe_commit(22 * kSecond, 23 * kSecond, kWindow, 0, 0, false);

  Accounts merged(shape);
  merged.merge(one);
  merged.merge(two);
  EXPECT_EQ(merged.probe_pending.size(), 2u);
  RunFacts facts;
  facts.type_names = {"new_order"};  // the second type has no name: the workload's
  facts.workload_name = "tpcc-lite";
  facts.measure_start = kWindow.start;
  facts.pooled = true;
  facts.clients = 8;
  facts.connected = 2;  // pool connections
  facts.refused = 1;
  const results::Measurement m = measurement_of(merged, facts);
  EXPECT_DOUBLE_EQ(m.duration_s, 60);
  EXPECT_EQ(m.committed, 2u);
  EXPECT_EQ(m.rolled_back, 1u);
  EXPECT_EQ(m.failed, 2u);
  EXPECT_EQ(m.retries, 3u);
  EXPECT_DOUBLE_EQ(m.tps, 3.0 / 60);
  EXPECT_EQ(m.reconnects, 3u);
  EXPECT_EQ(m.in_flight_at_end, 2u);
  EXPECT_DOUBLE_EQ(m.in_flight_longest_us, 700);
  EXPECT_DOUBLE_EQ(m.latency.max_us, 120);
  EXPECT_DOUBLE_EQ(m.latency.p50_us, 100);
  EXPECT_DOUBLE_EQ(m.connect_time.max_us, 3'000);
  EXPECT_EQ(m.failures_by_class,
            (std::map<std::string, std::uint64_t>{{"serialization failure", 2}}));
  ASSERT_EQ(m.by_type.size(), 2u);
  EXPECT_EQ(m.by_type[0].name, "new_order");
  EXPECT_EQ(m.by_type[1].name, "tpcc-lite");
  EXPECT_EQ(m.by_type[1].committed, 1u);
  EXPECT_EQ(m.by_type[1].rolled_back, 1u);
  EXPECT_EQ(m.clients_requested, 8);
  EXPECT_EQ(m.clients_connected, 8);  // pooled: every client runs while any connection does
  EXPECT_EQ(m.connections_refused, 1);

  workload::RunCounts run;
  add_run_counts(merged, m, 3, run);
  EXPECT_EQ(run.counters, (std::vector<std::uint64_t>{11, 22, 30}));
  EXPECT_EQ(run.in_flight_by_type, (std::vector<std::uint64_t>{1, 1}));
  EXPECT_EQ(run.by_type, m.by_type);
  EXPECT_DOUBLE_EQ(run.duration_s, 60);
}

TEST(Accounts, ClientsConnectedWithoutAPoolAreThoseThatConnected) {
  Accounts a(AccountsShape{});
  RunFacts facts;
  facts.clients = 8;
  facts.connected = 5;
  EXPECT_EQ(measurement_of(a, facts).clients_connected, 5);
  facts.pooled = true;
  facts.connected = 0;
  EXPECT_EQ(measurement_of(a, facts).clients_connected, 0);
}

// A session that fails its statement as planned and completes at once.
class PlannedSession final : public workload::Session {
 public:
  std::deque<std::optional<pg::ErrorClass>> plan;  // per execute(): nullopt = success
  Task<pg::Result> execute(const std::string& statement, const pg::Params&) override {
    std::optional<pg::ErrorClass> e;
    if (!plan.empty()) {
      e = plan.front();
      plan.pop_front();
    }
    if (e) throw pg::Error(*e, "40001", "planned failure", statement);
    co_return pg::Result();
  }
  Task<pg::Result> query(const std::string&) override { co_return pg::Result(); }
};

class OneStatement final : public workload::Client {
 public:
  std::size_t choose() override { return 0; }
  Task<workload::TxStatus> execute(workload::Session& s) override {
    const std::string name = "stmt";  // named: not a temporary inside co_await (GCC 12)
    pg::Params none;
    co_await s.execute(name, std::move(none));
    co_return workload::TxStatus::kCommitted;
  }
};

// Serialization failures and deadlocks are retried up to max_tries: the last try's outcome is
// counted once, its retries beside it, a give-up as a failure of its class.
TEST(Accounts, RetriedTransactionsCountOnceWithTheirRetries) {
  auto run = [](std::deque<std::optional<pg::ErrorClass>> plan, int max_tries) {
    PlannedSession s;
    s.plan = std::move(plan);
    OneStatement c;
    RetryPolicy policy;
    policy.max_tries = max_tries;
    policy.backoff_base_us = 0;  // no backoff: nothing to wait for
    Random rng(1);
    return run_synchronously(run_with_retries(c, s, policy, rng));
  };
  const auto kSer = pg::ErrorClass::kSerialization;
  const auto kDead = pg::ErrorClass::kDeadlock;
  Accounts a(AccountsShape{});
  a.record(tx(20 * kSecond, 100, run({kSer, kDead, std::nullopt}, 3)), kWindow);
  a.record(tx(21 * kSecond, 100, run({kSer, kDead, std::nullopt}, 2)), kWindow);
  a.record(tx(22 * kSecond, 100, run({kDead}, 1)), kWindow);
  a.window_end = kWindow.end;
  RunFacts facts;
  facts.measure_start = kWindow.start;
  const results::Measurement m = measurement_of(a, facts);
  EXPECT_EQ(m.committed, 1u);
  EXPECT_EQ(m.failed, 2u);
  EXPECT_EQ(m.retries, 3u);  // 2 before the commit, 1 before giving up at max_tries 2
  EXPECT_EQ(m.failures_by_class,
            (std::map<std::string, std::uint64_t>{{"deadlock", 2}}));  // the last try's class
}

TEST(SecondSeries, WarmUpSecondsAreShownButNotInTheSeries) {
  const std::int64_t t0 = 1'000 * kSecond;
  SecondSeries s(t0, t0 + 2 * kSecond);  // two seconds of warm-up
  Histogram h;
  for (int i = 0; i < 50; ++i) h.record(100);
  SecondSeries::Second first = s.tick(t0 + kSecond, h, 3, false);
  EXPECT_TRUE(first.tick.warmup);
  EXPECT_DOUBLE_EQ(first.tick.tps, 50);
  EXPECT_DOUBLE_EQ(first.tick.failed_per_s, 3);
  EXPECT_EQ(first.failed_shown, 3u);
  s.tick(t0 + 2 * kSecond, h, 4, false);  // the warm-up's last instant
  EXPECT_TRUE(s.tps_per_second.empty());

  // The next tick came 2 s later (a slow hook): the count is divided by the time that passed.
  for (int i = 0; i < 50; ++i) h.record(120);
  SecondSeries::Second late = s.tick(t0 + 4 * kSecond, h, 10, false);
  EXPECT_FALSE(late.tick.warmup);
  EXPECT_DOUBLE_EQ(late.tick.tps, 50);
  EXPECT_DOUBLE_EQ(late.tick.failed_per_s, 3);
  EXPECT_EQ(late.failed_shown, 6u);  // the window's own, as the report counts them
  EXPECT_DOUBLE_EQ(late.tick.elapsed_s, 4);
  EXPECT_EQ(s.tps_per_second, std::vector<double>{50});
  EXPECT_EQ(s.p99_per_second, std::vector<double>{120});

  // A stop's tick is shown, not kept: a part second is no rate.
  Histogram empty;
  s.tick(t0 + 4 * kSecond + 300'000, empty, 10, true);
  EXPECT_EQ(s.tps_per_second.size(), 1u);
  s.tick(t0 + 5 * kSecond + 300'000, empty, 10, false);
  EXPECT_EQ(s.tps_per_second, (std::vector<double>{50, 0}));
  EXPECT_EQ(s.p99_per_second, (std::vector<double>{120, 0}));
}

}  // namespace
}  // namespace pgslow::driver
