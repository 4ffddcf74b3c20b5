#include "driver/outcome.h"

#include <gtest/gtest.h>

#include <deque>

namespace pgslow::driver {
namespace {

// A Session that completes at once and fails the statements it is told to.
class FakeSession final : public workload::Session {
 public:
  std::deque<std::optional<pg::ErrorClass>> plan;  // per execute(): nullopt = success
  std::vector<std::string> log;
  Task<pg::Result> execute(const std::string& statement, const pg::Params&) override {
    log.push_back(statement);
    std::optional<pg::ErrorClass> e;
    if (!plan.empty()) {
      e = plan.front();
      plan.pop_front();
    }
    if (e) throw pg::Error(*e, "40001", "planned failure", statement);
    co_return pg::Result();
  }
  Task<pg::Result> query(const std::string& sql) override {
    log.push_back(sql);
    co_return pg::Result();
  }
};

class OneStatementClient final : public workload::Client {
 public:
  workload::TxStatus status = workload::TxStatus::kCommitted;
  std::size_t choose() override { return 0; }
  Task<workload::TxStatus> execute(workload::Session& s) override {
    // Named, not temporaries inside co_await (GCC 12).
    const std::string name = "stmt";
    pg::Params none;
    co_await s.execute(name, std::move(none));
    co_return status;
  }
};

Outcome run(FakeSession& s, OneStatementClient& c, int max_tries, const bool* closed = nullptr) {
  RetryPolicy policy;
  policy.max_tries = max_tries;
  policy.backoff_base_us = 1;  // the fake session sleeps for real: keep the test fast
  policy.backoff_cap_us = 8;
  policy.window_closed = closed;
  Random rng(7);
  return run_synchronously(run_with_retries(c, s, policy, rng));
}

TEST(Outcome, SerializationFailureIsRetriedUpToMaxTries) {
  FakeSession s;
  OneStatementClient c;
  s.plan = {pg::ErrorClass::kSerialization, pg::ErrorClass::kDeadlock, std::nullopt};
  Outcome o = run(s, c, 3);
  EXPECT_EQ(o.kind, Outcome::Kind::kCommitted);
  EXPECT_EQ(o.retries, 2);
  EXPECT_EQ(s.log, (std::vector<std::string>{"stmt", "ROLLBACK", "stmt", "ROLLBACK", "stmt"}));
}

TEST(Outcome, UntilCommitRetriesPastAnyCountAndTimesTheRetries) {
  FakeSession s;
  OneStatementClient c;
  for (int i = 0; i < 40; ++i) s.plan.push_back(pg::ErrorClass::kSerialization);
  s.plan.push_back(std::nullopt);
  Outcome o = run(s, c, RetryPolicy::kUntilCommit);
  EXPECT_EQ(o.kind, Outcome::Kind::kCommitted);
  EXPECT_EQ(o.retries, 40);
  EXPECT_GT(o.retry_us, 0);
  EXPECT_FALSE(o.window_closed);
}

TEST(Outcome, UntilCommitStopsWhenTheWindowCloses) {
  FakeSession s;
  OneStatementClient c;
  s.plan = {pg::ErrorClass::kSerialization, std::nullopt};
  const bool closed = true;
  Outcome o = run(s, c, RetryPolicy::kUntilCommit, &closed);
  EXPECT_EQ(o.kind, Outcome::Kind::kFailed);
  EXPECT_TRUE(o.window_closed);  // in flight at the end, not a failure of the window
  EXPECT_EQ(o.retries, 0);
  EXPECT_EQ(s.log, (std::vector<std::string>{"stmt", "ROLLBACK"}));
}

TEST(Outcome, BackoffIsJitteredBelowADoublingCeilingAndTheCap) {
  RetryPolicy p;
  p.backoff_base_us = 1'000;
  p.backoff_cap_us = 100'000;
  Random rng(3);
  for (int retry = 1; retry <= 40; ++retry) {
    const std::int64_t ceiling =
        std::min<std::int64_t>(100'000, 1'000LL << std::min(retry - 1, 30));
    std::int64_t most = 0, least = INT64_MAX;
    for (int i = 0; i < 2000; ++i) {
      const std::int64_t b = backoff_us(p, retry, rng);
      ASSERT_GE(b, 0);
      ASSERT_LE(b, ceiling) << "retry " << retry;
      most = std::max(most, b);
      least = std::min(least, b);
    }
    // Spread over the whole range: jitter, not a fixed wait.
    EXPECT_GT(most, ceiling * 9 / 10) << "retry " << retry;
    EXPECT_LT(least, ceiling / 10 + 1) << "retry " << retry;
  }
}

TEST(Outcome, NoRetryByDefaultLikePgbench) {
  FakeSession s;
  OneStatementClient c;
  s.plan = {pg::ErrorClass::kSerialization};
  Outcome o = run(s, c, 1);
  EXPECT_EQ(o.kind, Outcome::Kind::kFailed);
  EXPECT_EQ(o.error_class, pg::ErrorClass::kSerialization);
  EXPECT_EQ(o.retries, 0);
  EXPECT_FALSE(o.connection_lost);
  EXPECT_EQ(s.log.back(), "ROLLBACK");
}

TEST(Outcome, OtherErrorsAreNotRetried) {
  FakeSession s;
  OneStatementClient c;
  s.plan = {pg::ErrorClass::kQueryCanceled};
  Outcome o = run(s, c, 5);
  EXPECT_EQ(o.kind, Outcome::Kind::kFailed);
  EXPECT_EQ(o.error_class, pg::ErrorClass::kQueryCanceled);
  EXPECT_EQ(o.retries, 0);
}

TEST(Outcome, LostConnectionFailsWithoutRollback) {
  FakeSession s;
  OneStatementClient c;
  s.plan = {pg::ErrorClass::kConnectionLost};
  Outcome o = run(s, c, 3);
  EXPECT_EQ(o.kind, Outcome::Kind::kFailed);
  EXPECT_TRUE(o.connection_lost);
  EXPECT_EQ(s.log, std::vector<std::string>{"stmt"});
}

TEST(Outcome, RolledBackByDesignIsNotAFailure) {
  FakeSession s;
  OneStatementClient c;
  c.status = workload::TxStatus::kRolledBack;
  EXPECT_EQ(run(s, c, 1).kind, Outcome::Kind::kRolledBack);
}

TEST(Tally, StartedIsCommittedPlusRolledBackPlusFailed) {
  Tally t, u;
  Outcome ok;
  ok.retries = 1;
  Outcome rb;
  rb.kind = Outcome::Kind::kRolledBack;
  Outcome bad;
  bad.kind = Outcome::Kind::kFailed;
  bad.error_class = pg::ErrorClass::kDeadlock;
  ok.retry_us = 50;
  t.add(ok, 100);
  t.add(rb, 200);
  u.add(bad, 999999);
  u.add(ok, 300);
  t.merge(u);
  EXPECT_EQ(t.committed, 2u);
  EXPECT_EQ(t.rolled_back, 1u);
  EXPECT_EQ(t.failed, 1u);
  EXPECT_EQ(t.started(), 4u);
  EXPECT_EQ(t.retries, 2u);
  EXPECT_EQ(t.retry_us, 100);
  EXPECT_EQ(t.latency.count(), 3u);  // failed transactions have no latency
  EXPECT_EQ(t.latency.max(), 300);
  std::map<std::string, std::uint64_t> by_class;
  t.add_failures_to(by_class);
  ASSERT_EQ(by_class.size(), 1u);
  EXPECT_EQ(by_class.begin()->first, std::string(pg::to_string(pg::ErrorClass::kDeadlock)));
  EXPECT_EQ(by_class.begin()->second, 1u);
  auto r = t.result("tpcb");
  EXPECT_EQ(r.name, "tpcb");
  EXPECT_EQ(r.committed, 2u);
  EXPECT_EQ(r.retry_time_us, 100.0);
}

}  // namespace
}  // namespace pgslow::driver
