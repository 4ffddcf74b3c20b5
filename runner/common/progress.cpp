#include "common/progress.h"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <mutex>

#include "common/clock.h"
#include "common/format.h"

namespace pgslow {

// The one line rewritten in place on a terminal, and the lines written around it: each write
// first erases the status line if one is showing, so nothing is left half-overwritten.
class StatusLine {
 public:
  explicit StatusLine(std::function<void(std::string_view)> write) : write_(std::move(write)) {}
  void show(const std::string& line) {
    std::lock_guard lock(mu_);
    write_("\r\033[K" + line);
    shown_ = true;
  }
  void clear() {
    std::lock_guard lock(mu_);
    clear_locked();
  }
  // A line that stays, below where the status line was.
  void print(const std::string& line) {
    std::lock_guard lock(mu_);
    clear_locked();
    write_(line + "\n");
  }

 private:
  void clear_locked() {
    if (!shown_) return;
    write_("\r\033[K");
    shown_ = false;
  }
  std::mutex mu_;
  std::function<void(std::string_view)> write_;
  bool shown_ = false;
};

namespace {

ConsoleOptions& process_options() {
  static ConsoleOptions options;
  return options;
}

// stderr's status line: one per process, whichever ConsoleProgress writes it.
const std::shared_ptr<StatusLine>& stderr_line() {
  static const std::shared_ptr<StatusLine> line =
      std::make_shared<StatusLine>([](std::string_view text) {
        std::fwrite(text.data(), 1, text.size(), stderr);
        std::fflush(stderr);
      });
  return line;
}

ConsoleSink stderr_sink() {
  static const bool terminal = isatty(STDOUT_FILENO) != 0 && isatty(STDERR_FILENO) != 0;
  return {nullptr, terminal, [] { return static_cast<double>(now_us()) / 1e6; }};
}

}  // namespace

std::string tick_line(const ProgressTick& t) {
  return fmt::format("{:5.1f} s{}  tps {:.0f}  p99 {}  failed {}", t.elapsed_s,
                     t.warmup ? " (warm-up)" : "", t.tps, format_latency_us(t.p99_us),
                     format_count(t.failed));
}

void set_console_options(const ConsoleOptions& options) {
  process_options() = options;
}

void clear_status_line() {
  stderr_line()->clear();
}

ConsoleProgress::ConsoleProgress() : ConsoleProgress(process_options(), stderr_sink()) {}

ConsoleProgress::ConsoleProgress(const ConsoleOptions& options, ConsoleSink sink)
    : options_(options),
      terminal_(sink.terminal),
      now_s_(std::move(sink.now_s)),
      line_(sink.write ? std::make_shared<StatusLine>(std::move(sink.write)) : stderr_line()) {}

ConsoleProgress::~ConsoleProgress() {
  line_->clear();
}

void ConsoleProgress::update(const std::string& line) {
  if (status_line()) {
    line_->show(line);
  } else if (options_.every_s > 0) {
    const double now = now_s_();
    if (last_update_s_ >= 0 && now - last_update_s_ < options_.every_s) return;
    last_update_s_ = now;
    line_->print(line);
  }
}

void ConsoleProgress::note(const std::string& line) {
  if (!options_.quiet) line_->print(line);
}

// -P N: the report covers the ticks since the last one, as pgbench's does: the transactions
// per second over those seconds, and the worst second's p99. A tick a little early (the
// driver's ticks are about a second apart, never exactly) still makes its report.
constexpr double kEarly = 0.25;

void ConsoleProgress::tick(const ProgressTick& t) {
  if (status_line()) {
    line_->show(tick_line(t));
    return;
  }
  if (options_.every_s <= 0) return;
  if (t.elapsed_s < last_elapsed_s_ || next_report_s_ == 0) {  // a new run
    last_elapsed_s_ = 0;
    next_report_s_ = options_.every_s;
    interval_s_ = interval_tx_ = interval_p99_us_ = 0;
  }
  const double seconds = t.elapsed_s - last_elapsed_s_;
  last_elapsed_s_ = t.elapsed_s;
  interval_s_ += seconds;
  interval_tx_ += t.tps * seconds;
  interval_p99_us_ = std::max(interval_p99_us_, t.p99_us);
  if (t.elapsed_s + kEarly < next_report_s_) return;
  ProgressTick report = t;
  report.tps = interval_s_ > 0 ? interval_tx_ / interval_s_ : t.tps;
  report.p99_us = interval_p99_us_;
  line_->print(tick_line(report));
  interval_s_ = interval_tx_ = interval_p99_us_ = 0;
  while (next_report_s_ <= t.elapsed_s + kEarly) next_report_s_ += options_.every_s;
}

}  // namespace pgslow
