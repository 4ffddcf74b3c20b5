#pragma once
// The driver's side of workload::Session: one server connection (ConnSlot) driven with
// non-blocking libpq, and the awaiter that suspends a transaction's coroutine until its
// statement's result is complete. The worker's event loop (worker.h) resumes it.

#include <coroutine>
#include <exception>
#include <map>
#include <string>
#include <vector>

#include "driver/driver.h"
#include "pg/connection.h"
#include "workload/workload.h"

namespace pgslow::driver {

// One server connection and the coroutine waiting for its result.
struct ConnSlot {
  pg::Connection conn;
  std::coroutine_handle<> waiter;
  pg::Result result;
  std::exception_ptr error;
  bool in_epoll = false;
  bool want_write = false;
};

// What a session needs from the event loop that owns its connection: a wake-up when the
// socket can take the rest of a statement that did not fit in the send buffer.
class EventLoop {
 public:
  virtual void watch_write(ConnSlot* slot) = 0;
  // Resumes `h` at `at` (now_us() time), or earlier when the run's window ends.
  virtual void wake_at(std::int64_t at, std::coroutine_handle<> h) = 0;

 protected:
  ~EventLoop() = default;
};

// Awaits the complete result of the statement just sent on `slot`.
struct ResultAwaiter {
  EventLoop* loop;
  ConnSlot* slot;
  const char* statement;
  bool await_ready() const noexcept { return false; }
  void await_suspend(std::coroutine_handle<> h) {
    slot->waiter = h;
    if (!slot->conn.flush()) loop->watch_write(slot);
  }
  pg::Result await_resume() {
    if (slot->error) std::rethrow_exception(std::exchange(slot->error, nullptr));
    pg::Result r = std::move(slot->result);
    pg::check_result(r, slot->conn.raw(), statement);
    return r;
  }
};

// The driver's Session: non-blocking libpq under a coroutine. A client's session is bound
// to a connection for each transaction (its own, or one acquired from the pool).
// The statements of a workload by name, and how to send them (pgbench -M).
struct StatementSet {
  Protocol protocol = Protocol::kPrepared;
  std::map<std::string, workload::StatementDef, std::less<>> defs;  // name -> text with $1 ...
};

// `sql` with each $n replaced by the n-th value (NULL for a null): what the simple protocol
// sends. As a quoted literal, or as written with `as_text` (pgbench's script variables).
std::string inline_parameters(const std::string& sql, const pg::Params& params,
                              bool as_text = false);

class DriverSession final : public workload::Session {
 public:
  DriverSession(EventLoop* loop, const StatementSet* statements)
      : loop_(loop), statements_(statements) {
    values_.reserve(16);
  }
  void bind(ConnSlot* slot) { slot_ = slot; }
  ConnSlot* slot() const { return slot_; }

  Task<pg::Result> execute(const std::string& statement, const pg::Params& params) override;
  Task<pg::Result> query(const std::string& sql) override;
  Task<void> sleep(std::int64_t us) override;

 private:
  void send_check() const;
  EventLoop* loop_;
  const StatementSet* statements_;
  ConnSlot* slot_ = nullptr;
  std::string text_;  // the simple protocol's statement, alive until the result
  std::vector<const char*> values_;
};

}  // namespace pgslow::driver
