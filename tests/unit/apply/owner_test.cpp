#include "apply/owner.h"

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

namespace pgslow::apply {
namespace {

TEST(Owner, ParsesStartTimeDespiteOddCommandNames) {
  // Field 22 is the start time; a command name may hold spaces and parentheses.
  std::string stat =
      "1234 (a) b (c) S 1 1234 1234 0 -1 4194560 100 0 0 0 1 2 0 0 20 0 1 0 987654 1000 10";
  EXPECT_EQ(parse_start_time(stat), 987654u);
  EXPECT_FALSE(parse_start_time("1234 (x) S 1 2").has_value());
  EXPECT_FALSE(parse_start_time("garbage").has_value());
}

TEST(Owner, ThisProcessIsAlive) {
  ProcessIdentity me = current_process();
  EXPECT_EQ(me.pid, ::getpid());
  EXPECT_GT(me.start_time, 0u);
  EXPECT_FALSE(me.boot_id.empty());
  EXPECT_TRUE(is_alive(me));
}

TEST(Owner, AReusedPidIsNotTheOwner) {
  ProcessIdentity me = current_process();
  ProcessIdentity other = me;
  other.start_time = me.start_time + 1;  // same pid, another process
  EXPECT_FALSE(is_alive(other));
  ProcessIdentity rebooted = me;
  rebooted.boot_id = "00000000-0000-0000-0000-000000000000";  // before a power loss
  EXPECT_FALSE(is_alive(rebooted));
}

TEST(Owner, ADeadProcessIsGone) {
  pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) ::_exit(0);
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  ProcessIdentity gone{static_cast<int>(child), 12345, current_process().boot_id};
  EXPECT_FALSE(is_alive(gone));
  EXPECT_FALSE(process_start_time(child).has_value());
  EXPECT_FALSE(is_alive(ProcessIdentity{}));
}

}  // namespace
}  // namespace pgslow::apply
