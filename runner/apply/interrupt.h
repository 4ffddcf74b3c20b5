#pragma once
// The one place pgslow handles SIGINT and SIGTERM. The handler only sets flags (async-signal
// safe); the code that changes the server polls them between steps, the workload driver polls
// stop_flag() and ends the measurement, and then the configuration is restored before pgslow
// exits with 130 (SIGINT) or 143 (SIGTERM).
//
// Also the test-only crash hook: PGSLOW_CRASH_AT=<phase> makes the process kill itself with
// SIGKILL when it reaches that phase (after PGSLOW_CRASH_AFTER_MS milliseconds, if set, while
// the work of the phase goes on, and before the journal is removed at the latest), so the
// fault-injection tests can prove recovery;
// PGSLOW_CRASH_SIGNAL picks another signal (STOP: hold there for the test to signal it).

#include <atomic>
#include <string_view>

#include "common/errors.h"

namespace pgslow::apply {

// The run was stopped by a signal; the exit code is 130 or 143.
class Interrupted : public Error {
 public:
  explicit Interrupted(int signal_number);
  int signal_number() const { return signal_; }

 private:
  int signal_;
};

// Installs the SIGINT/SIGTERM handlers for its lifetime (nesting is fine: the outermost guard
// restores the previous handlers). A first signal asks pgslow to stop and restore; a second
// says restoring is under way; a third exits at once (the journal stays, and the next pgslow
// command restores the server).
class InterruptGuard {
 public:
  InterruptGuard();
  ~InterruptGuard();
  InterruptGuard(const InterruptGuard&) = delete;
  InterruptGuard& operator=(const InterruptGuard&) = delete;

  // For the workload driver: becomes true when a stop was requested.
  static const std::atomic<bool>* stop_flag();
  static bool interrupted();
  static int signal_number();  // 0, SIGINT or SIGTERM
  // Throws Interrupted when a signal arrived.
  static void throw_if_interrupted();
  // Tests only: forget a previous signal.
  static void reset_for_tests();
};

// Names of the crash phases the fault-injection tests use (docs/journal.md).
namespace phase {
inline constexpr std::string_view kJournalWritten = "journal-written";
inline constexpr std::string_view kHalfApplied = "half-applied";
inline constexpr std::string_view kRestarting = "restarting";
inline constexpr std::string_view kWorkload = "workload";
inline constexpr std::string_view kRestoring = "restoring";
}  // namespace phase

// Test-only hook: when PGSLOW_CRASH_AT equals `name`, SIGKILL this process (at once, or after
// PGSLOW_CRASH_AFTER_MS milliseconds from a background thread while work continues).
// PGSLOW_CRASH_SIGNAL=STOP|TERM|INT sends that signal instead: STOP holds the process at the
// phase so a test can deliver SIGTERM or SIGINT there from outside (then SIGCONT), exactly in
// the window it means to test, without sleeping.
void crash_point(std::string_view name);

// Test-only: when a delayed crash (PGSLOW_CRASH_AFTER_MS) is armed and has not landed yet,
// wait for it. Called just before the journal is removed, so that a kill meant for a phase
// lands in that phase at the latest at its last moment, however fast the machine is, and never
// after the change is over. Returns at once when no delayed crash is armed.
void await_armed_crash();

}  // namespace pgslow::apply
