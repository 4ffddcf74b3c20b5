#pragma once
// How long-running work (loading, a measured stage) reports progress. The CLI prints a line
// once a second to stderr; tests pass a silent one. Besides the text lines, a run reports
// structured events (one tick a second, one marker per stage) that the live dashboard
// (workshop/dashboard.h) charts; a Progress that does not care ignores them.

#include <string>
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
};

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

 private:
  Progress& lines_;
  Progress& events_;
};

// Prints nothing: tests and --quiet.
class SilentProgress final : public Progress {
 public:
  void update(const std::string&) override {}
  void note(const std::string&) override {}
};

// Writes to stderr; one line per update when stderr is not a terminal (CI logs stay readable).
class ConsoleProgress final : public Progress {
 public:
  void update(const std::string& line) override;
  void note(const std::string& line) override;
};

}  // namespace pgslow
