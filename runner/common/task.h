#pragma once
// Task<T>: a lazy C++20 coroutine, so a client's transaction reads as straight-line code
// (`auto r = co_await session.execute(...)`) while the driver multiplexes many clients per
// thread. Awaiting a Task starts it and resumes the awaiter when it finishes (symmetric
// transfer: no stack growth however deep the chain). Exceptions propagate to the awaiter.

#include <coroutine>
#include <cstddef>
#include <exception>
#include <optional>
#include <utility>

namespace pgslow {

template <typename T = void>
class Task;

namespace detail {

// Coroutine frames, kept per thread for reuse: the driver starts a few tasks per statement
// (the transaction, its retries, each statement), and malloc/free of their frames was a
// visible part of its CPU per transaction. Frames may be freed on another thread (they go
// to that thread's cache). Plain malloc under AddressSanitizer, so it still sees frames.
void* allocate_frame(std::size_t size);
void free_frame(void* frame, std::size_t size) noexcept;

struct PromiseBase {
  static void* operator new(std::size_t size) { return allocate_frame(size); }
  static void operator delete(void* frame, std::size_t size) noexcept { free_frame(frame, size); }

  std::coroutine_handle<> continuation = std::noop_coroutine();
  std::exception_ptr error;

  std::suspend_always initial_suspend() noexcept { return {}; }
  struct FinalAwaiter {
    bool await_ready() noexcept { return false; }
    template <typename P>
    std::coroutine_handle<> await_suspend(std::coroutine_handle<P> h) noexcept {
      return h.promise().continuation;
    }
    void await_resume() noexcept {}
  };
  FinalAwaiter final_suspend() noexcept { return {}; }
  void unhandled_exception() noexcept { error = std::current_exception(); }
};

template <typename T>
struct Promise : PromiseBase {
  std::optional<T> value;
  Task<T> get_return_object() noexcept;
  template <typename U>
  void return_value(U&& v) {
    value.emplace(std::forward<U>(v));
  }
  T take() {
    if (error) std::rethrow_exception(error);
    return std::move(*value);
  }
};

template <>
struct Promise<void> : PromiseBase {
  Task<void> get_return_object() noexcept;
  void return_void() noexcept {}
  void take() {
    if (error) std::rethrow_exception(error);
  }
};

}  // namespace detail

template <typename T>
class [[nodiscard]] Task {
 public:
  using promise_type = detail::Promise<T>;
  using Handle = std::coroutine_handle<promise_type>;

  Task() = default;
  explicit Task(Handle h) noexcept : h_(h) {}
  Task(Task&& other) noexcept : h_(std::exchange(other.h_, {})) {}
  Task& operator=(Task&& other) noexcept {
    if (this != &other) {
      if (h_) h_.destroy();
      h_ = std::exchange(other.h_, {});
    }
    return *this;
  }
  Task(const Task&) = delete;
  Task& operator=(const Task&) = delete;
  ~Task() {
    if (h_) h_.destroy();
  }

  bool valid() const { return static_cast<bool>(h_); }
  bool done() const { return h_ && h_.done(); }

  // For a driver that owns a top-level task: start it, or resume it after an await.
  void resume() { h_.resume(); }
  // The result of a finished task; rethrows its exception.
  T result() { return h_.promise().take(); }

  auto operator co_await() && noexcept {
    struct Awaiter {
      Handle h;
      bool await_ready() noexcept { return false; }
      std::coroutine_handle<> await_suspend(std::coroutine_handle<> awaiting) noexcept {
        h.promise().continuation = awaiting;
        return h;
      }
      T await_resume() { return h.promise().take(); }
    };
    return Awaiter{h_};
  }

 private:
  Handle h_;
};

namespace detail {
template <typename T>
Task<T> Promise<T>::get_return_object() noexcept {
  return Task<T>(std::coroutine_handle<Promise<T>>::from_promise(*this));
}
inline Task<void> Promise<void>::get_return_object() noexcept {
  return Task<void>(std::coroutine_handle<Promise<void>>::from_promise(*this));
}
}  // namespace detail

// Runs a task whose awaits all complete synchronously (a blocking Session: loaders, checks,
// tests) and returns its result. It is a programming error to use it with a task that
// suspends on I/O.
template <typename T>
T run_synchronously(Task<T> task) {
  task.resume();
  if (!task.done()) std::terminate();
  return task.result();
}

}  // namespace pgslow
