#include "driver/driver.h"

#include <fmt/format.h>
#include <sys/epoll.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <deque>
#include <latch>
#include <memory>
#include <mutex>
#include <optional>
#include <queue>
#include <thread>

#include "common/clock.h"
#include "common/log.h"
#include "common/strings.h"
#include "driver/histogram.h"
#include "driver/outcome.h"
#include "driver/random.h"

namespace pgslow::driver {

namespace {

constexpr std::int64_t kTickUs = 100'000;     // longest sleep: the stop flag is seen this fast
constexpr std::int64_t kPublishUs = 200'000;  // workers publish progress this often
constexpr std::int64_t kDrainUs = 5'000'000;  // in-flight transactions get this long at the end

class Worker;

// One server connection and the coroutine waiting for its result.
struct ConnSlot {
  pg::Connection conn;
  std::coroutine_handle<> waiter;
  pg::Result result;
  std::exception_ptr error;
  bool in_epoll = false;
  bool want_write = false;
};

// Awaits the complete result of the statement just sent on `slot`.
struct ResultAwaiter {
  Worker* worker;
  ConnSlot* slot;
  const char* statement;
  bool await_ready() const noexcept { return false; }
  void await_suspend(std::coroutine_handle<> h);
  pg::Result await_resume() {
    if (slot->error) std::rethrow_exception(std::exchange(slot->error, nullptr));
    pg::Result r = std::move(slot->result);
    pg::check_result(r, slot->conn.raw(), statement);
    return r;
  }
};

// The driver's Session: non-blocking libpq under a coroutine.
class DriverSession final : public workload::Session {
 public:
  explicit DriverSession(Worker* w) : worker_(w) { values_.reserve(16); }
  void bind(ConnSlot* slot) { slot_ = slot; }
  ConnSlot* slot() const { return slot_; }

  Task<pg::Result> execute(const std::string& statement, pg::Params params) override {
    values_.clear();
    for (const auto& p : params) values_.push_back(p ? p->c_str() : nullptr);
    send_check();
    slot_->conn.send_prepared(statement.c_str(), static_cast<int>(values_.size()), values_.data());
    co_return co_await ResultAwaiter{worker_, slot_, statement.c_str()};
  }
  Task<pg::Result> query(const std::string& sql) override {
    send_check();
    slot_->conn.send_query(sql.c_str());
    co_return co_await ResultAwaiter{worker_, slot_, sql.c_str()};
  }

 private:
  void send_check() const {
    if (!slot_->conn.is_open())
      throw pg::Error(pg::ErrorClass::kConnectionLost, "", "the connection was lost", "");
  }
  Worker* worker_;
  ConnSlot* slot_ = nullptr;
  std::vector<const char*> values_;
};

struct ClientState {
  std::unique_ptr<workload::Client> client;
  std::unique_ptr<DriverSession> session;
  std::unique_ptr<ConnSlot> own;  // its connection (not in pool mode)
  Random schedule{1};
  std::int64_t next_arrival = 0;
  Task<void> loop;
};

struct Shared;

// What a worker publishes for the progress line (under its mutex, a few times a second).
struct Published {
  std::mutex mu;
  Histogram interval;  // completed transactions since the last collection
  std::uint64_t failed = 0;
};

struct Timer {
  std::int64_t at;
  std::coroutine_handle<> h;
  bool operator>(const Timer& o) const { return at > o.at; }
};

// Settings and cross-thread state of one run.
struct Shared {
  const workload::Workload* workload;
  std::string conninfo;
  DriverOptions options;
  std::vector<workload::StatementDef> statements;
  std::size_t types = 1;
  std::latch connected;
  std::atomic<std::int64_t> start_us{0};  // 0 until the main thread starts the clock; -1: abort
  const std::atomic<bool>* stop = nullptr;
  explicit Shared(int workers) : connected(workers) {}
};

class Worker {
 public:
  Worker(Shared& shared, int index) : shared_(shared), index_(index) {
    tallies_.resize(shared.types);
  }
  ~Worker() {
    clients_.clear();  // destroys suspended coroutines before their connections
    if (epfd_ >= 0) ::close(epfd_);
  }

