// The wait profile as the reports show it: shares of backend time, the line linking a stage's
// knobs to its dominant waits with the baseline's share beside them, the stacked bars, JSON.
// Goldens: tests/unit/report/golden/waits.*; PGSLOW_UPDATE_GOLDEN=1 rewrites them.

#include <gtest/gtest.h>

#include <sstream>

#include "report/json.h"
#include "report/registry.h"
#include "report/waits_view.h"
#include "results/summary.h"
#include "tests/unit/report/golden.h"
#include "tests/unit/report/sample_run.h"

namespace pgslow::report {
namespace {

WaitProfile profile(std::uint64_t samples, std::map<std::string, std::uint64_t> backends) {
  WaitProfile w;
  w.samples = samples;
  w.interval_ms = 10;
  w.backends = std::move(backends);
  return w;
}

// A baseline and a commit_delay stage on tpcb-like, 8 clients sampled 2,000 times.
Run commit_delay_run() {
  Run run;
  run.scenario = "wal-hell";
  run.workload = "tpcb-like";
  run.mode = "cumulative";
  StageResult baseline;
  baseline.name = "baseline";
  baseline.load.clients = 8;
  baseline.repeats = {testing::measurement(3000, 20, 6)};
  baseline.waits = profile(
      2000,
      {{"CPU", 7200}, {"Client:ClientRead", 6000}, {"IO:WALSync", 2400}, {"LWLock:WALWrite", 400}});
  StageResult delay;
  delay.name = "commit-delay";
  delay.load.clients = 8;
  delay.changes = {{"commit_delay", "0", "10000", "reload"},
                   {"commit_siblings", "5", "0", "reload"}};
  delay.repeats = {testing::measurement(700, 20, 14)};
  delay.waits = profile(2000, {{"Timeout:CommitDelay", 12960},
                               {"CPU", 1600},
                               {"Client:ClientRead", 1200},
                               {"IO:WALSync", 200},
                               {"Lock:transactionid", 40}});
  run.stages = {baseline, delay};
  return run;
}

std::string render(std::string_view format, const Run& run) {
  return rendered(run, format);
}

TEST(WaitShares, AreEachWaitsPartOfAllBackendSamplesLargestFirst) {
  const auto shares = wait_shares(profile(10, {{"CPU", 30}, {"IO:DataFileRead", 60}, {"B", 10}}));
  ASSERT_EQ(shares.size(), 3u);
  EXPECT_EQ(shares[0].wait, "IO:DataFileRead");
  EXPECT_DOUBLE_EQ(shares[0].share, 0.6);
  EXPECT_EQ(shares[1].wait, "CPU");
  EXPECT_DOUBLE_EQ(shares[1].share, 0.3);
  EXPECT_EQ(shares[2].backend_samples, 10u);
  EXPECT_DOUBLE_EQ(wait_share(profile(10, {{"CPU", 30}, {"B", 10}}), "CPU"), 0.75);
  EXPECT_DOUBLE_EQ(wait_share(profile(10, {{"CPU", 30}}), "Lock:tuple"), 0);
}

TEST(WaitShares, NoBackendSamplesIsNoShares) {
  EXPECT_TRUE(wait_shares(profile(100, {})).empty());
  EXPECT_TRUE(wait_shares(profile(100, {{"CPU", 0}})).empty());
  EXPECT_EQ(waits_text(StageResult{}, nullptr), "");
}

TEST(WaitShares, FormatRoundsAndNamesTheTinyShare) {
  EXPECT_EQ(format_share(0), "0%");
  EXPECT_EQ(format_share(0.004), "<1%");
  EXPECT_EQ(format_share(0.0099), "<1%");
  EXPECT_EQ(format_share(0.01), "1%");
  EXPECT_EQ(format_share(0.814), "81%");
  EXPECT_EQ(format_share(1), "100%");
}

TEST(WaitsText, NamesTheKnobsTheDominantWaitAndTheBaselinesShare) {
  const results::Run run = commit_delay_run();
  EXPECT_EQ(waits_text(run.stages[1], &*run.stages[0].waits),
            "commit_delay, commit_siblings → Timeout:CommitDelay 81% of backend time (baseline "
            "0%); CPU 10% (baseline 45%); Client:ClientRead 8% (baseline 38%); 2,000 samples");
  EXPECT_EQ(waits_text(run.stages[0], nullptr),
            "CPU 45% of backend time; Client:ClientRead 38%; IO:WALSync 15%; 2,000 samples");
  // The summary compares each stage with the baseline's profile.
  const auto summaries = summarize(run);
  EXPECT_EQ(summaries[1].waits_text, waits_text(run.stages[1], &*run.stages[0].waits));
  EXPECT_EQ(summaries[0].waits_text, waits_text(run.stages[0], nullptr));
}

// With 8 clients the one backend in commit_delay's sleep holds WALWriteLock and the others
// queue behind it: the sleep, read from /proc on PostgreSQL 15 to 18, is a small share. It is
// shown below the top three all the same, since no server view names it.
TEST(WaitsText, AWaitReadFromProcIsShownBelowTheTopThree) {
  results::Run run = commit_delay_run();
  run.stages[1].waits = profile(2000, {{"LWLock:WALWrite", 6800},
                                       {"Lock:transactionid", 3300},
                                       {"Client:ClientRead", 2200},
                                       {results::kCommitDelayFromProc, 1500},
                                       {"CPU", 400}});
  EXPECT_TRUE(results::read_from_proc(results::kCommitDelayFromProc));
  EXPECT_FALSE(results::read_from_proc("Timeout:CommitDelay"));
  EXPECT_EQ(waits_text(run.stages[1], &*run.stages[0].waits),
            "commit_delay, commit_siblings → LWLock:WALWrite 48% of backend time (baseline 2%); "
            "Lock:transactionid 23% (baseline 0%); Client:ClientRead 15% (baseline 38%); "
            "Timeout:CommitDelay (/proc) 11% (baseline 0%); 2,000 samples");
  // A reported wait below the top three is not.
  EXPECT_EQ(waits_text(run.stages[1], &*run.stages[0].waits, {}, 2).find("Client:ClientRead"),
            std::string::npos);
}

// A sweep of server.memory moves the envelope with the knobs: the line names both, and leaves
// out an envelope that is the baseline's.
TEST(WaitsText, ASweptEnvelopeIsNamedBesideTheKnobs) {
  results::Run run = commit_delay_run();
  run.stages[0].envelope = "memory 224MB";
  run.stages[1].envelope = "memory 136MB";
  const std::string text = waits_text(run.stages[1], &*run.stages[0].waits, "memory 224MB");
  EXPECT_TRUE(text.starts_with("commit_delay, commit_siblings, envelope memory 136MB → ")) << text;
  EXPECT_EQ(summarize(run)[1].waits_text, text);
  run.stages[1].envelope = "memory 224MB";
  EXPECT_TRUE(waits_text(run.stages[1], &*run.stages[0].waits, "memory 224MB")
                  .starts_with("commit_delay, commit_siblings → "));
}

TEST(WaitsText, ASwitchbackStageIsComparedWithItsReferenceBlocks) {
  results::Run run = commit_delay_run();
  Switchback sb;
  sb.reference_waits = profile(900, {{"Timeout:CommitDelay", 90}, {"CPU", 810}});
  run.stages[1].switchback = sb;
  const WaitProfile* reference = baseline_waits(run.stages[1], &run.stages[0]);
  ASSERT_NE(reference, nullptr);
  EXPECT_EQ(reference->samples, 900u);
  EXPECT_NE(waits_text(run.stages[1], reference).find("(baseline 10%)"), std::string::npos);
  EXPECT_EQ(baseline_waits(run.stages[0], &run.stages[0]), nullptr);
}

TEST(WaitsJson, RoundTripsAndWritesTheShares) {
  results::Run run = commit_delay_run();
  Switchback sb;
  sb.reference_waits = profile(900, {{"CPU", 810}});
  run.stages[1].switchback = sb;
  const auto json = nlohmann::json::parse(to_json(run));
  EXPECT_DOUBLE_EQ(json["stages"][1]["waits"]["shares"]["Timeout:CommitDelay"].get<double>(),
                   12960.0 / 16000);
  EXPECT_EQ(json["stages"][1]["waits"]["samples"].get<int>(), 2000);
  const results::Run back = read_json(to_json(run), "report.json");
  EXPECT_EQ(back.stages[1].waits, run.stages[1].waits);
  EXPECT_EQ(back.stages[1].switchback->reference_waits, sb.reference_waits);
  // A report without waits (an older pgslow, sampling off) reads as not sampled.
  results::Run none = commit_delay_run();
  none.stages[1].waits.reset();
  EXPECT_FALSE(read_json(to_json(none), "report.json").stages[1].waits.has_value());
}

TEST(WaitsJson, ANegativeCountNamesItsPath) {
  auto json = nlohmann::json::parse(to_json(commit_delay_run()));
  json["stages"][1]["waits"]["backends"]["CPU"] = -1;
  try {
    read_json(json.dump(), "r.json");
    FAIL() << "accepted a negative count";
  } catch (const std::exception& e) {
    EXPECT_NE(std::string(e.what()).find("stages[1].waits.backends.CPU"), std::string::npos)
        << e.what();
  }
}

TEST(WaitsGolden, Console) {
  check_golden("waits.txt", render("console", commit_delay_run()));
}
TEST(WaitsGolden, Csv) {
  check_golden("waits.csv", render("csv", commit_delay_run()));
}
TEST(WaitsGolden, Markdown) {
  check_golden("waits.md", render("md", commit_delay_run()));
}
TEST(WaitsGolden, HtmlBars) {
  check_golden("waits.svg", waits_svg(commit_delay_run()));
  EXPECT_EQ(waits_svg(results::Run{}), "");
}

}  // namespace
}  // namespace pgslow::report
