// The console's progress (common/progress.h) on a fake terminal and a fake clock: one line
// rewritten in place on a terminal, nothing per second otherwise, a report every N seconds
// with -P N, nothing with -q.

#include "common/progress.h"

#include <gtest/gtest.h>

#include <string>

namespace pgslow {
namespace {

constexpr const char* kErase = "\r\033[K";

struct FakeConsole {
  std::string written;
  double now = 0;
  ConsoleSink sink(bool terminal) {
    return {[this](std::string_view s) { written.append(s); }, terminal, [this] { return now; }};
  }
};

ProgressTick second(double elapsed, double tps, double p99_us = 1000) {
  ProgressTick t;
  t.elapsed_s = elapsed;
  t.tps = tps;
  t.p99_us = p99_us;
  return t;
}

int lines(const std::string& s) {
  int n = 0;
  for (char c : s) n += c == '\n';
  return n;
}

TEST(ConsoleProgress, OnATerminalTheStatusIsOneLineRewrittenInPlace) {
  FakeConsole c;
  {
    ConsoleProgress p({}, c.sink(true));
    p.update("connecting 8 clients");
    for (int i = 1; i <= 3; ++i) p.tick(second(i, 100 * i));
    EXPECT_EQ(lines(c.written), 0) << "no line is ended while the status shows";
    EXPECT_EQ(c.written, std::string(kErase) + "connecting 8 clients" + kErase +
                             tick_line(second(1, 100)) + kErase + tick_line(second(2, 200)) +
                             kErase + tick_line(second(3, 300)));
    // A note erases the status line first, then stays.
    c.written.clear();
    p.note("stage 2/5: wal-hell");
    EXPECT_EQ(c.written, std::string(kErase) + "stage 2/5: wal-hell\n");
    c.written.clear();
    p.note("configuration restored");  // nothing to erase
    EXPECT_EQ(c.written, "configuration restored\n");
    c.written.clear();
    p.tick(second(4, 400));
  }
  // Gone with the progress: what follows (the table) starts on a clean line.
  EXPECT_EQ(c.written, std::string(kErase) + tick_line(second(4, 400)) + kErase);
}

TEST(ConsoleProgress, NotATerminalPrintsNothingPerSecondButTheNotes) {
  FakeConsole c;
  ConsoleProgress p({}, c.sink(false));
  for (int i = 1; i <= 30; ++i) {
    c.now = i;
    p.update("load  " + std::to_string(i) + " s");
    p.tick(second(i, 100));
  }
  p.note("stage 1/5: baseline");
  EXPECT_EQ(c.written, "stage 1/5: baseline\n");
}

TEST(ConsoleProgress, QuietPrintsNothingAtAll) {
  for (bool terminal : {true, false}) {
    FakeConsole c;
    {
      ConsoleProgress p({.quiet = true}, c.sink(terminal));
      p.update("connecting 8 clients");
      p.tick(second(1, 100));
      p.note("stage 1/5: baseline");
    }
    EXPECT_EQ(c.written, "") << "terminal " << terminal;
  }
}

TEST(ConsoleProgress, EveryNSecondsOneReportLineOfThoseSeconds) {
  for (bool terminal : {true, false}) {
    FakeConsole c;
    ConsoleProgress p({.every_s = 2}, c.sink(terminal));
    // Seconds 1 and 2 at 100 and 300 tps, p99 1 and 5 ms: the report at 2 s says 200 tps and
    // the worse p99.
    p.tick(second(1, 100, 1000));
    EXPECT_EQ(c.written, "");
    p.tick(second(2, 300, 5000));
    EXPECT_EQ(c.written, tick_line(second(2, 200, 5000)) + "\n");
    c.written.clear();
    p.tick(second(3, 50));
    p.tick(second(4, 50));
    p.tick(second(5, 50));
    p.tick(second(6, 70));
    EXPECT_EQ(c.written, tick_line(second(4, 50)) + "\n" + tick_line(second(6, 60)) + "\n")
        << "terminal " << terminal;
    // The next run starts its own count.
    c.written.clear();
    p.tick(second(1, 10));
    EXPECT_EQ(c.written, "");
    p.tick(second(2, 30));
    EXPECT_EQ(c.written, tick_line(second(2, 20)) + "\n");
  }
}

TEST(ConsoleProgress, EveryNSecondsOneReportLineAcrossAQuarterSecondOfJitter) {
  FakeConsole c;
  ConsoleProgress p({.every_s = 1}, c.sink(false));
  // Ticks as the driver's loop makes them: about a second apart, never exactly.
  for (double t : {1.02, 2.05, 2.98, 4.01, 5.0}) p.tick(second(t, 100));
  EXPECT_EQ(lines(c.written), 5) << c.written;
}

TEST(ConsoleProgress, EveryNSecondsTheStatusLinesAreLinesAtMostEveryNSeconds) {
  FakeConsole c;
  ConsoleProgress p({.every_s = 5}, c.sink(true));
  for (int tenth = 0; tenth <= 120; ++tenth) {  // 12 s of a load's updates, ten a second
    c.now = tenth / 10.0;
    p.update("load " + std::to_string(tenth));
  }
  EXPECT_EQ(c.written, "load 0\nload 50\nload 100\n");
}

TEST(ConsoleProgress, QuietWithEveryNSecondsPrintsOnlyTheReports) {
  FakeConsole c;
  ConsoleProgress p({.quiet = true, .every_s = 1}, c.sink(false));
  p.note("stage 1/5: baseline");
  p.tick(second(1, 100));
  EXPECT_EQ(c.written, tick_line(second(1, 100)) + "\n");
}

TEST(ConsoleProgress, TickLineShowsTheWarmUpAndTheFailures) {
  ProgressTick t = second(3, 4805, 4100);
  t.warmup = true;
  t.failed = 1234;
  EXPECT_EQ(tick_line(t), "  3.0 s (warm-up)  tps 4805  p99 4.10 ms  failed 1,234");
}

}  // namespace
}  // namespace pgslow