  void add_client(std::unique_ptr<workload::Client> c, int global_index) {
    ClientState s;
    s.client = std::move(c);
    s.session = std::make_unique<DriverSession>(this);
    s.schedule.reseed(shared_.options.seed * 1000003ULL + static_cast<std::uint64_t>(global_index));
    clients_.push_back(std::move(s));
  }
  void add_pool_connection() { pool_.push_back(std::make_unique<ConnSlot>()); }

  void run();  // the thread body

  // Results, read by the main thread after join.
  std::vector<Tally> tallies_;
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

  // Used by awaiters.
  void watch_write(ConnSlot* s);
  void push_timer(std::int64_t at, std::coroutine_handle<> h) { timers_.push({at, h}); }

 private:
  struct SleepAwaiter {
    Worker* w;
    std::int64_t at;
    bool await_ready() const noexcept { return now_us() >= at; }
    void await_suspend(std::coroutine_handle<> h) { w->push_timer(at, h); }
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

void ResultAwaiter::await_suspend(std::coroutine_handle<> h) {
  slot->waiter = h;
  if (!slot->conn.flush()) worker->watch_write(slot);
}

bool Worker::open_connection(ConnSlot& slot) {
  try {
    slot.conn = pg::Connection::open(shared_.conninfo);
    for (const auto& st : shared_.statements) slot.conn.prepare(st.name, st.sql);
    slot.conn.set_nonblocking(true);
  } catch (const pg::Error& e) {
    slot.conn.close();
    if (!connect_error_) connect_error_ = e;
    return false;
  }
  epoll_event ev{};
  ev.events = EPOLLIN;
  ev.data.ptr = &slot;
  if (epoll_ctl(epfd_, EPOLL_CTL_ADD, slot.conn.socket(), &ev) != 0)
    throw RuntimeError(fmt::format("epoll_ctl: {}", std::strerror(errno)));
  slot.in_epoll = true;
  slot.want_write = false;
  slot.error = nullptr;
  return true;
}

void Worker::close_connection(ConnSlot& slot) {
  if (slot.in_epoll && slot.conn.raw() && slot.conn.socket() >= 0)
    epoll_ctl(epfd_, EPOLL_CTL_DEL, slot.conn.socket(), nullptr);
  slot.in_epoll = false;
  slot.conn.close();
}

void Worker::watch_write(ConnSlot* s) {
  if (s->want_write || !s->in_epoll) return;
  epoll_event ev{};
  ev.events = EPOLLIN | EPOLLOUT;
  ev.data.ptr = s;
  epoll_ctl(epfd_, EPOLL_CTL_MOD, s->conn.socket(), &ev);
  s->want_write = true;
}

void Worker::release(ConnSlot* slot) {
  if (!pool_waiters_.empty()) {
    PoolWaiter w = pool_waiters_.front();
    pool_waiters_.pop_front();
    *w.got = slot;
    ready_.push_back(w.h);  // resumed by the loop, not on this client's stack
  } else {
    free_.push_back(slot);
  }
}

void Worker::deliver(ConnSlot* s) {
  if (auto h = std::exchange(s->waiter, {})) h.resume();
}

void Worker::on_event(ConnSlot* s, std::uint32_t events) {
  try {
    if ((events & EPOLLOUT) && s->want_write && s->conn.flush()) {
      epoll_event ev{};
      ev.events = EPOLLIN;
      ev.data.ptr = s;
      epoll_ctl(epfd_, EPOLL_CTL_MOD, s->conn.socket(), &ev);
      s->want_write = false;
    }
    if (!(events & (EPOLLIN | EPOLLERR | EPOLLHUP))) return;
    s->conn.consume_input();
    while (!s->conn.is_busy()) {
      pg::Result r = s->conn.next_result();
      if (!r) {
        if (s->waiter) deliver(s);
        return;
      }
      // Keep the first error, else the last result.
      ExecStatusType st = r.status();
      bool failed = st == PGRES_FATAL_ERROR || st == PGRES_BAD_RESPONSE;
      if (failed || !s->result ||
          (s->result.status() != PGRES_FATAL_ERROR && s->result.status() != PGRES_BAD_RESPONSE))
        s->result = std::move(r);
    }
  } catch (const pg::Error&) {
    s->error = std::current_exception();
    close_connection(*s);  // level-triggered epoll would spin on a dead socket
    if (s->waiter) deliver(s);
  }
}

void Worker::publish(bool force) {
  std::int64_t now = now_us();
  if (!force && now < next_publish_) return;
  next_publish_ = now + kPublishUs;
  std::lock_guard lock(published_.mu);
  published_.interval.merge(interval_);
  published_.failed += interval_failed_;
  interval_.clear();
  interval_failed_ = 0;
}

void Worker::end_window(std::int64_t at) {
  if (ending_) return;
  ending_ = true;
  end_us_ = std::min(end_us_, at);
  window_end_ = end_us_;
  // In-flight statements are cancelled so the run ends promptly; their transactions finish
  // after the window and are not counted.
  auto cancel = [](ConnSlot& s) {
    if (s.waiter && s.conn.is_open()) s.conn.cancel();
  };
  for (auto& c : clients_)
    if (c.own) cancel(*c.own);
  for (auto& p : pool_) cancel(*p);
  while (!timers_.empty()) {
    ready_.push_back(timers_.top().h);
    timers_.pop();
  }
  while (!pool_waiters_.empty()) {
    ready_.push_back(pool_waiters_.front().h);  // resumes with no connection: ends its loop
    pool_waiters_.pop_front();
  }
}

Task<void> Worker::client_loop(ClientState& c) {
  const DriverOptions& o = shared_.options;
  const bool rate_mode = o.rate > 0;
  const double mean_gap_us = rate_mode ? 1e6 * o.clients / o.rate : 0;
  const bool pooled = o.pool_size > 0;
  if (rate_mode) c.next_arrival = now_us();
  while (!ending_) {
    std::size_t type = c.client->choose();
    std::int64_t scheduled;
    if (rate_mode) {
      c.next_arrival += static_cast<std::int64_t>(c.schedule.exponential(mean_gap_us));
      scheduled = c.next_arrival;
      if (scheduled >= end_us_) {
        co_await SleepAwaiter{this, end_us_};  // nothing more to start in the window
        break;
      }
      co_await SleepAwaiter{this, scheduled};
    } else {
      std::int64_t think = c.client->think_time_us();
      if (think > 0) co_await SleepAwaiter{this, now_us() + think};
      scheduled = now_us();
    }
    if (ending_) break;
    std::int64_t start = now_us();

    ConnSlot* slot = nullptr;
    Outcome outcome;
    bool ran = false;
    if (pooled) {
      slot = co_await AcquireAwaiter{this};
      if (slot == nullptr) break;
    } else if (o.connect_per_transaction) {
      slot = c.own.get();
      if (!open_connection(*slot)) {
        outcome.kind = Outcome::Kind::kFailed;
        outcome.error_class = connect_error_->error_class();
        connect_error_.reset();
        slot = nullptr;
      }
    } else {
      slot = c.own.get();
      if (!slot->conn.is_open()) {
        if (open_connection(*slot)) {
          ++reconnects_;
        } else {
          outcome.kind = Outcome::Kind::kFailed;
          outcome.error_class = connect_error_->error_class();
          connect_error_.reset();
          slot = nullptr;
        }
      }
    }
    std::int64_t got = now_us();
    if (slot != nullptr) {
      if (pooled && !slot->conn.is_open()) {
        if (open_connection(*slot)) ++reconnects_;
      }
      c.session->bind(slot);
      try {
        outcome = co_await run_with_retries(*c.client, *c.session, o.max_tries);
      } catch (...) {
        fatal_ = std::current_exception();
        end_window(now_us());
      }
      ran = true;
      if (outcome.connection_lost) close_connection(*slot);
      if (o.connect_per_transaction) close_connection(*slot);
      if (pooled) release(slot);
    }
    std::int64_t end = now_us();

    if (outcome.kind == Outcome::Kind::kFailed)
      ++interval_failed_;
    else
      interval_.record(end - scheduled);
    // Counted: started after the warm-up, finished inside the window.
    if (scheduled >= measure_start_ && end <= end_us_) {
      tallies_[type].add(outcome, end - scheduled);
      if (rate_mode) schedule_lag_.record(start - scheduled);
      if (pooled && slot != nullptr) pool_wait_.record(got - start);
    }
    if (!ran) co_await SleepAwaiter{this, now_us() + 10'000};  // a refused connect: back off
  }
  --active_;
}

void Worker::run() {
  epfd_ = epoll_create1(EPOLL_CLOEXEC);
  const DriverOptions& o = shared_.options;
  // Connect (blocking, in parallel across workers) before the clock starts.
  if (o.pool_size > 0) {
    for (auto& p : pool_) {
      if (open_connection(*p)) {
        free_.push_back(p.get());
        ++connected_;
      } else {
        ++refused_;
      }
    }
    if (connected_ > 0) {
      for (auto& c : clients_) c.loop = client_loop(c);
    }
  } else {
    for (auto& c : clients_) {
      c.own = std::make_unique<ConnSlot>();
      if (o.connect_per_transaction || open_connection(*c.own)) {
        ++connected_;
        c.loop = client_loop(c);
      } else {
        ++refused_;
      }
    }
  }
  shared_.connected.count_down();
  shared_.start_us.wait(0);
  std::int64_t t0 = shared_.start_us.load();
  if (t0 < 0) return;
  measure_start_ = t0 + static_cast<std::int64_t>(o.warmup_s * 1e6);
  end_us_ = measure_start_ + static_cast<std::int64_t>(o.duration_s * 1e6);
  window_end_ = end_us_;
  next_publish_ = now_us() + kPublishUs;

  for (auto& c : clients_) {
    if (c.loop.valid()) {
      ++active_;
      c.loop.resume();
    }
  }
  epoll_event events[64];
  std::int64_t hard_deadline = INT64_MAX;
  while (active_ > 0) {
    std::int64_t now = now_us();
    if (!ending_ && (measuring_done(now) || (shared_.stop && shared_.stop->load()))) {
      end_window(now);
      hard_deadline = now + kDrainUs;
    }
    if (now >= hard_deadline) break;  // a server that ignores cancel: abandon the clients
    while (!timers_.empty() && timers_.top().at <= now) {
      ready_.push_back(timers_.top().h);
      timers_.pop();
    }
    if (!ready_.empty()) {
      auto batch = std::move(ready_);
      ready_.clear();
      for (auto h : batch) h.resume();
      continue;
    }
    std::int64_t wait_us = kTickUs;
    if (!timers_.empty()) wait_us = std::min(wait_us, timers_.top().at - now);
    if (!ending_) wait_us = std::min(wait_us, end_us_ - now);
    wait_us = std::max<std::int64_t>(wait_us, 0);
    timespec ts{static_cast<time_t>(wait_us / 1'000'000),
                static_cast<long>((wait_us % 1'000'000) * 1000)};
    int n = epoll_pwait2(epfd_, events, 64, &ts, nullptr);
    if (n < 0 && errno == ENOSYS)  // kernels before 5.11: millisecond timeouts
      n = epoll_wait(epfd_, events, 64, static_cast<int>((wait_us + 999) / 1000));
    if (n < 0 && errno != EINTR)
      throw RuntimeError(fmt::format("epoll_wait: {}", std::strerror(errno)));
    for (int i = 0; i < n; ++i)
      on_event(static_cast<ConnSlot*>(events[i].data.ptr), events[i].events);
    publish(false);
  }
  publish(true);
  for (auto& c : clients_) c.loop = Task<void>();  // abandoned coroutines, if any
  for (auto& c : clients_)
    if (c.own) close_connection(*c.own);
  for (auto& p : pool_) close_connection(*p);
}

std::string progress_line(double elapsed_s, bool warmup, double tps, double p99_us,
                          std::uint64_t failed) {
  return fmt::format("{:5.1f} s{}  tps {:.0f}  p99 {}  failed {}", elapsed_s,
                     warmup ? " (warm-up)" : "", tps, format_duration_us(p99_us),
                     format_count(failed));
}

}  // namespace

std::vector<ConfigError> validate(const DriverOptions& o) {
  std::vector<ConfigError> errors;
  auto add = [&](std::string msg, std::string hint) {
    ConfigError e;
    e.message = std::move(msg);
    e.hint = std::move(hint);
    errors.push_back(std::move(e));
  };
  if (o.clients < 1) add(fmt::format("--clients must be at least 1 (got {})", o.clients), "");
  if (o.workers < 0)
    add(fmt::format("--workers must be 0 (one per core) or more (got {})", o.workers), "");
  if (o.duration_s <= 0) add(fmt::format("--duration must be positive (got {})", o.duration_s), "");
  if (o.warmup_s < 0) add(fmt::format("--warmup must not be negative (got {})", o.warmup_s), "");
  if (o.rate < 0)
    add(fmt::format("--rate must not be negative (got {})", o.rate), "0 means closed loop");
  if (o.pool_size < 0)
    add(fmt::format("--pool-size must not be negative (got {})", o.pool_size),
        "0 means one connection per client");
  if (o.max_tries < 1)
    add(fmt::format("--max-tries must be at least 1 (got {})", o.max_tries), "1 means no retry");
  if (o.pool_size > 0 && o.connect_per_transaction)
    add("--pool-size and --connect-per-transaction cannot be combined",
        "a pool keeps its connections open");
  return errors;
}

report::Measurement run_workload(const workload::Workload& workload,
                                 const workload::WorkloadParams& params,
                                 const std::string& conninfo, const DriverOptions& options,
                                 Progress& progress, const std::atomic<bool>* stop) {
  auto problems = validate(options);
  if (has_errors(problems)) throw InputError(std::move(problems));

  DriverOptions o = options;
  int cores = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  int workers = o.workers > 0 ? o.workers : cores;
  workers = std::min(workers, o.clients);
  if (o.pool_size > 0) workers = std::min(workers, o.pool_size);
  o.workers = workers;

  Shared shared(workers);
  shared.workload = &workload;
  shared.conninfo = conninfo;
  shared.options = o;
  shared.statements = workload.statements();
  std::vector<std::string> type_names = workload.transaction_types();
  shared.types = std::max<std::size_t>(1, type_names.size());
  shared.stop = stop;

  std::vector<std::unique_ptr<Worker>> ws;
  for (int i = 0; i < workers; ++i) ws.push_back(std::make_unique<Worker>(shared, i));
  for (int i = 0; i < o.clients; ++i)
    ws[i % workers]->add_client(workload.make_client(params, i), i);
  for (int i = 0; i < o.pool_size; ++i) ws[i % workers]->add_pool_connection();

  progress.update(fmt::format("connecting {} {}", o.pool_size > 0 ? o.pool_size : o.clients,
                              o.pool_size > 0 ? "pool connections" : "clients"));
  std::vector<std::thread> threads;
  for (auto& w : ws) {
    threads.emplace_back([&w] {
      try {
        w->run();
      } catch (...) {
        w->fatal_ = std::current_exception();
      }
    });
  }
  auto abort_and_join = [&] {
    shared.start_us.store(-1);
    shared.start_us.notify_all();
    for (auto& t : threads) t.join();
  };
  shared.connected.wait();

  int connected = 0, refused = 0;
  std::optional<pg::Error> first_error;
  for (auto& w : ws) {
    connected += w->connected_;
    refused += w->refused_;
    if (!first_error && w->connect_error_) first_error = w->connect_error_;
  }
  const int wanted = o.pool_size > 0 ? o.pool_size : o.clients;
  const char* what = o.pool_size > 0 ? "pool connections" : "clients";
  if (refused > 0) {
    bool too_many =
        first_error && first_error->error_class() == pg::ErrorClass::kTooManyConnections;
    std::string reason = first_error ? first_error->server_message() : "unknown";
    if (connected == 0 || !too_many || !o.allow_partial) {
      abort_and_join();
      if (too_many) {
        throw RuntimeError(fmt::format(
            "{} of {} {} could not connect: the server refused them (too many clients, "
            "SQLSTATE 53300). Raise max_connections on the server or lower --clients{}, or "
            "pass --allow-partial to run with the {} that connected.",
            refused, wanted, what, o.pool_size > 0 ? " / --pool-size" : "", connected));
      }
      throw RuntimeError(
          fmt::format("{} of {} {} could not connect: {}", refused, wanted, what, reason));
    }
    spdlog::warn("{} of {} {} could not connect (too many clients); running with {}", refused,
                 wanted, what, connected);
  }

  const std::int64_t t0 = now_us();
  shared.start_us.store(t0);
  shared.start_us.notify_all();
  const std::int64_t measure_start = t0 + static_cast<std::int64_t>(o.warmup_s * 1e6);

  // Progress: collect what the workers published, once a second.
  report::Measurement m;
  Histogram second;
  std::uint64_t failed_total = 0;
  std::int64_t last = t0;
  std::int64_t next_tick = t0 + 1'000'000;
  const std::int64_t window_end_planned =
      measure_start + static_cast<std::int64_t>(o.duration_s * 1e6);
  bool measure_started = false;
  for (;;) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    std::int64_t now = now_us();
    bool stop_now = stop && stop->load();
    if (!measure_started && now >= measure_start) {
      measure_started = true;
      if (o.on_measure_start) o.on_measure_start();
    }
    if (now >= next_tick || stop_now) {
      second.clear();
      for (auto& w : ws) {
        std::lock_guard lock(w->published_.mu);
        second.merge(w->published_.interval);
        failed_total += w->published_.failed;
        w->published_.interval.clear();
        w->published_.failed = 0;
      }
      double secs = static_cast<double>(now - last) / 1e6;
      double tps = secs > 0 ? static_cast<double>(second.count()) / secs : 0;
      if (now > measure_start && !stop_now) m.tps_per_second.push_back(tps);
      progress.update(progress_line(static_cast<double>(now - t0) / 1e6, now <= measure_start, tps,
                                    second.percentile(0.99), failed_total));
      last = now;
      next_tick += 1'000'000;
      if (next_tick <= now) next_tick = now + 1'000'000;
    }
    // Threads finish shortly after the window ends (or after the stop flag).
    if (now >= window_end_planned || stop_now) break;
  }
  if (measure_started && o.on_measure_end) o.on_measure_end();
  for (auto& t : threads) t.join();

