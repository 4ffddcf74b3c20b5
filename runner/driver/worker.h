#pragma once
// One worker thread of the driver: an epoll event loop multiplexing its clients'
// connections (pgbench's shape), the clients' transaction loops as coroutines, timers for
// think times and fixed-rate arrivals, and the per-worker connection pool. Counters are kept
// per worker (no lock on the hot path) and published for the progress line a few times a
// second; the main thread merges the rest after join (driver.cpp).

#include <atomic>
#include <cstdint>
#include <deque>
#include <latch>
#include <memory>
#include <mutex>
#include <optional>
#include <queue>
#include <string>
#include <vector>

#include "common/clock.h"
#include "common/random.h"
#include "driver/driver.h"
#include "driver/histogram.h"
#include "driver/outcome.h"
#include "driver/session.h"

namespace pgslow::driver {

struct ClientState {
  std::unique_ptr<workload::Client> client;
  std::unique_ptr<DriverSession> session;
  std::unique_ptr<ConnSlot> own;  // its connection (not in pool mode)
  Random schedule{1};
  std::int64_t next_arrival = 0;
  Task<void> loop;
};

// What a worker publishes for the progress line (under its mutex, a few times a second).
struct Published {
  std::mutex mu;
  Histogram interval;  // completed transactions since the last collection
  std::uint64_t failed = 0;
};

// Settings and cross-thread state of one run.
struct Shared {
  const workload::Workload* workload;
  std::string conninfo;
  DriverOptions options;
  std::vector<workload::StatementDef> statements;
  std::size_t types = 1;
  std::latch connected;
  std::atomic<std::int64_t> start_us{0};    // 0 until the main thread starts the clock; -1: abort
  const std::atomic<bool>* stop = nullptr;  // the caller's (Ctrl-C)
  std::atomic<bool> abort{false};           // the run's own: the main thread gave up
  explicit Shared(int workers) : connected(workers) {}
  bool stopping() const { return abort.load() || (stop != nullptr && stop->load()); }
};

class Worker final : public EventLoop {
 public:
  Worker(Shared& shared, int index) : shared_(shared), index_(index) {
    tallies_.resize(shared.types);
  }
  ~Worker();
  Worker(const Worker&) = delete;
  Worker& operator=(const Worker&) = delete;

  void add_client(std::unique_ptr<workload::Client> c, int global_index);
  void add_pool_connection() { pool_.push_back(std::make_unique<ConnSlot>()); }

  void run();  // the thread body

  // Results, read by the main thread after join.
  std::vector<Tally> tallies_;
  std::vector<std::uint64_t> counters_;  // Client::take_counters() of measured transactions
  std::vector<std::uint64_t> unmeasured_counters_;  // the others: dropped
  Histogram schedule_lag_;
  Histogram pool_wait_;
  std::uint64_t reconnects_ = 0;
  int connected_ = 0;
  int refused_ = 0;
  std::optional<pg::Error> connect_error_;  // the first connection failure
  std::exception_ptr fatal_;                // a bug in a workload: ends the run
  std::int64_t window_end_ = 0;             // when this worker stopped counting
  Published published_;
  int client_count() const { return static_cast<int>(clients_.size()); }

  void watch_write(ConnSlot* s) override;

 private:
  struct Timer {
    std::int64_t at;
    std::coroutine_handle<> h;
    bool operator>(const Timer& o) const { return at > o.at; }
  };
  struct SleepAwaiter {
    Worker* w;
    std::int64_t at;
    bool await_ready() const noexcept { return now_us() >= at; }
    void await_suspend(std::coroutine_handle<> h) { w->timers_.push({at, h}); }
    void await_resume() const noexcept {}
  };
  struct AcquireAwaiter {
    Worker* w;
    ConnSlot* got = nullptr;
    bool await_ready() noexcept {
      if (w->free_.empty()) return false;
      got = w->free_.back();
      w->free_.pop_back();
      return true;
    }
    void await_suspend(std::coroutine_handle<> h) { w->pool_waiters_.push_back({h, &got}); }
    ConnSlot* await_resume() const noexcept { return got; }  // nullptr: the run ended
  };

  bool open_connection(ConnSlot& slot);  // blocking connect + prepare; false on failure
  void close_connection(ConnSlot& slot);
  void release(ConnSlot* slot);
  Task<void> client_loop(ClientState& c);
  void on_event(ConnSlot* s, std::uint32_t events);
  void deliver(ConnSlot* s);
  void end_window(std::int64_t at);
  void publish(bool force);
  bool measuring_done(std::int64_t now) const { return now >= end_us_; }

  Shared& shared_;
  int index_;
  int epfd_ = -1;
  std::vector<ClientState> clients_;
  std::vector<std::unique_ptr<ConnSlot>> pool_;
  std::vector<ConnSlot*> free_;
  struct PoolWaiter {
    std::coroutine_handle<> h;
    ConnSlot** got;
  };
  std::deque<PoolWaiter> pool_waiters_;
  std::priority_queue<Timer, std::vector<Timer>, std::greater<>> timers_;
  std::vector<std::coroutine_handle<>> ready_;
  int active_ = 0;
  std::int64_t measure_start_ = 0;
  std::int64_t end_us_ = INT64_MAX;
  bool ending_ = false;
  Histogram interval_;
  std::uint64_t interval_failed_ = 0;
  std::int64_t next_publish_ = 0;
};

}  // namespace pgslow::driver
