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
#include <limits>
#include <memory>
#include <mutex>
#include <optional>
#include <queue>
#include <string>
#include <vector>

#include "common/clock.h"
#include "common/random.h"
#include "driver/accounting.h"
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
  Random backoff{1};  // retry backoffs: a stream of their own keeps the arrivals as they were
  int index = 0;      // among all the run's clients: its place in the ramp
  std::int64_t next_arrival = 0;
  // The scheduled start of the transaction under way, and its type; 0 between transactions.
  std::int64_t in_flight_since = 0;
  std::size_t type = 0;
  Task<void> loop;
};

// What a worker publishes for the progress line (under its mutex, a few times a second).
struct Published {
  std::mutex mu;
  Histogram interval;  // completed transactions since the last collection (Accounts::live)
  std::uint64_t failed = 0;
  // Switchback: each block's latency as this worker had recorded it at `at` (now_us()), for
  // the looks during the run (DriverOptions::on_poll, BlockReader::latency).
  std::vector<Histogram> blocks;
  std::int64_t at = 0;
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
  std::atomic<bool> fatal{false};  // a worker met an error that ends the run (a fault of the data)
  std::unique_ptr<SharedPool> pool;  // pool mode only
  std::atomic<int> pool_open{0};     // pool connections the workers opened
  // Switchback runs: the block completions count in now (-1: none), and each block's count.
  std::atomic<int> block{-1};
  std::unique_ptr<std::atomic<std::uint64_t>[]> block_finished;
  int max_blocks = 0;
  // Switchback of the client count (DriverOptions::active_clients): the clients wanted now, and
  // each client's state by its index (a client refused at the start has no loop).
  enum ClientRun : std::uint8_t { kNoLoop, kRunning, kStandingBy };
  std::atomic<int> active_clients{std::numeric_limits<int>::max()};
  std::unique_ptr<std::atomic<std::uint8_t>[]> client_runs;  // options.clients of them
  void set_client_run(int index, ClientRun state) {
    if (client_runs) client_runs[static_cast<std::size_t>(index)].store(state);
  }
  // Every client with a loop that the run wants runs, and every other one stands by.
  bool clients_settled() const {
    const int wanted = active_clients.load();
    for (int i = 0; i < options.clients; ++i) {
      const auto state = client_runs[static_cast<std::size_t>(i)].load();
      if (state != kNoLoop && state != (i < wanted ? kRunning : kStandingBy)) return false;
    }
    return true;
  }
  explicit Shared(int workers) : connected(workers) {}
  bool stopping() const {
    return abort.load() || end_early.load() || fatal.load() || (stop != nullptr && stop->load());
  }
};

// The accounts a worker keeps and the run merges them into: the run's types and modes, and
// each type's series over time when there are several.
AccountsShape accounts_shape(const Shared& shared);

class Worker final : public EventLoop, public Inbox {
 public:
  Worker(Shared& shared, int index, int count);
  ~Worker();
  Worker(const Worker&) = delete;
  Worker& operator=(const Worker&) = delete;

  void add_client(std::unique_ptr<workload::Client> c, int global_index);

  void run();  // the thread body

  // Results, read by the main thread after join.
  Accounts accounts_;                               // what this worker counted (accounting.h)
  std::vector<std::uint64_t> unmeasured_counters_;  // Client::take_counters() of the others
  int connected_ = 0;
  int refused_ = 0;
  std::vector<int> backend_pids_;  // server pids of the connections opened before the start
  std::optional<pg::Error> connect_error_;  // the first connection failure
  std::exception_ptr fatal_;                // a bug in a workload: ends the run
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
  // A client not wanted in this part of a switchback run, until it is wanted or the window ends.
  struct StandByAwaiter {
    Worker* w;
    int index;
    bool await_ready() const noexcept { return w->ending_ || index < w->active_limit_; }
    void await_suspend(std::coroutine_handle<> h) { w->standing_by_.push_back({index, h}); }
    void await_resume() const noexcept {}
  };

  // The thread's parts (worker.cpp): its epoll set, eventfd and timerfd; the connections
  // opened before the clock starts; the window's bounds once it starts; the loop; the end.
  void open_event_loop();
  void connect_before_start();
  void start_window(std::int64_t t0);
  void run_event_loop();
  void wait_for_events(std::int64_t now);
  void shut_down();

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
  void on_event(ConnSlot* s, std::uint32_t events);
  void deliver(ConnSlot* s);
  void end_window(std::int64_t at);
  void publish(std::int64_t now, bool force);
  // Sets the tick to fire kTickUs after `now`, or at the window's end if that is sooner.
  void arm_tick(std::int64_t now);
  bool measuring_done(std::int64_t now) const { return now >= end_us_; }
  Window window() const { return {measure_start_, end_us_}; }

  // A client's transactions (client_loop.cpp).
  Task<void> client_loop(ClientState& c);
  // The fixed rate's next arrival: a Poisson process per client.
  std::int64_t next_arrival(ClientState& c);
  // Takes a connection the pool granted into this worker's epoll set (reconnecting a lost
  // one); false when the window closed meanwhile: the connection went back to the pool.
  bool take_pooled(ConnSlot& slot, std::int64_t granted);
  // The client's own connection, reconnected (or, per transaction, opened); nullptr when the
  // server refused it, with `outcome` failed by the refusal's class.
  ConnSlot* own_connection(ClientState& c, Outcome& outcome);
  // After a transaction on `slot`: closes a lost or per-transaction connection, hands a
  // pooled one back.
  void hang_up(ConnSlot& slot, const Outcome& outcome);
  // Records the transaction in accounts_ and hands its client's counters on.
  void account(ClientState& c, Finished& tx);
  // Stands the client by while the run wants fewer clients than its index (its own connection
  // closed), and connects it again when it is wanted.
  Task<void> stand_by(ClientState& c);
  // Resumes the clients standing by that the run wants again (Shared::active_clients).
  void follow_active_clients();
  // Sleeps `us`; counts the wait as `kind` of a transaction of `type` when it lay inside the
  // window and the window's end did not cut it short.
  Task<void> wait_counted(std::int64_t us, Wait kind, std::size_t type);

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
  int active_limit_ = std::numeric_limits<int>::max();  // Shared::active_clients as last read
  struct StandingBy {
    int index;
    std::coroutine_handle<> h;
  };
  std::vector<StandingBy> standing_by_;
  std::int64_t measure_start_ = 0;
  std::int64_t end_us_ = INT64_MAX;
  std::int64_t planned_end_ = INT64_MAX;  // end_us_ before a stop or on_poll shortened it
  bool ending_ = false;
  RetryPolicy retry_;  // its window_closed points at ending_
  std::int64_t next_publish_ = 0;
  // A client's mean time between fixed-rate arrivals (µs), once per worker; 0: closed loop.
  double mean_gap_us_ = 0;
};

}  // namespace pgslow::driver