  std::exception_ptr fatal;
  std::vector<Tally> tallies(shared.types);
  Histogram lag, pool_wait;
  std::int64_t window_end = 0;
  for (auto& w : ws) {
    if (w->fatal_ && !fatal) fatal = w->fatal_;
    for (std::size_t i = 0; i < shared.types; ++i) tallies[i].merge(w->tallies_[i]);
    lag.merge(w->schedule_lag_);
    pool_wait.merge(w->pool_wait_);
    m.reconnects += w->reconnects_;
    window_end = std::max(window_end, w->window_end_);
  }
  if (fatal) std::rethrow_exception(fatal);

  Tally total;
  for (std::size_t i = 0; i < shared.types; ++i) {
    total.merge(tallies[i]);
    std::string name = i < type_names.size() ? type_names[i] : std::string(workload.name());
    m.by_type.push_back(tallies[i].result(name));
    if (name == "new_order") m.new_orders_per_min = static_cast<double>(tallies[i].committed);
  }
  m.duration_s = std::max(0.0, static_cast<double>(window_end - measure_start) / 1e6);
  m.committed = total.committed;
  m.rolled_back = total.rolled_back;
  m.failed = total.failed;
  m.retries = total.retries;
  m.tps = m.duration_s > 0 ? static_cast<double>(m.committed + m.rolled_back) / m.duration_s : 0;
  m.new_orders_per_min = m.duration_s > 0 ? m.new_orders_per_min * 60.0 / m.duration_s : 0;
  m.latency = total.latency.summary();
  if (o.rate > 0) m.schedule_lag = lag.summary();
  if (o.pool_size > 0) m.pool_wait = pool_wait.summary();
  total.add_failures_to(m.failures_by_class);
  m.clients_requested = o.clients;
  m.clients_connected = o.pool_size > 0 ? (connected > 0 ? o.clients : 0) : connected;
  return m;
}

}  // namespace pgslow::driver
