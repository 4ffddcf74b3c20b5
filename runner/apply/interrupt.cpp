#include "apply/interrupt.h"

#include <unistd.h>

#include <chrono>
#include <condition_variable>
#include <csignal>
#include <cstdlib>
#include <mutex>
#include <string>
#include <thread>

namespace pgslow::apply {

namespace {

static_assert(std::atomic<bool>::is_always_lock_free && std::atomic<int>::is_always_lock_free,
              "signal handlers may only touch lock-free atomics");

std::atomic<bool> g_stop{false};
std::atomic<int> g_signal{0};
std::atomic<int> g_count{0};
int g_depth = 0;
struct sigaction g_old_int {};
struct sigaction g_old_term {};

void say(const char* text) {
  // write(2) is async-signal safe; stdio is not.
  std::size_t n = 0;
  while (text[n] != '\0') ++n;
  ssize_t ignored = ::write(STDERR_FILENO, text, n);
  (void)ignored;
}

extern "C" void on_signal(int sig) {
  int count = g_count.fetch_add(1) + 1;
  if (count == 1) {
    g_signal.store(sig);
    g_stop.store(true);
    say(sig == SIGINT ? "\npgslow: interrupted (SIGINT): stopping and restoring the server's "
                        "configuration...\n"
                      : "\npgslow: terminated (SIGTERM): stopping and restoring the server's "
                        "configuration...\n");
  } else if (count == 2) {
    say("pgslow: still restoring the configuration; press Ctrl-C again to quit at once (the "
        "next pgslow command will then restore it)\n");
  } else {
    say("pgslow: quitting without restoring; run `pgslow recover` to restore the server\n");
    ::signal(sig, SIG_DFL);
    ::raise(sig);
  }
}

}  // namespace

Interrupted::Interrupted(int signal_number)
    : Error(signal_number == SIGTERM ? kExitTerminated : kExitInterrupted,
            signal_number == SIGTERM ? "terminated by SIGTERM" : "interrupted by SIGINT"),
      signal_(signal_number) {}

InterruptGuard::InterruptGuard() {
  if (g_depth++ > 0) return;
  struct sigaction action {};
  action.sa_handler = on_signal;
  sigemptyset(&action.sa_mask);
  // SA_RESTART: a signal must not make a blocking call (waitpid on pg_ctl, a libpq read) fail
  // halfway; the flag is polled between steps instead.
  action.sa_flags = SA_RESTART;
  sigaction(SIGINT, &action, &g_old_int);
  sigaction(SIGTERM, &action, &g_old_term);
}

InterruptGuard::~InterruptGuard() {
  if (--g_depth > 0) return;
  sigaction(SIGINT, &g_old_int, nullptr);
  sigaction(SIGTERM, &g_old_term, nullptr);
}

const std::atomic<bool>* InterruptGuard::stop_flag() {
  return &g_stop;
}
bool InterruptGuard::interrupted() {
  return g_stop.load();
}
int InterruptGuard::signal_number() {
  return g_signal.load();
}

void InterruptGuard::throw_if_interrupted() {
  if (g_stop.load()) throw Interrupted(g_signal.load());
}

void InterruptGuard::reset_for_tests() {
  g_stop.store(false);
  g_signal.store(0);
  g_count.store(0);
}

namespace {

// The signal the crash hook sends (PGSLOW_CRASH_SIGNAL), SIGKILL by default.
int crash_signal() {
  const char* name = std::getenv("PGSLOW_CRASH_SIGNAL");
  const std::string_view n = name ? name : "";
  if (n == "STOP") return SIGSTOP;
  if (n == "TERM") return SIGTERM;
  if (n == "INT") return SIGINT;
  return SIGKILL;
}

// A delayed crash, once armed, must land while the journal still exists: otherwise a fast
// machine finishes the phase first and the test sees a clean exit, not a crash.
std::mutex g_crash_mutex;
std::condition_variable g_crash_sent;
bool g_crash_armed = false;
bool g_crash_done = false;

}  // namespace

void crash_point(std::string_view name) {
  const char* at = std::getenv("PGSLOW_CRASH_AT");
  if (at == nullptr || name != at) return;
  const int sig = crash_signal();
  long delay_ms = 0;
  if (const char* after = std::getenv("PGSLOW_CRASH_AFTER_MS"); after && *after)
    delay_ms = std::strtol(after, nullptr, 10);
  if (delay_ms <= 0) {
    // raise() delivers to this thread before it returns: a handled signal (TERM, INT) has set
    // the interrupt flags, and after STOP the test's signals sent meanwhile are handled first.
    ::raise(sig);
    return;
  }
  {
    std::lock_guard lock(g_crash_mutex);
    g_crash_armed = true;
    g_crash_done = false;
  }
  std::thread([delay_ms, sig] {
    std::this_thread::sleep_for(std::chrono::milliseconds(delay_ms));
    ::raise(sig);
    {
      std::lock_guard lock(g_crash_mutex);
      g_crash_done = true;
    }
    g_crash_sent.notify_all();
  }).detach();
}

void await_armed_crash() {
  std::unique_lock lock(g_crash_mutex);
  if (!g_crash_armed) return;
  g_crash_sent.wait(lock, [] { return g_crash_done; });
  g_crash_armed = false;
}

}  // namespace pgslow::apply
