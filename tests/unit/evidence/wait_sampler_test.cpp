// The wait sampler's /proc look-up of commit_delay's unreported sleep, over a made-up /proc:
// no server.

#include "evidence/wait_sampler.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <map>

namespace pgslow::evidence {
namespace {

constexpr int kPostmaster = 100;

// pid 1: asleep on a timer (the delay); 2: running; 3: asleep in a latch wait (epoll); 4: a
// timer sleep of a process that is not the postmaster's child; 5: gone.
std::optional<BackendSleep> made_up_proc(int pid) {
  static const std::map<int, BackendSleep> procs = {
      {1, {'S', kPostmaster, "hrtimer_nanosleep"}},
      {2, {'R', kPostmaster, "0"}},
      {3, {'S', kPostmaster, "ep_poll"}},
      {4, {'S', 7, "hrtimer_nanosleep"}},
  };
  const auto it = procs.find(pid);
  if (it == procs.end()) return std::nullopt;
  return it->second;
}

TEST(CommitDelaySleep, OnlyATimerSleepOfTheServersBackendLeavesCpu) {
  std::map<std::string, std::uint64_t> seen = {{"CPU", 5}, {"LWLock:WALWrite", 3}};
  count_commit_delay_sleeps(seen, "1,2,3,4,5", kPostmaster, made_up_proc);
  EXPECT_EQ(seen.at("CPU"), 4u);
  EXPECT_EQ(seen.at(results::kCommitDelayFromProc), 1u);
  EXPECT_EQ(seen.at("LWLock:WALWrite"), 3u);  // the reported waits are left alone
}

TEST(CommitDelaySleep, EveryCpuBackendAsleepLeavesNoCpuRow) {
  std::map<std::string, std::uint64_t> seen = {{"CPU", 2}};
  count_commit_delay_sleeps(seen, "1,1", kPostmaster, made_up_proc);
  EXPECT_EQ(seen.count("CPU"), 0u);
  EXPECT_EQ(seen.at(results::kCommitDelayFromProc), 2u);
  // Never more moved than the CPU row held, whatever the pid list says.
  std::map<std::string, std::uint64_t> one = {{"CPU", 1}};
  count_commit_delay_sleeps(one, "1,1,1", kPostmaster, made_up_proc);
  EXPECT_EQ(one.at(results::kCommitDelayFromProc), 1u);
  EXPECT_EQ(one.count("CPU"), 0u);
}

TEST(CommitDelaySleep, TimerSleepsAreNanosleepAndSelectNotLatchWaits) {
  EXPECT_TRUE(is_timer_sleep("hrtimer_nanosleep"));  // pg_usleep from 16
  EXPECT_TRUE(is_timer_sleep("do_nanosleep"));
  EXPECT_TRUE(is_timer_sleep("poll_schedule_timeout.constprop.0"));  // select() on 15
  EXPECT_TRUE(is_timer_sleep("do_select"));
  EXPECT_FALSE(is_timer_sleep("ep_poll"));  // WaitEventSet: PostgreSQL reports those
  EXPECT_FALSE(is_timer_sleep("futex_wait_queue"));
  EXPECT_FALSE(is_timer_sleep("0"));
  EXPECT_FALSE(is_timer_sleep(""));
}

TEST(CommitDelaySleep, ThisProcessIsReadFromProc) {
  const auto self = read_backend_sleep(static_cast<int>(::getpid()));
  ASSERT_TRUE(self.has_value());
  EXPECT_EQ(self->state, 'R');  // it is running this line
  EXPECT_EQ(self->ppid, static_cast<int>(::getppid()));
  EXPECT_FALSE(read_backend_sleep(0).has_value());
}

}  // namespace
}  // namespace pgslow::evidence
