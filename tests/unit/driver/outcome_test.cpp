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

Outcome run(FakeSession& s, OneStatementClient& c, int max_tries) {
  return run_synchronously(run_with_retries(c, s, max_tries));
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
}

}  // namespace
}  // namespace pgslow::driver
