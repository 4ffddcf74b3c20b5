#include "driver/pool.h"

#include <algorithm>

namespace pgslow::driver {

SharedPool::SharedPool(int size) {
  for (int i = 0; i < size; ++i) slots_.push_back(std::make_unique<ConnSlot>());
}

void SharedPool::add_free(ConnSlot* slot) {
  std::lock_guard lock(mu_);
  free_.push_back(slot);
}

ConnSlot* SharedPool::acquire_or_wait(const Waiter& waiter) {
  std::lock_guard lock(mu_);
  if (!free_.empty() && waiters_.empty()) {
    ConnSlot* s = free_.back();
    free_.pop_back();
    return s;
  }
  waiters_.push_back(waiter);
  return nullptr;
}

void SharedPool::release(ConnSlot* slot, std::int64_t now) {
  std::unique_lock lock(mu_);
  if (waiters_.empty()) {
    free_.push_back(slot);
    return;
  }
  Waiter w = waiters_.front();
  waiters_.pop_front();
  *w.got = slot;
  *w.granted_at = now;
  // Posted under the lock: cancel_waiters() either removed this waiter before (and then we
  // did not see it) or sees it gone, so a waiter is resumed exactly once.
  w.inbox->post(w.h);
}

std::vector<std::coroutine_handle<>> SharedPool::cancel_waiters(const Inbox* inbox) {
  std::lock_guard lock(mu_);
  std::vector<std::coroutine_handle<>> out;
  auto it = std::remove_if(waiters_.begin(), waiters_.end(), [&](const Waiter& w) {
    if (w.inbox != inbox) return false;
    *w.got = nullptr;
    out.push_back(w.h);
    return true;
  });
  waiters_.erase(it, waiters_.end());
  return out;
}

std::size_t SharedPool::free_count() {
  std::lock_guard lock(mu_);
  return free_.size();
}

std::size_t SharedPool::waiting_count() {
  std::lock_guard lock(mu_);
  return waiters_.size();
}

}  // namespace pgslow::driver
