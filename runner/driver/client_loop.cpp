// A client's transaction loop on its worker: when the next transaction starts (the ramp,
// the fixed rate's arrivals, TPC-C's keying time), its connection (own, per transaction or
// pooled), the transaction with its retries, and what it adds to the worker's accounts.

#include "driver/worker.h"

namespace pgslow::driver {

std::int64_t Worker::next_arrival(ClientState& c) {
  c.next_arrival += static_cast<std::int64_t>(c.schedule.exponential(mean_gap_us_));
  return c.next_arrival;
}

bool Worker::take_pooled(ConnSlot& slot, std::int64_t granted) {
  if (ending_) {  // granted just as the window closed: hand it on, start nothing
    shared_.pool->release(&slot, granted);
    return false;
  }
  held_.push_back(&slot);
  if (slot.conn.is_open()) {
    attach(slot);
  } else if (open_connection(slot)) {
    ++accounts_.reconnects;
  }
  return true;
}

ConnSlot* Worker::own_connection(ClientState& c, Outcome& outcome) {
  ConnSlot* slot = c.own.get();
  const bool per_transaction = shared_.options.connect_per_transaction;
  if (!per_transaction && slot->conn.is_open()) return slot;
  if (open_connection(*slot)) {
    if (!per_transaction) ++accounts_.reconnects;
    return slot;
  }
  outcome.kind = Outcome::Kind::kFailed;
  outcome.error_class = connect_error_->error_class();
  connect_error_.reset();
  return nullptr;
}

void Worker::hang_up(ConnSlot& slot, const Outcome& outcome) {
  if (outcome.connection_lost) close_connection(slot);
  if (shared_.options.connect_per_transaction) close_connection(slot);
  if (shared_.options.pool_size > 0) release(&slot);
}

void Worker::account(ClientState& c, Finished& tx) {
  const Window w = window();
  if (tx.outcome.kind == Outcome::Kind::kCommitted &&
      static_cast<int>(tx.type) == shared_.probe_type) {
    // Not yet judged against the first read, or near the second: judged after the run.
    const std::int64_t read_end = shared_.probe_read_end.load(std::memory_order_acquire);
    accounts_.record_probe_commit(tx.started, tx.ended, w,
                                  shared_.probe_read_start.load(std::memory_order_relaxed),
                                  read_end, tx.ended >= planned_end_ || shared_.stopping());
  }
  if (shared_.max_blocks > 0) tx.block = shared_.block.load(std::memory_order_relaxed);
  const bool counted = accounts_.record(tx, w);
  c.client->take_counters(counted ? accounts_.counters : unmeasured_counters_);
}

Task<void> Worker::wait_counted(std::int64_t us, Wait kind, std::size_t type) {
  const std::int64_t from = now_us();
  co_await SleepAwaiter{this, from + us};
  accounts_.record_wait(kind, type, from, now_us() - from, window(), ending_);
}

Task<void> Worker::stand_by(ClientState& c) {
  // The client leaves as an application's client would: its own connection closes, and
  // connecting again is part of the switch (a block counts once every wanted client runs).
  const DriverOptions& o = shared_.options;
  const bool owns_connection = o.pool_size == 0 && !o.connect_per_transaction;
  if (owns_connection && c.own->conn.is_open()) close_connection(*c.own);
  shared_.set_client_run(c.index, Shared::kStandingBy);
  co_await StandByAwaiter{this, c.index};
  // Blocking, as before the start: the worker's other clients wait out the connect within the
  // switch's settling time. Refused: its next transaction tries again, and fails with the
  // refusal's own class if the server refuses that too.
  if (owns_connection && !ending_ && !open_connection(*c.own)) connect_error_.reset();
  shared_.set_client_run(c.index, Shared::kRunning);
}

void Worker::follow_active_clients() {
  const int wanted = shared_.active_clients.load(std::memory_order_relaxed);
  if (wanted == active_limit_) return;
  active_limit_ = wanted;
  std::erase_if(standing_by_, [&](const StandingBy& s) {
    if (s.index >= wanted) return false;
    ready_.push_back(s.h);
    return true;
  });
}

Task<void> Worker::client_loop(ClientState& c) {
  const DriverOptions& o = shared_.options;
  const bool rate_mode = o.rate > 0;
  const bool pooled = o.pool_size > 0;
  if (o.ramp_s > 0 && o.clients > 1)
    co_await SleepAwaiter{
        this,
        shared_.start_us.load() + static_cast<std::int64_t>(o.ramp_s * 1e6 * c.index / o.clients)};
  if (rate_mode) c.next_arrival = now_us();
  while (!ending_) {
    if (c.index >= active_limit_) {
      co_await stand_by(c);
      if (ending_) break;
    }
    Finished tx;
    tx.type = c.client->choose();
    if (rate_mode) {
      tx.scheduled = next_arrival(c);
      if (tx.scheduled >= end_us_) {
        co_await SleepAwaiter{this, end_us_};  // nothing more to start in the window
        break;
      }
      co_await SleepAwaiter{this, tx.scheduled};
    } else {
      // TPC-C's keying time (5.2.5.7): before the transaction, outside its response time.
      const std::int64_t keying = c.client->keying_time_us();
      if (keying > 0) co_await wait_counted(keying, Wait::kKeying, tx.type);
      tx.scheduled = now_us();
    }
    if (ending_) break;
    // A closed loop starts when it is scheduled: one clock read fewer per transaction.
    tx.started = rate_mode ? now_us() : tx.scheduled;
    tx.granted = tx.started;
    c.in_flight_since = tx.scheduled;
    c.type = tx.type;

    ConnSlot* slot = nullptr;
    if (pooled) {
      AcquireAwaiter acquire{this};
      slot = co_await acquire;
      if (slot == nullptr) break;
      tx.granted = acquire.granted_at;
      if (!take_pooled(*slot, tx.granted)) break;
    } else {
      slot = own_connection(c, tx.outcome);
    }
    if (slot != nullptr) {
      c.session->bind(slot);
      try {
        tx.outcome = co_await run_with_retries(*c.client, *c.session, retry_, c.backoff);
      } catch (...) {
        fatal_ = std::current_exception();
        tx.outcome.kind = Outcome::Kind::kFailed;  // ends the run; never counted as committed
        shared_.fatal.store(true);                 // every worker and the main thread stop now
        end_window(now_us());
      }
      hang_up(*slot, tx.outcome);
    }
    tx.ended = now_us();
    tx.connected = slot != nullptr;
    c.in_flight_since = 0;
    account(c, tx);
    if (!tx.connected) co_await SleepAwaiter{this, now_us() + 10'000};  // refused: back off
    // TPC-C's think time (5.2.5.7): after the transaction, before the next menu.
    if (const std::int64_t think = rate_mode ? 0 : c.client->think_time_us(); think > 0)
      co_await wait_counted(think, Wait::kThink, tx.type);
  }
  --active_;
}

}  // namespace pgslow::driver
