// The shared pool without a server: FIFO grants across workers, cancellation per worker, and a
// multi-threaded hand-over in which no connection is ever held twice (run under ASan too).

#include "driver/pool.h"

#include <gtest/gtest.h>

#include <atomic>
#include <mutex>
#include <thread>

namespace pgslow::driver {
namespace {

// Records what is posted to it; a worker's inbox stand-in.
class FakeInbox final : public Inbox {
 public:
  void post(std::coroutine_handle<> h) override {
    std::lock_guard lock(mu);
    posted.push_back(h);
    count.fetch_add(1);
  }
  std::mutex mu;
  std::vector<std::coroutine_handle<>> posted;
  std::atomic<int> count{0};
};

TEST(SharedPool, GrantsFreeConnectionsThenQueuesFifoAcrossWorkers) {
  SharedPool pool(1);
  pool.add_free(&pool.slot(0));
  FakeInbox a, b;
  ConnSlot* got_a = nullptr;
  ConnSlot* got_b1 = nullptr;
  ConnSlot* got_b2 = nullptr;
  std::int64_t at_a = 0, at_b1 = 0, at_b2 = 0;
  ASSERT_EQ(pool.acquire_or_wait({&a, std::noop_coroutine(), &got_a, &at_a}), &pool.slot(0));
  EXPECT_EQ(pool.acquire_or_wait({&b, std::noop_coroutine(), &got_b1, &at_b1}), nullptr);
  EXPECT_EQ(pool.acquire_or_wait({&a, std::noop_coroutine(), &got_a, &at_a}), nullptr);
  EXPECT_EQ(pool.acquire_or_wait({&b, std::noop_coroutine(), &got_b2, &at_b2}), nullptr);
  EXPECT_EQ(pool.waiting_count(), 3u);

  // The first waiter (on worker b) gets it, with the release time as its grant time.
  pool.release(&pool.slot(0), 42);
  EXPECT_EQ(got_b1, &pool.slot(0));
  EXPECT_EQ(at_b1, 42);
  EXPECT_EQ(b.count.load(), 1);
  EXPECT_EQ(a.count.load(), 0);
  // Then the second in line, on worker a.
  pool.release(&pool.slot(0), 43);
  EXPECT_EQ(got_a, &pool.slot(0));
  EXPECT_EQ(a.count.load(), 1);
  EXPECT_EQ(got_b2, nullptr);
  EXPECT_EQ(pool.free_count(), 0u);
}

TEST(SharedPool, CancelResumesOnlyThatWorkersWaitersWithNoConnection) {
  SharedPool pool(1);
  pool.add_free(&pool.slot(0));
  FakeInbox a, b;
  ConnSlot* held = nullptr;
  ConnSlot* got_a = &pool.slot(0);  // must be cleared by the cancel
  ConnSlot* got_b = nullptr;
  std::int64_t t = 0;
  pool.acquire_or_wait({&a, std::noop_coroutine(), &held, &t});
  pool.acquire_or_wait({&a, std::noop_coroutine(), &got_a, &t});
  pool.acquire_or_wait({&b, std::noop_coroutine(), &got_b, &t});
  EXPECT_EQ(pool.cancel_waiters(&a).size(), 1u);
  EXPECT_EQ(got_a, nullptr);
  EXPECT_EQ(pool.waiting_count(), 1u);
  pool.release(&pool.slot(0), 1);  // goes to b, not to a's cancelled waiter
  EXPECT_EQ(got_b, &pool.slot(0));
  EXPECT_EQ(a.count.load(), 0);
}

// Four threads share a pool of two connections; each grant is exclusive.
TEST(SharedPool, HandsConnectionsAcrossThreadsExclusively) {
  constexpr int kThreads = 4, kRounds = 2000, kSize = 2;
  SharedPool pool(kSize);
  std::atomic<int> holders[kSize] = {};
  for (int i = 0; i < kSize; ++i) pool.add_free(&pool.slot(i));
  std::atomic<int> violations{0};
  auto body = [&] {
    FakeInbox inbox;
    for (int r = 0; r < kRounds; ++r) {
      ConnSlot* got = nullptr;
      std::int64_t at = 0;
      const int seen = inbox.count.load();
      ConnSlot* now = pool.acquire_or_wait({&inbox, std::noop_coroutine(), &got, &at});
      if (now == nullptr) {
        while (inbox.count.load() == seen) std::this_thread::yield();
        std::lock_guard lock(inbox.mu);  // the grant's writes happen before the post
        now = got;
      }
      ASSERT_NE(now, nullptr);
      const int index = now == &pool.slot(0) ? 0 : 1;
      if (holders[index].fetch_add(1) != 0) violations.fetch_add(1);
      holders[index].fetch_sub(1);
      pool.release(now, r);
    }
  };
  std::vector<std::thread> threads;
  for (int i = 0; i < kThreads; ++i) threads.emplace_back(body);
  for (auto& t : threads) t.join();
  EXPECT_EQ(violations.load(), 0);
  EXPECT_EQ(pool.free_count(), static_cast<std::size_t>(kSize));
  EXPECT_EQ(pool.waiting_count(), 0u);
}

}  // namespace
}  // namespace pgslow::driver

namespace pgslow::driver {
namespace {

TEST(SimpleProtocol, InlinesParametersAsQuotedLiterals) {
  EXPECT_EQ(inline_parameters("SELECT a FROM t WHERE id = $1 AND x = $2",
                              pg::make_params(std::string("42"), std::string("it's"))),
            "SELECT a FROM t WHERE id = '42' AND x = 'it''s'");
  pg::Params p(10);
  p[0] = "1";
  p[9] = "ten";
  EXPECT_EQ(inline_parameters("$1 $10 $2 $11 cost$", p), "'1' 'ten' NULL $11 cost$");
}

TEST(SimpleProtocol, ParsesTheProtocolNames) {
  EXPECT_EQ(parse_protocol("simple"), Protocol::kSimple);
  EXPECT_EQ(parse_protocol("extended"), Protocol::kExtended);
  EXPECT_EQ(parse_protocol("prepared"), Protocol::kPrepared);
  EXPECT_FALSE(parse_protocol("fast"));
}

}  // namespace
}  // namespace pgslow::driver
