#pragma once
// How long-running work (loading, a measured stage) reports progress. Besides the text lines, a
// run reports structured events (one tick a second, one marker per stage) that the console
// prints and the live dashboard (workshop/dashboard.h) charts; a Progress that does not care
// ignores them; tests pass a silent one.
//
// On the console (ConsoleProgress, docs/user-guide.md "Progress"): when stdout and stderr are
// both terminals, the status (update, tick) is one line on stderr rewritten in place, erased
// before anything else is written (a note, a warning, the table); otherwise nothing per
// second. `-P N` (pgbench's meaning) asks for a report line every N seconds instead, on a
// terminal or not; `-q` prints no status and no notes (only the -P reports, when asked for).

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace pgslow {

// One second of a running workload, as the driver merged it from its workers.
struct ProgressTick {
  double elapsed_s = 0;  // since the clients started (warm-up included)
  bool warmup = false;   // inside the warm-up (not part of the measurement)
  double tps = 0;        // transactions completed in this second, per second
  double p50_us = 0;     // latency percentiles of this second's transactions
  double p99_us = 0;
  double failed_per_s = 0;
  std::uint64_t failed = 0;  // failures so far: the warm-up's, then the measured window's
};

// A tick as the console shows it: "  3.0 s  tps 4805  p99 4.1 ms  failed 0".
std::string tick_line(const ProgressTick& t);

// A stage begins: its name and the knobs it changes ("shared_buffers 128MB → 2MB").
struct StageMarker {
  std::string stage;
  std::vector<std::string> changes;
};

class Progress {
 public:
  virtual ~Progress() = default;
  // A status line that replaces the previous one (e.g. "load  12.0 s  420,000 rows  35 MB/s").
  virtual void update(const std::string& line) = 0;
  // A line that stays (a phase finished).
  virtual void note(const std::string& line) = 0;
  // Structured events for live views; the console prints the text lines instead.
  virtual void tick(const ProgressTick&) {}
  virtual void stage_started(const StageMarker&) {}
  // A measured run of `stage` (a stage, or the reference measured again between stages) is
  // about to start on `database` (its fresh clone of the data): live views read the
  // workload's table counters there.
  virtual void measuring(const std::string& /*stage*/, const std::string& /*database*/) {}
};

// Forwards everything to another Progress and the structured events to `events` as well:
// the console line keeps going while the dashboard listens.
class TeeProgress final : public Progress {
 public:
  TeeProgress(Progress& lines, Progress& events) : lines_(lines), events_(events) {}
  void update(const std::string& line) override { lines_.update(line); }
  void note(const std::string& line) override { lines_.note(line); }
  void tick(const ProgressTick& t) override {
    lines_.tick(t);
    events_.tick(t);
  }
  void stage_started(const StageMarker& m) override {
    lines_.stage_started(m);
    events_.stage_started(m);
  }
  void measuring(const std::string& stage, const std::string& database) override {
    lines_.measuring(stage, database);
    events_.measuring(stage, database);
  }

 private:
  Progress& lines_;
  Progress& events_;
};

// Prints nothing: tests.
class SilentProgress final : public Progress {
 public:
  void update(const std::string&) override {}
  void note(const std::string&) override {}
};

// How the console shows progress: set once from the command line (main: -q, -P N).
struct ConsoleOptions {
  bool quiet = false;  // -q: no status line, no notes
  int every_s = 0;     // -P N: a report line every N seconds (0: none)
};
void set_console_options(const ConsoleOptions& options);

// Erases the status line if one is showing on stderr: called before anything else is written
// to the terminal (the log's warnings and errors do it themselves).
void clear_status_line();

class StatusLine;

// Where a ConsoleProgress writes, and what it knows of it; tests pass their own.
struct ConsoleSink {
  std::function<void(std::string_view)> write;  // the text, as written to stderr
  bool terminal = false;                        // stdout and stderr are both terminals
  std::function<double()> now_s;                // a monotonic clock, in seconds
};

// Progress on stderr (see the top of this file). The default follows set_console_options on
// the process's stderr and its one status line.
class ConsoleProgress final : public Progress {
 public:
  ConsoleProgress();
  ConsoleProgress(const ConsoleOptions& options, ConsoleSink sink);
  ~ConsoleProgress() override;
  ConsoleProgress(const ConsoleProgress&) = delete;
  ConsoleProgress& operator=(const ConsoleProgress&) = delete;
  void update(const std::string& line) override;
  void note(const std::string& line) override;
  void tick(const ProgressTick& t) override;

 private:
  bool status_line() const { return terminal_ && !options_.quiet && options_.every_s == 0; }
  ConsoleOptions options_;
  bool terminal_;
  std::function<double()> now_s_;
  std::shared_ptr<StatusLine> line_;
  // -P N: when the last update line was printed; the ticks since the last report.
  double last_update_s_ = -1;
  double last_elapsed_s_ = 0;
  double next_report_s_ = 0;
  double interval_s_ = 0;
  double interval_tx_ = 0;
  double interval_p99_us_ = 0;
};

}  // namespace pgslow
