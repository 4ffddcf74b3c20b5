#pragma once
// Runs the built pgslow binary as a child process the test can signal or kill at a chosen
// moment (common/process.h waits for its child; these tests need its pid while it runs), or
// hold at a phase of its work (the crash hook, docs/journal.md) and signal it exactly there.

#include <chrono>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "common/process.h"

namespace pgslow::testing {

class PgslowProcess {
 public:
  // Starts `pgslow args...` with extra environment variables ("NAME=value").
  PgslowProcess(const std::vector<std::string>& args, const std::vector<std::string>& env = {});
  ~PgslowProcess();
  PgslowProcess(const PgslowProcess&) = delete;
  PgslowProcess& operator=(const PgslowProcess&) = delete;

  int pid() const { return pid_; }
  void signal(int sig);
  // Waits for the exit (at most `timeout`; then kills it and fails the test).
  void wait(std::chrono::seconds timeout = std::chrono::seconds(120));
  // Polls until `text` appears in the output or the process exits; true when it appeared.
  bool wait_for_output(const std::string& text,
                       std::chrono::seconds timeout = std::chrono::seconds(60));
  bool exited() const { return done_; }
  // Waits until the process stops itself (the crash hook with PGSLOW_CRASH_SIGNAL=STOP holds it
  // at a phase); false when it exited instead or `timeout` passed.
  bool wait_until_stopped(std::chrono::seconds timeout = std::chrono::seconds(120));
  // Delivers `sig` to the stopped process and lets it go on: the signal is handled at the phase
  // it stopped at, before anything else runs.
  void signal_and_continue(int sig);

  int exit_code() const { return exit_code_; }  // -1 when killed by a signal
  int killed_by() const { return signal_; }     // 0 when it exited
  std::string output() const;                   // stdout and stderr
  // Its peak resident memory (getrusage's ru_maxrss of the child, in kB) once it has exited.
  long max_rss_kb() const { return max_rss_kb_; }

 private:
  bool poll();
  int pid_ = -1;
  bool done_ = false;
  int exit_code_ = -1;
  int signal_ = 0;
  long max_rss_kb_ = 0;
  std::filesystem::path output_file_;
};

struct Finished {
  int exit_code = -1;
  int signal = 0;
  std::string output;
  long max_rss_kb = 0;  // peak resident memory
};

// Runs pgslow to completion (at most `timeout`; then kills it and fails the test).
Finished run_pgslow(const std::vector<std::string>& args, const std::vector<std::string>& env = {},
                    std::chrono::seconds timeout = std::chrono::seconds(120));
// The same with `--workdir workdir` in front of `args`.
Finished run_pgslow_in(const std::filesystem::path& workdir, std::vector<std::string> args,
                       std::chrono::seconds timeout = std::chrono::seconds(120));
// pgslow on the shared cluster's workdir (cluster_workdir()), run to completion within five
// minutes, with `env` added to its environment.
ProcessResult pgslow(std::vector<std::string> args, std::vector<std::string> env = {});

// `output` with each line break and the indent after it read as one space: the table's
// footnotes wrap to the output's width, so a phrase in one may be split across lines.
std::string unwrapped(const std::string& output);

}  // namespace pgslow::testing
