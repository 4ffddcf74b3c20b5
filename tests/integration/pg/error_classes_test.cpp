// Each error class of pg/error.h, provoked on a real server, arrives with its SQLSTATE and
// class. Concurrency is arranged by watching the server (pg_stat_activity), never by sleeping.

#include <gtest/gtest.h>
#include <poll.h>

#include <thread>
#include <vector>

#include "common/clock.h"
#include "pg/connection.h"
#include "pg/error.h"
#include "tests/support/cluster_fixture.h"

namespace pgslow {
namespace {

using namespace std::chrono_literals;

pg::Connection connect() {
  return pg::Connection::open(testing::conninfo());
}

// Polls `sql` (one boolean value) on `observer` until it is true; fails after 30 s.
void wait_until(pg::Connection& observer, const std::string& sql) {
  const auto deadline = now_us() + 30'000'000;
  while (observer.query_value(sql) != "t") {
    ASSERT_LT(now_us(), deadline) << "timed out waiting until: " << sql;
    std::this_thread::sleep_for(10ms);
  }
}

std::string backend_state_is(int pid, const std::string& condition) {
  return "SELECT count(*) > 0 FROM pg_stat_activity WHERE pid = " + std::to_string(pid) + " AND " +
         condition;
}

// The result of a query sent with send_query, waiting on the socket; throws pg::Error.
void finish(pg::Connection& conn, const std::string& statement) {
  std::optional<pg::Error> failure;
  std::optional<pg::Error> lost;  // the socket closed; a FATAL may still be in the buffer
  for (;;) {
    while (!lost && conn.is_busy()) {
      pollfd p{conn.socket(), POLLIN, 0};
      ::poll(&p, 1, 1000);
      try {
        conn.consume_input();
      } catch (const pg::Error& e) {
        lost = e;
      }
    }
    pg::Result r = conn.next_result();
    if (!r) break;
    try {
      pg::check_result(r, conn.raw(), statement);
    } catch (const pg::Error& e) {
      if (!failure) failure = e;
    }
    if (lost) break;
  }
  if (failure) throw *failure;
  if (lost) throw *lost;
}

void expect_class(const pg::Error& e, pg::ErrorClass cls, const std::string& sqlstate) {
  EXPECT_EQ(e.error_class(), cls) << e.what();
  EXPECT_EQ(e.sqlstate(), sqlstate) << e.what();
  EXPECT_FALSE(e.server_message().empty());
}

class ErrorClasses : public ::testing::Test {
 protected:
  void SetUp() override {
    auto conn = connect();
    conn.exec("DROP TABLE IF EXISTS accounts");
    conn.exec("CREATE TABLE accounts (id int PRIMARY KEY, balance int NOT NULL)");
    conn.exec("INSERT INTO accounts VALUES (1, 100), (2, 100)");
  }
};

TEST_F(ErrorClasses, SerializationFailure40001) {
  auto a = connect();
  auto b = connect();
  a.exec("BEGIN ISOLATION LEVEL SERIALIZABLE");
  a.exec("SELECT balance FROM accounts WHERE id = 1");  // takes a's snapshot
  b.exec("BEGIN ISOLATION LEVEL SERIALIZABLE");
  b.exec("UPDATE accounts SET balance = balance - 10 WHERE id = 1");
  b.exec("COMMIT");
  try {
    a.exec("UPDATE accounts SET balance = balance + 10 WHERE id = 1");
    FAIL() << "the second writer should fail";
  } catch (const pg::Error& e) {
    expect_class(e, pg::ErrorClass::kSerialization, "40001");
    EXPECT_TRUE(pg::is_retryable(e.error_class()));
    EXPECT_NE(e.statement().find("UPDATE accounts"), std::string::npos);
  }
}

TEST_F(ErrorClasses, Deadlock40P01) {
  auto a = connect();
  auto b = connect();
  auto observer = connect();
  for (auto* c : {&a, &b}) c->exec("SET deadlock_timeout = '50ms'");
  a.exec("BEGIN");
  a.exec("UPDATE accounts SET balance = 1 WHERE id = 1");
  b.exec("BEGIN");
  b.exec("UPDATE accounts SET balance = 2 WHERE id = 2");
  // a waits for b's row ...
  a.send_query("UPDATE accounts SET balance = 1 WHERE id = 2");
  wait_until(observer, backend_state_is(a.backend_pid(), "wait_event_type = 'Lock'"));
  // ... and b for a's: one of them is chosen as the deadlock victim.
  b.send_query("UPDATE accounts SET balance = 2 WHERE id = 1");
  std::vector<pg::Error> errors;
  for (auto* c : {&a, &b}) {
    try {
      finish(*c, "UPDATE accounts");
    } catch (const pg::Error& e) {
      errors.push_back(e);
      c->exec("ROLLBACK");  // lets the other one go on
    }
  }
  ASSERT_EQ(errors.size(), 1u);
  expect_class(errors[0], pg::ErrorClass::kDeadlock, "40P01");
  EXPECT_TRUE(pg::is_retryable(errors[0].error_class()));
}

TEST_F(ErrorClasses, AdminShutdown57P01) {
  auto victim = connect();
  auto admin = connect();
  victim.send_query("SELECT pg_sleep(60)");
  wait_until(admin, backend_state_is(victim.backend_pid(),
                                     "state = 'active' AND query LIKE 'SELECT pg_sleep%'"));
  admin.exec("SELECT pg_terminate_backend(" + std::to_string(victim.backend_pid()) + ")");
  try {
    finish(victim, "pg_sleep");
    FAIL() << "the terminated session should fail";
  } catch (const pg::Error& e) {
    expect_class(e, pg::ErrorClass::kConnectionLost, "57P01");
    EXPECT_FALSE(pg::is_retryable(e.error_class()));
  }
}

TEST_F(ErrorClasses, QueryCanceled57014ByStatementTimeout) {
  auto conn = connect();
  conn.exec("SET statement_timeout = '20ms'");
  try {
    conn.exec("SELECT pg_sleep(60)");
    FAIL() << "statement_timeout should cancel the query";
  } catch (const pg::Error& e) {
    expect_class(e, pg::ErrorClass::kQueryCanceled, "57014");
  }
  // The session survives a canceled query.
  conn.exec("RESET statement_timeout");
  EXPECT_EQ(conn.query_value("SELECT 1"), "1");
}

TEST_F(ErrorClasses, QueryCanceled57014ByCancelRequest) {
  auto conn = connect();
  auto observer = connect();
  conn.send_query("SELECT pg_sleep(60)");
  wait_until(observer, backend_state_is(conn.backend_pid(),
                                        "state = 'active' AND query LIKE 'SELECT pg_sleep%'"));
  conn.cancel();
  try {
    finish(conn, "pg_sleep");
    FAIL() << "the cancel request should cancel the query";
  } catch (const pg::Error& e) {
    expect_class(e, pg::ErrorClass::kQueryCanceled, "57014");
  }
}

TEST(ErrorClassesOwnCluster, TooManyConnections53300) {
  // A cluster of its own: max_connections=5 would starve the other tests.
  testing::TemporaryCluster small(
      std::vector<std::pair<std::string, std::string>>{{"max_connections", "5"}});
  std::vector<pg::Connection> open;
  std::optional<pg::Error> refused;
  for (int i = 0; i < 10 && !refused; ++i) {
    try {
      open.push_back(pg::Connection::open(small.get().conninfo()));
    } catch (const pg::Error& e) {
      refused = e;
    }
  }
  ASSERT_TRUE(refused.has_value()) << "10 connections to a server with max_connections=5";
  EXPECT_LE(open.size(), 5u);
  expect_class(*refused, pg::ErrorClass::kTooManyConnections, "53300");
  EXPECT_NE(refused->server_message().find("too many clients"), std::string::npos)
      << refused->server_message();
}

}  // namespace
}  // namespace pgslow
