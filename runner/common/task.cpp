#include "common/task.h"

#include <new>

namespace pgslow::detail {

namespace {

#if defined(__SANITIZE_ADDRESS__)
constexpr bool kCaching = false;
#else
constexpr bool kCaching = true;
#endif

constexpr std::size_t kGrain = 64;     // size classes of 64 bytes
constexpr std::size_t kClasses = 32;   // frames up to 2 KB are kept; larger ones are not
constexpr std::size_t kPerClass = 64;  // a worker has a few frames per client in flight

struct FreeFrame {
  FreeFrame* next;
};

// Trivially destructible, so it stays usable while other thread_locals are destroyed;
// `Drain` returns its frames to the heap when the thread ends.
struct Cache {
  FreeFrame* head[kClasses];
  std::size_t count[kClasses];
  bool closed;
};
thread_local Cache cache;

struct Drain {
  ~Drain() {
    for (std::size_t c = 0; c < kClasses; ++c) {
      while (FreeFrame* f = cache.head[c]) {
        cache.head[c] = f->next;
        ::operator delete(f);
      }
      cache.count[c] = 0;
    }
    cache.closed = true;  // frames freed after this go straight to the heap
  }
};

std::size_t class_of(std::size_t size) {
  return (size + kGrain - 1) / kGrain;
}

// Registers the thread's Drain before its cache first holds a frame.
void drain_at_exit() {
  thread_local Drain drain;
}

}  // namespace

void* allocate_frame(std::size_t size) {
  const std::size_t c = class_of(size);
  if (!kCaching || c >= kClasses) return ::operator new(size);
  if (FreeFrame* f = cache.head[c]) {
    cache.head[c] = f->next;
    --cache.count[c];
    return f;
  }
  return ::operator new(c* kGrain);
}

void free_frame(void* frame, std::size_t size) noexcept {
  const std::size_t c = class_of(size);
  if (!kCaching || c >= kClasses) {
    ::operator delete(frame);
    return;
  }
  if (cache.closed || cache.count[c] >= kPerClass) {
    ::operator delete(frame);
    return;
  }
  drain_at_exit();
  auto* f = static_cast<FreeFrame*>(frame);
  f->next = cache.head[c];
  cache.head[c] = f;
  ++cache.count[c];
}

}  // namespace pgslow::detail
