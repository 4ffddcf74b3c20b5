#include "common/task.h"

#include <gtest/gtest.h>

#include <stdexcept>

namespace pgslow {
namespace {

Task<int> answer() {
  co_return 42;
}

Task<int> add_one() {
  int v = co_await answer();
  co_return v + 1;
}

Task<void> fails() {
  throw std::runtime_error("boom");
  co_return;
}

Task<int> catches() {
  try {
    co_await fails();
  } catch (const std::runtime_error& e) {
    co_return 7;
  }
  co_return 0;
}

// A chain of awaits resumes through symmetric transfer. Optimised builds turn that into tail
// calls; an unoptimised ASan build does not, so the depth stays within a default stack.
Task<int> count_down(int n) {
  if (n == 0) co_return 0;
  co_return 1 + co_await count_down(n - 1);
}

TEST(Task, ReturnsValueThroughAwaits) {
  EXPECT_EQ(run_synchronously(add_one()), 43);
}

TEST(Task, PropagatesExceptionsToTheAwaiter) {
  EXPECT_EQ(run_synchronously(catches()), 7);
  EXPECT_THROW(run_synchronously(fails()), std::runtime_error);
}

TEST(Task, IsLazyUntilResumed) {
  Task<int> t = answer();
  EXPECT_FALSE(t.done());
  t.resume();
  EXPECT_TRUE(t.done());
  EXPECT_EQ(t.result(), 42);
}

TEST(Task, LongChains) {
  EXPECT_EQ(run_synchronously(count_down(1000)), 1000);
}

}  // namespace
}  // namespace pgslow
