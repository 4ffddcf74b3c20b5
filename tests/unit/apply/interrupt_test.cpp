#include "apply/interrupt.h"

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <cstdlib>

namespace pgslow::apply {
namespace {

TEST(InterruptGuard, SigintSetsTheStopFlagAndMeans130) {
  InterruptGuard::reset_for_tests();
  {
    InterruptGuard guard;
    EXPECT_FALSE(InterruptGuard::stop_flag()->load());
    EXPECT_NO_THROW(InterruptGuard::throw_if_interrupted());
    ::raise(SIGINT);
    EXPECT_TRUE(InterruptGuard::stop_flag()->load());
    EXPECT_EQ(InterruptGuard::signal_number(), SIGINT);
    try {
      InterruptGuard::throw_if_interrupted();
      FAIL() << "no Interrupted thrown";
    } catch (const Interrupted& e) {
      EXPECT_EQ(e.code(), kExitInterrupted);
      EXPECT_EQ(e.code(), 130);
    }
  }
  InterruptGuard::reset_for_tests();
}

TEST(InterruptGuard, SigtermMeans143AndHandlersAreRestored) {
  InterruptGuard::reset_for_tests();
  struct sigaction before {};
  sigaction(SIGTERM, nullptr, &before);
  {
    InterruptGuard outer;
    InterruptGuard inner;  // nesting keeps the handler
    ::raise(SIGTERM);
    EXPECT_TRUE(InterruptGuard::interrupted());
    EXPECT_EQ(Interrupted(InterruptGuard::signal_number()).code(), 143);
  }
  struct sigaction after {};
  sigaction(SIGTERM, nullptr, &after);
  EXPECT_EQ(after.sa_handler, before.sa_handler);
  InterruptGuard::reset_for_tests();
}

TEST(CrashPoint, DoesNothingUnlessAsked) {
  ::unsetenv("PGSLOW_CRASH_AT");
  crash_point(phase::kJournalWritten);
  ::setenv("PGSLOW_CRASH_AT", "restoring", 1);
  crash_point(phase::kJournalWritten);  // another phase
  ::unsetenv("PGSLOW_CRASH_AT");
  SUCCEED();
}

// Runs the crash hook at `phase_name` in a child process, which then does `then` (the rest
// of the phase's work) and exits 0; returns the signal that ended the child, 0 if none did.
template <typename Then>
int exit_signal_of_child_at(const char* phase_name, const char* after_ms, Then then) {
  pid_t child = ::fork();
  if (child == 0) {
    ::setenv("PGSLOW_CRASH_AT", phase_name, 1);
    if (after_ms) ::setenv("PGSLOW_CRASH_AFTER_MS", after_ms, 1);
    crash_point(phase_name);
    then();
    ::_exit(0);
  }
  int status = 0;
  ::waitpid(child, &status, 0);
  return WIFSIGNALED(status) ? WTERMSIG(status) : 0;
}

TEST(CrashPoint, KillsAtTheNamedPhase) {
  EXPECT_EQ(exit_signal_of_child_at("half-applied", nullptr, [] {}), SIGKILL);
  // The hook's thread kills the child while it "works".
  EXPECT_EQ(exit_signal_of_child_at("restarting", "20", [] { ::pause(); }), SIGKILL);
}

// A phase whose work is over before the delay is up: the kill still lands, before the journal
// is removed (what remove_journal does first), never as a clean exit.
TEST(CrashPoint, ADelayedKillLandsBeforeTheJournalIsRemoved) {
  EXPECT_EQ(exit_signal_of_child_at("restoring", "30", [] { await_armed_crash(); }), SIGKILL);
}

TEST(CrashPoint, AwaitingReturnsAtOnceWhenNothingIsArmed) {
  ::unsetenv("PGSLOW_CRASH_AT");
  await_armed_crash();
  SUCCEED();
}

// PGSLOW_CRASH_SIGNAL=TERM: the hook delivers SIGTERM to this thread before it returns, so the
// handler has set the interrupt flags when the phase's work goes on.
TEST(CrashPoint, SendsTheSignalItIsGiven) {
  InterruptGuard::reset_for_tests();
  ::setenv("PGSLOW_CRASH_AT", "restoring", 1);
  ::setenv("PGSLOW_CRASH_SIGNAL", "TERM", 1);
  {
    InterruptGuard guard;
    crash_point(phase::kRestoring);
    EXPECT_TRUE(InterruptGuard::interrupted());
    EXPECT_EQ(InterruptGuard::signal_number(), SIGTERM);
  }
  ::unsetenv("PGSLOW_CRASH_AT");
  ::unsetenv("PGSLOW_CRASH_SIGNAL");
  InterruptGuard::reset_for_tests();
}

}  // namespace
}  // namespace pgslow::apply
