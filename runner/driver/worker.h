#pragma once
// One worker thread of the driver: an epoll event loop multiplexing its clients'
// connections (pgbench's shape), the clients' transaction loops as coroutines, timers for
// think times and fixed-rate arrivals; pooled clients share one SharedPool (pool.h) across
// all workers. Counters are kept
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
#include "driver/pool.h"
#include "driver/session.h"

namespace pgslow::driver {

struct ClientState {
  std::unique_ptr<workload::Client> client;
  std::unique_ptr<DriverSession> session;
  std::unique_ptr<ConnSlot> own;  // its connection (not in pool mode)
  Random schedule{1};
  Random backoff{1};
  int index = 0;  // among all the run's clients: its place in the ramp  // retry backoffs: a stream
                  // of their own keeps the arrivals as they were
  std::int64_t next_arrival = 0;
  // The scheduled start of the transaction under way, and its type; 0 between transactions.
  std::int64_t in_flight_since = 0;
  std::size_t type = 0;
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
  StatementSet statement_set;  // by name, with the protocol (the sessions read it)
  std::size_t types = 1;
  std::latch connected;
  std::atomic<std::int64_t> start_us{0};  // 0 until the main thread starts the clock; -1: abort
  // The workload's probe (Workload::window_probe_sql): the type whose commits advance it, and
  // when its first read began and ended (0 until the main thread has read it).
  int probe_type = -1;
  std::atomic<std::int64_t> probe_read_start{0};
  std::atomic<std::int64_t> probe_read_end{0};
  const std::atomic<bool>* stop = nullptr;  // the caller's (Ctrl-C)
  std::atomic<bool> abort{false};           // the run's own: the main thread gave up
  std::atomic<bool> end_early{false};       // the main thread ended the window (on_poll)
  std::unique_ptr<SharedPool> pool;         // pool mode only
  std::atomic<int> pool_open{0};            // pool connections the workers opened
  // Switchback runs: the block completions count in now (-1: none), and each block's count.
  std::atomic<int> block{-1};
  std::unique_ptr<std::atomic<std::uint64_t>[]> block_finished;
  int max_blocks = 0;
  explicit Shared(int workers) : connected(workers) {}
  bool stopping() const {
    return abort.load() || end_early.load() || (stop != nullptr && stop->load());
  }
};

class Worker final : public EventLoop, public Inbox {
 public:
  Worker(Shared& shared, int index, int count) : shared_(shared), index_(index), count_(count) {
    tallies_.resize(shared.types);
    // Allocated before the clock starts: the hot path only records.
    block_latency_.resize(static_cast<std::size_t>(shared.max_blocks));
  }
  ~Worker();
  Worker(const Worker&) = delete;
  Worker& operator=(const Worker&) = delete;

  void add_client(std::unique_ptr<workload::Client> c, int global_index);

  void run();  // the thread body

  // Results, read by the main thread after join.
  std::vector<Tally> tallies_;
  std::vector<std::uint64_t> counters_;  // Client::take_counters() of measured transactions
  std::vector<std::uint64_t> unmeasured_counters_;  // the others: dropped
  Histogram schedule_lag_;
  std::vector<Histogram> block_latency_;  // switchback: per block
  std::uint64_t block_failed_[2] = {0, 0};
  Histogram pool_wait_;
  Histogram connect_time_;     // every connection this worker opened
  std::uint64_t on_time_ = 0;  // fixed rate: counted transactions started within kOnTimeLagUs
  std::uint64_t reconnects_ = 0;
  int connected_ = 0;
  int refused_ = 0;
  std::vector<int> backend_pids_;  // server pids of the connections opened before the start
  std::optional<pg::Error> connect_error_;  // the first connection failure
  std::exception_ptr fatal_;                // a bug in a workload: ends the run
  std::int64_t window_end_ = 0;             // when this worker stopped counting
  // Transactions still under way when the window closed, and the longest of them had run
  // by then: a lower bound on its latency (it ends after the window and is not counted).
  std::uint64_t in_flight_at_end_ = 0;
  std::int64_t in_flight_longest_us_ = 0;
  std::vector<std::uint64_t> in_flight_by_type_;
  // Keying and think times inside the window: asked for by the clients, and waited.
  std::int64_t keying_asked_us_ = 0, keying_waited_us_ = 0;
  std::int64_t think_asked_us_ = 0, think_waited_us_ = 0;
  // Completions (committed + rolled back) per minute of the window, per type.
  std::vector<std::vector<std::uint64_t>> per_minute_;
  // Commits of the probe's type against the probe's reads (driver.cpp): between them for
  // sure, in flight at the first read, and (start, end) of those judged after the run.
  std::uint64_t probe_sure_ = 0;
  std::uint64_t probe_in_flight_ = 0;
  std::vector<std::pair<std::int64_t, std::int64_t>> probe_pending_;
  Published published_;
  int client_count() const { return static_cast<int>(clients_.size()); }

