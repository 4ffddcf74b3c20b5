#include "driver/worker.h"

#include <fmt/format.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/timerfd.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>

#include "common/errors.h"

namespace pgslow::driver {

namespace {
constexpr std::int64_t kTickUs = 100'000;     // the loop's tick: the stop flag is seen this fast
constexpr std::int64_t kPublishUs = 200'000;  // workers publish progress this often
constexpr std::int64_t kDrainUs = 5'000'000;  // in-flight transactions get this long at the end
}  // namespace

AccountsShape accounts_shape(const Shared& shared) {
  const DriverOptions& o = shared.options;
  const double interval_s = results::type_series_interval_s(o.duration_s);
  const bool series = shared.types > 1;
  return AccountsShape{shared.types,
                       o.rate > 0,
                       o.pool_size > 0,
                       shared.max_blocks,
                       shared.block_finished.get(),
                       series ? static_cast<std::int64_t>(interval_s * 1e6) : 0,
                       series ? static_cast<std::size_t>(std::ceil(o.duration_s / interval_s)) : 0};
}

Worker::Worker(Shared& shared, int index, int count)
    : accounts_(accounts_shape(shared)),
      shared_(shared),
      index_(index),
      count_(count),
      mean_gap_us_(shared.options.rate > 0 ? 1e6 * shared.options.clients / shared.options.rate
                                           : 0) {
  published_.blocks.resize(static_cast<std::size_t>(shared.max_blocks));
}

Worker::~Worker() {
  clients_.clear();  // destroys suspended coroutines before their connections
  if (wake_fd_ >= 0) ::close(wake_fd_);
  if (tick_fd_ >= 0) ::close(tick_fd_);
  if (epfd_ >= 0) ::close(epfd_);
}

void Worker::add_client(std::unique_ptr<workload::Client> c, int global_index) {
  ClientState s;
  s.client = std::move(c);
  s.session = std::make_unique<DriverSession>(this, &shared_.statement_set);
  s.schedule.reseed(shared_.options.seed * 1000003ULL + static_cast<std::uint64_t>(global_index));
  s.index = global_index;
  s.backoff.reseed(shared_.options.seed * 7919ULL + static_cast<std::uint64_t>(global_index));
  clients_.push_back(std::move(s));
}

bool Worker::connect(ConnSlot& slot) {
  const std::int64_t began = now_us();
  try {
    slot.conn = pg::Connection::open(shared_.conninfo, pg::SessionKind::kWorkload);
    accounts_.connect_time.record(now_us() - began);
    if (shared_.start_us.load() == 0) backend_pids_.push_back(slot.conn.backend_pid());
    if (shared_.options.protocol == Protocol::kPrepared)
      for (const auto& st : shared_.statements) slot.conn.prepare(st.name, st.sql);
    slot.conn.set_nonblocking(true);
  } catch (const pg::Error& e) {
    slot.conn.close();
    if (!connect_error_) connect_error_ = e;
    return false;
  }
  slot.want_write = false;
  slot.error = nullptr;
  return true;
}

void Worker::attach(ConnSlot& slot) {
  epoll_event ev{};
  ev.events = EPOLLIN;
  ev.data.ptr = &slot;
  if (epoll_ctl(epfd_, EPOLL_CTL_ADD, slot.conn.socket(), &ev) != 0)
    throw RuntimeError(fmt::format("epoll_ctl: {}", std::strerror(errno)));
  slot.in_epoll = true;
  slot.want_write = false;
}

void Worker::detach(ConnSlot& slot) {
  if (slot.in_epoll && slot.conn.raw() && slot.conn.socket() >= 0)
    epoll_ctl(epfd_, EPOLL_CTL_DEL, slot.conn.socket(), nullptr);
  slot.in_epoll = false;
  slot.want_write = false;
}

void Worker::close_connection(ConnSlot& slot) {
  detach(slot);
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
  detach(*slot);
  held_.erase(std::find(held_.begin(), held_.end(), slot));
  shared_.pool->release(slot, now_us());
}

void Worker::post(std::coroutine_handle<> h) {
  {
    std::lock_guard lock(inbox_mu_);
    inbox_.push_back(h);
  }
  const std::uint64_t one = 1;
  [[maybe_unused]] ssize_t n = ::write(wake_fd_, &one, sizeof one);
}

void Worker::take_inbox() {
  std::uint64_t count = 0;
  [[maybe_unused]] ssize_t n = ::read(wake_fd_, &count, sizeof count);
  std::lock_guard lock(inbox_mu_);
  ready_.insert(ready_.end(), inbox_.begin(), inbox_.end());
  inbox_.clear();
}

void Worker::arm_tick(std::int64_t now) {
  std::int64_t next = now + kTickUs;
  if (!ending_) next = std::min(next, end_us_);
  const std::int64_t in = std::max<std::int64_t>(next - now, 1);
  itimerspec spec{};
  spec.it_value.tv_sec = static_cast<time_t>(in / 1'000'000);
  spec.it_value.tv_nsec = static_cast<long>((in % 1'000'000) * 1000);
  if (timerfd_settime(tick_fd_, 0, &spec, nullptr) != 0)
    throw RuntimeError(fmt::format("timerfd_settime: {}", std::strerror(errno)));
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

void Worker::publish(std::int64_t now, bool force) {
  if (!force && now < next_publish_) return;
  next_publish_ = now + kPublishUs;
  std::lock_guard lock(published_.mu);
  published_.interval.merge(accounts_.live);
  published_.failed += accounts_.live_failed;
  accounts_.publish_blocks(published_.blocks);
  published_.at = now;
  accounts_.live.clear();
  accounts_.live_failed = 0;
}

void Worker::end_window(std::int64_t at) {
  if (ending_) return;
  ending_ = true;
  end_us_ = std::min(end_us_, at);
  accounts_.window_end = end_us_;
  accounts_.in_flight_by_type.assign(shared_.types, 0);
  for (const auto& c : clients_) accounts_.record_in_flight(c.in_flight_since, c.type, window());
  // In-flight statements are cancelled so the run ends promptly; their transactions finish
  // after the window and are not counted (but are reported, above).
  auto cancel = [](ConnSlot& s) {
    if (s.waiter && s.conn.is_open()) s.conn.cancel();
  };
  for (auto& c : clients_)
    if (c.own) cancel(*c.own);
  for (ConnSlot* p : held_) cancel(*p);
  while (!timers_.empty()) {
    ready_.push_back(timers_.top().h);
    timers_.pop();
  }
  for (const StandingBy& s : standing_by_) ready_.push_back(s.h);
  standing_by_.clear();
  // Waiting for a pooled connection: resumed with none, which ends their loops.
  if (shared_.pool) {
    for (auto h : shared_.pool->cancel_waiters(this)) ready_.push_back(h);
  }
}

void Worker::open_event_loop() {
  epfd_ = epoll_create1(EPOLL_CLOEXEC);
  wake_fd_ = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  tick_fd_ = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
  if (epfd_ < 0 || wake_fd_ < 0 || tick_fd_ < 0)
    throw RuntimeError(fmt::format("epoll/eventfd/timerfd: {}", std::strerror(errno)));
  epoll_event wake{};
  wake.events = EPOLLIN;
  wake.data.ptr = nullptr;  // not a connection: the inbox
  epoll_ctl(epfd_, EPOLL_CTL_ADD, wake_fd_, &wake);
  epoll_event tick{};
  tick.events = EPOLLIN;
  tick.data.ptr = this;  // not a connection: the tick
  epoll_ctl(epfd_, EPOLL_CTL_ADD, tick_fd_, &tick);
}

void Worker::connect_before_start() {
  const DriverOptions& o = shared_.options;
  // Blocking, in parallel across workers. Pool connections are opened by the workers in turn
  // and join the shared pool unattached.
  if (o.pool_size > 0) {
    for (int i = index_; i < shared_.pool->size(); i += count_) {
      ConnSlot& p = shared_.pool->slot(i);
      if (connect(p)) {
        shared_.pool->add_free(&p);
        shared_.pool_open.fetch_add(1);
        ++connected_;
      } else {
        ++refused_;
      }
    }
    return;
  }
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

void Worker::start_window(std::int64_t t0) {
  const DriverOptions& o = shared_.options;
  // Every worker has connected: pooled clients run when the pool has any connection.
  if (o.pool_size > 0 && shared_.pool_open.load() > 0) {
    for (auto& c : clients_) c.loop = client_loop(c);
  }
  retry_.max_tries = o.max_tries;
  retry_.window_closed = &ending_;
  measure_start_ = t0 + static_cast<std::int64_t>(o.warmup_s * 1e6);
  end_us_ = measure_start_ + static_cast<std::int64_t>(o.duration_s * 1e6);
  planned_end_ = end_us_;
  accounts_.window_end = end_us_;
  next_publish_ = now_us() + kPublishUs;
  arm_tick(now_us());
}

void Worker::run() {
  open_event_loop();
  connect_before_start();
  shared_.connected.count_down();
  shared_.start_us.wait(0);
  const std::int64_t t0 = shared_.start_us.load();
  if (t0 < 0) return;
  start_window(t0);
  active_limit_ = shared_.active_clients.load();
  for (auto& c : clients_) {
    if (c.loop.valid()) {
      ++active_;
      shared_.set_client_run(c.index, Shared::kRunning);
      c.loop.resume();
    }
  }
  run_event_loop();
  shut_down();
}

void Worker::run_event_loop() {
  std::int64_t hard_deadline = INT64_MAX;
  while (active_ > 0) {
    const std::int64_t now = now_us();
    if (!ending_ && (measuring_done(now) || shared_.stopping())) {
      end_window(now);
      hard_deadline = now + kDrainUs;
    }
    if (now >= hard_deadline) break;  // a server that ignores cancel: abandon the clients
    while (!timers_.empty() && timers_.top().at <= now) {
      ready_.push_back(timers_.top().h);
      timers_.pop();
    }
    if (!ready_.empty()) {
      batch_.swap(ready_);  // both keep their storage: no allocation per batch
      for (auto h : batch_) h.resume();
      batch_.clear();
      continue;
    }
    wait_for_events(now);
    publish(now, false);  // `now` from before the events: a publication up to a batch late
  }
}

void Worker::wait_for_events(std::int64_t now) {
  // The tick (every kTickUs and at the window's end) bounds every wait, so epoll needs a
  // timeout only for a sleeping coroutine: a timeout arms and cancels a kernel timer on
  // every wait that sleeps, about once per transaction.
  timespec ts{};
  const timespec* timeout = nullptr;
  std::int64_t wait_us = -1;
  if (!timers_.empty()) {
    wait_us = std::clamp<std::int64_t>(timers_.top().at - now, 0, kTickUs);
    ts = {static_cast<time_t>(wait_us / 1'000'000),
          static_cast<long>((wait_us % 1'000'000) * 1000)};
    timeout = &ts;
  }
  epoll_event events[64];
  int n = epoll_pwait2(epfd_, events, 64, timeout, nullptr);
  if (n < 0 && errno == ENOSYS)  // kernels before 5.11: millisecond timeouts
    n = epoll_wait(epfd_, events, 64, timeout ? static_cast<int>((wait_us + 999) / 1000) : -1);
  if (n < 0 && errno != EINTR)
    throw RuntimeError(fmt::format("epoll_wait: {}", std::strerror(errno)));
  for (int i = 0; i < n; ++i) {
    void* tag = events[i].data.ptr;
    if (tag == nullptr) {
      take_inbox();
    } else if (tag == this) {
      std::uint64_t expirations = 0;
      [[maybe_unused]] ssize_t r = ::read(tick_fd_, &expirations, sizeof expirations);
      const std::int64_t t = now_us();
      arm_tick(t);
      publish(t, false);  // an idle worker publishes on its tick
      // A switchback of the client count: the wanted count is read on the tick (the switch's
      // settling waits for it), not on every turn of the loop.
      if (shared_.client_runs && !ending_) follow_active_clients();
    } else {
      on_event(static_cast<ConnSlot*>(tag), events[i].events);
    }
  }
}

void Worker::shut_down() {
  publish(now_us(), true);
  {
    // It records nothing more: every later look has all of it (a worker whose clients were
    // all refused ends early, and must not hold up the switchback's looks).
    std::lock_guard lock(published_.mu);
    published_.at = INT64_MAX;
  }
  for (auto& c : clients_) c.loop = Task<void>();  // abandoned coroutines, if any
  for (auto& c : clients_)
    if (c.own) close_connection(*c.own);
  // Pooled connections still held (abandoned at the drain deadline) leave this epoll set;
  // the pool closes them after every worker has stopped.
  for (ConnSlot* p : held_) detach(*p);
  held_.clear();
  if (shared_.pool) shared_.pool->cancel_waiters(this);
}

}  // namespace pgslow::driver
