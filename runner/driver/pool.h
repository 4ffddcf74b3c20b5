#pragma once
// The application's connection pool: one FIFO pool shared by every worker thread, as an
// application's pool is shared by its threads. A client asks for a connection; when none is
// free it queues, and the first client in the queue gets the next connection released, on
// whichever worker it runs. Pool wait is measured from the request to the grant.
//
// A connection handed across threads moves between the workers' epoll sets: an idle pooled
// connection is in no epoll set; the worker that acquires it adds it to its own set, and
// detaches it before releasing it. Every field of a ConnSlot is therefore touched by one
// thread at a time, and the pool's mutex orders the hand-over (release happens-before grant).

#include <coroutine>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <vector>

#include "driver/session.h"

namespace pgslow::driver {

// Wakes a worker from another thread (the worker that owns a waiting client).
class Inbox {
 public:
  virtual void post(std::coroutine_handle<> h) = 0;

 protected:
  ~Inbox() = default;
};

class SharedPool {
 public:
  // A client waiting for a connection: resumed on its own worker (through `inbox`) with
  // `*got` set (nullptr: the run ended) and `*granted_at` the grant time.
  struct Waiter {
    Inbox* inbox = nullptr;
    std::coroutine_handle<> h;
    ConnSlot** got = nullptr;
    std::int64_t* granted_at = nullptr;
  };

  explicit SharedPool(int size);
  int size() const { return static_cast<int>(slots_.size()); }
  ConnSlot& slot(int i) { return *slots_[static_cast<std::size_t>(i)]; }

  // A connection opened by a worker joins the free list (not attached to any epoll set).
  void add_free(ConnSlot* slot);
  // A free connection, or nullptr after queueing `waiter` (FIFO).
  ConnSlot* acquire_or_wait(const Waiter& waiter);
  // Gives `slot` to the first waiter (posted to its worker) or puts it back. The caller has
  // detached it from its epoll set.
  void release(ConnSlot* slot, std::int64_t now);
  // The run is ending for the worker behind `inbox`: its waiters are resumed with no
  // connection. Returns their handles for the worker to resume itself.
  std::vector<std::coroutine_handle<>> cancel_waiters(const Inbox* inbox);
  // Counts for tests.
  std::size_t free_count();
  std::size_t waiting_count();

 private:
  std::vector<std::unique_ptr<ConnSlot>> slots_;
  std::mutex mu_;
  std::vector<ConnSlot*> free_;  // LIFO: the warmest connection first, as most pools do
  std::deque<Waiter> waiters_;   // FIFO
};

}  // namespace pgslow::driver