  void watch_write(ConnSlot* s) override;
  void wake_at(std::int64_t at, std::coroutine_handle<> h) override {
    if (ending_)
      ready_.push_back(h);  // the window closed: no more waiting
    else
      timers_.push({at, h});
  }
  void post(std::coroutine_handle<> h) override;  // from any thread

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
  // Waits for a connection of the shared pool; `got` and `granted_at` are written by the
  // releasing worker under the pool's mutex before it posts the handle to this worker.
  struct AcquireAwaiter {
    Worker* w;
    ConnSlot* got = nullptr;
    std::int64_t granted_at = 0;
    bool await_ready() const noexcept { return false; }
    bool await_suspend(std::coroutine_handle<> h) {
      got = w->shared_.pool->acquire_or_wait({w, h, &got, &granted_at});
      if (got == nullptr) return true;
      granted_at = now_us();
      return false;
    }
    ConnSlot* await_resume() const noexcept { return got; }  // nullptr: the run ended
  };

  bool connect(ConnSlot& slot);  // blocking connect + prepare; false on failure
  void attach(ConnSlot& slot);   // into this worker's epoll set
  void detach(ConnSlot& slot);   // out of it (a pooled connection about to be released)
  bool open_connection(ConnSlot& slot) {
    if (!connect(slot)) return false;
    attach(slot);
    return true;
  }
  void close_connection(ConnSlot& slot);
  void release(ConnSlot* slot);
  void take_inbox();
  Task<void> client_loop(ClientState& c);
  void on_event(ConnSlot* s, std::uint32_t events);
  void deliver(ConnSlot* s);
  void end_window(std::int64_t at);
  void publish(std::int64_t now, bool force);
  // Sets the tick to fire kTickUs after `now`, or at the window's end if that is sooner.
  void arm_tick(std::int64_t now);
  bool measuring_done(std::int64_t now) const { return now >= end_us_; }
  void count_probe(std::int64_t start, std::int64_t end);
  // Sleeps until `us` from now; adds the wait to `asked` and `waited` when it lay inside the
  // window and the window's end did not cut it short.
  Task<void> wait_counted(std::int64_t us, std::int64_t& asked, std::int64_t& waited);

  Shared& shared_;
  int index_;
  int count_;  // workers in the run
  int epfd_ = -1;
  int wake_fd_ = -1;  // eventfd in the epoll set: post() wakes the loop
  int tick_fd_ = -1;  // timerfd in the epoll set: the loop's tick and the window's end
  std::vector<ClientState> clients_;
  std::vector<ConnSlot*> held_;  // pooled connections this worker's clients hold
  std::mutex inbox_mu_;
  std::vector<std::coroutine_handle<>> inbox_;
  std::priority_queue<Timer, std::vector<Timer>, std::greater<>> timers_;
  std::vector<std::coroutine_handle<>> ready_;
  std::vector<std::coroutine_handle<>> batch_;  // ready_ being resumed
  int active_ = 0;
  std::int64_t measure_start_ = 0;
  std::int64_t end_us_ = INT64_MAX;
  std::int64_t planned_end_ = INT64_MAX;  // end_us_ before a stop or on_poll shortened it
  bool ending_ = false;
  RetryPolicy retry_;  // its window_closed points at ending_
  Histogram interval_;
  std::uint64_t interval_failed_ = 0;
  std::int64_t next_publish_ = 0;
};

}  // namespace pgslow::driver
