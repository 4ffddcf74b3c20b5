// `pgslow plan` and `pgslow run` end to end on the binary's managed cluster: plan changes
// nothing; a two-stage scenario runs, restores the configuration, and its report files agree
// with report.json.

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <csignal>
#include <filesystem>
#include <functional>
#include <map>
#include <regex>
#include <sstream>
#include <string>
#include <thread>

#include "apply/bytes.h"
#include "common/paths.h"
#include "common/process.h"
#include "common/strings.h"
#include "pg/connection.h"
#include "report/curve.h"
#include "report/json.h"
#include "report/text.h"
#include "results/summary.h"
#include "results/switchback.h"
#include "results/waits.h"
#include "tests/support/cluster_fixture.h"
#include "tests/support/pgslow_process.h"
#include "tests/support/server_state.h"

namespace pgslow {
namespace {

namespace fs = std::filesystem;
using testing::cluster;
using testing::conninfo;
using testing::expect_restored;
using testing::server_state;
using testing::ServerState;

fs::path workdir() {
  return cluster().cluster_dir().parent_path();
}

// One CSV line's fields, RFC 4180 quoting.
std::vector<std::string> csv_fields(const std::string& line) {
  std::vector<std::string> out(1);
  bool quoted = false;
  for (std::size_t i = 0; i < line.size(); ++i) {
    char c = line[i];
    if (quoted) {
      if (c == '"' && i + 1 < line.size() && line[i + 1] == '"') {
        out.back() += '"';
        ++i;
      } else if (c == '"') {
        quoted = false;
      } else {
        out.back() += c;
      }
    } else if (c == '"') {
      quoted = true;
    } else if (c == ',') {
      out.emplace_back();
    } else {
      out.back() += c;
    }
  }
  return out;
}

using testing::pgslow;
using testing::unwrapped;

// Two busy loops, one a core of a 2-core machine, competing with the server and the clients:
// they start after `delay`, run for `length` (each bounded on its own) and are killed when
// this goes out of scope.
class CpuHogs {
 public:
  CpuHogs(std::chrono::seconds delay, std::chrono::seconds length) {
    for (int i = 0; i < 2; ++i) {
      const pid_t hog = ::fork();
      if (hog < 0) throw std::runtime_error("fork failed");
      if (hog == 0) {
        const auto start = std::chrono::steady_clock::now() + delay;
        const auto end = start + length;
        while (std::chrono::steady_clock::now() < start) ::usleep(100'000);
        while (std::chrono::steady_clock::now() < end) {
        }
        ::_exit(0);
      }
      pids_.push_back(hog);
    }
  }
  ~CpuHogs() {
    for (pid_t hog : pids_) {
      ::kill(hog, SIGKILL);
      ::waitpid(hog, nullptr, 0);
    }
  }
  CpuHogs(const CpuHogs&) = delete;
  CpuHogs& operator=(const CpuHogs&) = delete;

 private:
  std::vector<pid_t> pids_;
};

// An isolated scenario with one separate-run stage (work_mem stays in a connection's cached
// plans), two repeats of 1 s on a small select-only data set, written as NAME.yaml. Its budget
// (10 s: 2 pairs of 2 s runs) keeps it at its 2 pairs, resolved or not.
fs::path small_work_mem_scenario(const std::string& name) {
  const fs::path file = workdir() / (name + ".yaml");
  write_file_durably(file, "name: " + name + "\n" + R"(workload:
  name: select-only
  scale: 1
  clients: 2
measure:
  warmup: 0s
  duration: 1s
  repeats: 2
  budget: 10s
mode: isolated
stages:
  - name: small-work-mem
    settings:
      work_mem: 64kB
)");
  return file;
}

// Two stages on a small select-only data set: the planner stage is far slower.
fs::path write_scenario() {
  fs::path file = workdir() / "two-stages.yaml";
  write_file_durably(file, R"(name: two-stages
description: baseline versus index lookups priced out
workload:
  name: select-only
  scale: 1
  clients: 2
measure:
  warmup: 1s
  duration: 3s
stages:
  - name: planner
    settings:
      random_page_cost: 1e300
      cpu_index_tuple_cost: 1e300
expect:
  - stage: planner
    slower_than_baseline: 2
)");
  return file;
}

TEST(Plan, ChangesNothing) {
  cluster();
  const fs::path file = write_scenario();
  const ServerState before = server_state();
  ProcessResult r = pgslow({"plan", file.string()});
  ASSERT_TRUE(r.ok()) << r.output;
  EXPECT_NE(r.output.find("random_page_cost"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("Nothing was changed"), std::string::npos) << r.output;
  const ServerState after = server_state();
  EXPECT_EQ(before.auto_conf_sha256, after.auto_conf_sha256);
  EXPECT_EQ(before.settings, after.settings);
}

TEST(Plan, BadScenarioIsExit2WithFileAndLine) {
  cluster();
  fs::path file = workdir() / "bad.yaml";
  write_file_durably(
      file, "workload: select-only\nstages:\n  - name: a\n    settings:\n      work_mem: 1kB\n");
  const ServerState before = server_state();
  ProcessResult r = pgslow({"run", file.string()});
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("bad.yaml:5:7"), std::string::npos) << r.output;
  EXPECT_EQ(before.auto_conf_sha256, server_state().auto_conf_sha256);
}

TEST(Run, TwoStagesEndToEndAndTheReportsAgreeWithTheJson) {
  cluster();
  const fs::path file = write_scenario();
  const fs::path out = workdir() / "results";
  const ServerState before = server_state();
  ProcessResult r = pgslow({"run", file.string(), "--out", out.string()});
  ASSERT_TRUE(r.ok()) << r.output;
  // After the table: where the reports are, and that the managed cluster is left running with
  // the commands that stop or remove it, as this run was invoked.
  EXPECT_NE(r.output.find("Results: " + out.string() + "/report.md"), std::string::npos);
  // The note is wrapped to the terminal's width, its lines after the first indented.
  const std::string note = std::regex_replace(r.output, std::regex("\n  "), " ");
  EXPECT_NE(note.find("Still running: the managed cluster in " + workdir().string()),
            std::string::npos)
      << r.output;
  const std::string invoked =
      shell_quote({testing::pgslow_binary().string(), "--workdir", workdir().string()});
  EXPECT_NE(note.find("`" + invoked), std::string::npos) << r.output;
  EXPECT_NE(note.find(" server stop` stops it"), std::string::npos) << r.output;
  EXPECT_NE(note.find(" server destroy` removes it"), std::string::npos) << r.output;
  // The table at a glance: one line per stage, none wider than the 100 columns of a pipe.
  const std::size_t table = r.output.find("\nstage ");
  const std::size_t end = r.output.find("Every axis, the evidence", table);
  ASSERT_NE(table, std::string::npos) << r.output;
  ASSERT_NE(end, std::string::npos) << r.output;
  std::istringstream table_lines(r.output.substr(table + 1, end - table - 1));
  std::size_t count = 0;
  for (std::string line; std::getline(table_lines, line); ++count)
    EXPECT_LE(report::display_width(line), 100u) << line;
  EXPECT_LE(count, 20u) << r.output;

  // The configuration is back, byte for byte and value for value.
  const ServerState after = server_state();
  EXPECT_EQ(before.auto_conf_sha256, after.auto_conf_sha256);
  EXPECT_EQ(before.settings, after.settings);

  for (const char* f : {"report.md", "report.json", "report.csv", "report.html"}) {
    EXPECT_TRUE(fs::exists(out / f)) << f;
  }
  results::Run run = report::read_json(read_file(out / "report.json"), "report.json");
  const std::string csv = read_file(out / "report.csv");
  const std::string md = read_file(out / "report.md");
  ASSERT_EQ(run.stages.size(), 2u);
  EXPECT_EQ(run.stages[0].name, "baseline");
  EXPECT_EQ(run.stages[1].name, "planner");
  ASSERT_EQ(run.stages[1].changes.size(), 2u);
  for (const auto& st : run.stages) {
    ASSERT_EQ(st.repeats.size(), 1u) << st.name;
    const auto& m = st.repeats[0];
    EXPECT_GT(m.committed, 0u) << st.name;
    EXPECT_EQ(m.failed, 0u) << st.name;
    EXPECT_NEAR(m.tps, static_cast<double>(m.committed + m.rolled_back) / m.duration_s,
                1e-6 * m.tps);
  }
  // The planner stage reads whole tables: the evidence says so, and it is slower.
  EXPECT_GT(run.stages[1].evidence.at("seq_tup_read"), run.stages[0].evidence.at("seq_tup_read"));
  EXPECT_LT(run.stages[1].repeats[0].tps, run.stages[0].repeats[0].tps);
  ASSERT_EQ(run.expectations.size(), 1u);
  EXPECT_TRUE(run.expectations[0].passed) << run.expectations[0].detail;
  // One repeat, one changed stage: the reference after it is measured twice, so the noise of
  // the interval rests on 3 baseline runs (2 degrees of freedom). The verdict over every axis
  // names the many-fold slowdown: on a busy machine the baselines' TPS can spread past what 2
  // degrees of freedom resolve (two suites side by side: "within noise (could see ±33170%)"),
  // while the server's CPU per transaction barely moves with other load.
  ASSERT_EQ(run.references.size(), 2u);
  for (const auto& ref : run.references) EXPECT_EQ(ref.after_stage, 1u);
  const auto summary = results::summarize(run);
  ASSERT_TRUE(summary[1].vs_baseline.has_value());
  ASSERT_NE(summary[1].verdict.axis, nullptr) << summary[1].verdict.sentence;
  for (const auto& a : summary[1].axes) {
    if (a.axis != summary[1].verdict.axis) continue;
    EXPECT_TRUE(a.change.measurable) << summary[1].verdict.sentence;
    if (results::higher_is_better(*a.axis))
      EXPECT_LT(a.change.ratio, 1.0) << summary[1].verdict.sentence;
    else
      EXPECT_GT(a.change.ratio, 1.0) << summary[1].verdict.sentence;
  }
  EXPECT_EQ(results::run_noise(run).runs, 3u);
  // Where the time went: the planner stage's backends run (CPU) far more of their time than
  // the baseline's, which wait for their clients; the report names it with the baseline's
  // share beside it.
  for (const auto& st : run.stages) {
    ASSERT_TRUE(st.waits.has_value()) << st.name;
    EXPECT_GT(st.waits->samples, 50u) << st.name;  // 3 s at 10 ms, on a busy machine
  }
  const auto planner_waits = results::wait_shares(*run.stages[1].waits);
  ASSERT_FALSE(planner_waits.empty());
  EXPECT_EQ(planner_waits[0].wait, "CPU") << summary[1].waits_text;
  EXPECT_GT(results::wait_share(*run.stages[1].waits, "CPU"),
            results::wait_share(*run.stages[0].waits, "CPU"))
      << summary[0].waits_text << "\n"
      << summary[1].waits_text;
  // The table at a glance: one line for the planner stage, naming its knobs (report.md and
  // --detail hold the waits line).
  EXPECT_TRUE(
      std::regex_search(r.output, std::regex("\nplanner +[0-9.,]+ +.*cpu_index_tuple_cost")))
      << r.output;
  EXPECT_NE(md.find("cpu_index_tuple_cost, random_page_cost → CPU "), std::string::npos) << md;
  EXPECT_NE(summary[1].waits_text.find("of backend time (baseline "), std::string::npos)
      << summary[1].waits_text;
  EXPECT_NE(md.find("## Where the time went"), std::string::npos);
  EXPECT_NE(read_file(out / "report.html").find("<svg class=\"waits\""), std::string::npos);

  // Each stage's TPS in the CSV and in the console table is the JSON's.
  for (const auto& st : run.stages) {
    EXPECT_NE(csv.find(st.name), std::string::npos) << csv;
    EXPECT_NE(md.find(st.name), std::string::npos) << md;
  }
  std::vector<std::string> lines = split(csv, '\n');
  ASSERT_GE(lines.size(), 3u);
  std::vector<std::string> header = csv_fields(lines[0]);
  std::size_t tps_col = header.size();
  for (std::size_t i = 0; i < header.size(); ++i) {
    if (header[i] == "tps_median") tps_col = i;
  }
  ASSERT_LT(tps_col, header.size()) << lines[0];
  for (std::size_t s = 0; s < 2; ++s) {
    std::vector<std::string> cells = csv_fields(lines[s + 1]);
    ASSERT_GT(cells.size(), tps_col);
    EXPECT_NEAR(std::stod(cells[tps_col]), run.stages[s].repeats[0].tps,
                0.01 * run.stages[s].repeats[0].tps + 0.01)
        << lines[s + 1];
  }
}

// A CPU-bound program running beside a stage is named in that stage's report (issue #20's
// flooded dashboard, #21's disturbed machine), and the server's own CPU time is evidence.
TEST(Run, AProgramTakingTheCpuDuringAStageIsNamedAsADisturbance) {
  cluster();
  const fs::path file = write_scenario();
  const fs::path out = workdir() / "results-disturbed";
  const ServerState before = server_state();
  // Two busy loops (one a core of a 2-core machine, competing with the server and the
  // clients), each bounded in time on its own.
  ProcessResult r;
  {
    const CpuHogs hogs(std::chrono::seconds(0), std::chrono::seconds(60));
    r = pgslow({"run", file.string(), "--out", out.string()});
  }
  ASSERT_TRUE(r.ok()) << r.output;
  expect_restored(before);
  results::Run run = report::read_json(read_file(out / "report.json"), "report.json");
  ASSERT_FALSE(run.stages.empty());
  for (const auto& st : run.stages) {
    bool named = false;
    for (const auto& w : st.warnings) named = named || w.find("the machine was disturbed") == 0;
    EXPECT_TRUE(named) << st.name << " has no disturbance warning";
    ASSERT_TRUE(st.evidence.count("server_cpu_ms")) << st.name;
    EXPECT_GT(st.evidence.at("server_cpu_ms"), 0.0) << st.name;
  }
  EXPECT_NE(read_file(out / "report.md").find("the machine was disturbed"), std::string::npos);
}

// A CPU hog that starts halfway through a switchback stage slows the baseline's blocks and the
// stage's alike: the stage is named as disturbed, and the verdict on a knob that does nothing
// here (track_functions, and tpcb-like calls no function) stays "no change". Separate runs
// would charge the hog to whichever configuration ran while it did.
TEST(Run, AHogStartedHalfwayThroughASwitchbackStageIsNamedAndLeavesTheEstimate) {
  cluster();
  fs::path file = workdir() / "hog-halfway.yaml";
  write_file_durably(file, R"(name: hog-halfway
workload:
  name: tpcb-like
  scale: 1
  clients: 4
measure:
  warmup: 1s
  duration: 2s
  pairs: 8
mode: isolated
stages:
  - name: track-functions
    settings:
      track_functions: all
)");
  const fs::path out = workdir() / "results-hog-halfway";
  const ServerState before = server_state();
  // The load and the baseline take a few seconds, the switchback run about 70 s: the hogs
  // start in its middle, each bounded in time on its own.
  ProcessResult r;
  {
    const CpuHogs hogs(std::chrono::seconds(40), std::chrono::seconds(60));
    r = pgslow({"run", file.string(), "--out", out.string()});
  }
  ASSERT_TRUE(r.ok()) << r.output;
  expect_restored(before);
  results::Run run = report::read_json(read_file(out / "report.json"), "report.json");
  ASSERT_EQ(run.stages.size(), 2u);
  const results::StageResult& stage = run.stages[1];
  ASSERT_TRUE(stage.switchback.has_value()) << r.output;
  bool named = false;
  for (const auto& w : stage.warnings) named = named || w.find("the machine was disturbed") == 0;
  EXPECT_TRUE(named) << r.output;
  const auto summaries = results::summarize(run);
  ASSERT_TRUE(summaries[1].vs_baseline.has_value());
  ASSERT_TRUE(summaries[1].vs_baseline->interval.known) << r.output;
  // The verdict stays "no effect": at 99.5% (so that a fair run fails this one time in 200),
  // the blocks' interval holds "no change" although the hog took a third of the machine or
  // more for half the run. Separate runs would read the hog as the stage's effect.
  const results::Interval wide =
      results::switchback_interval(stage.switchback->blocks, results::kTpsAxis, 0.995);
  EXPECT_LE(wide.low, 1.0) << r.output;
  EXPECT_GE(wide.high, 1.0) << r.output;
}

// With repeats, an isolated stage alternates with the baseline run by run (stage, baseline,
// stage, baseline), and the report counts both runs of each.
TEST(Run, RepeatsOfAnIsolatedStageAlternateWithTheBaseline) {
  cluster();
  const fs::path file = small_work_mem_scenario("alternate");
  const ServerState before = server_state();
  const fs::path out = workdir() / "results-alternate";
  ProcessResult r = pgslow({"run", file.string(), "--out", out.string()});
  ASSERT_TRUE(r.ok()) << r.output;
  expect_restored(before);
  // The order the progress lines name: the stage's second run comes between two baselines.
  const std::size_t stage = r.output.find("stage 2/2: small-work-mem");
  ASSERT_NE(stage, std::string::npos) << r.output;
  const std::size_t first_ref = r.output.find("reference: baseline again", stage);
  const std::size_t again = r.output.find("small-work-mem again (2 of 2)", stage);
  ASSERT_NE(first_ref, std::string::npos) << r.output;
  ASSERT_NE(again, std::string::npos) << r.output;
  const std::size_t second_ref = r.output.find("reference: baseline again", again);
  EXPECT_LT(first_ref, again) << r.output;
  EXPECT_NE(second_ref, std::string::npos) << r.output;
  results::Run run = report::read_json(read_file(out / "report.json"), "report.json");
  ASSERT_EQ(run.stages.size(), 2u);
  EXPECT_EQ(run.stages[0].repeats.size(), 2u);  // the baseline's own, back to back
  EXPECT_EQ(run.stages[1].repeats.size(), 2u);
  ASSERT_EQ(run.references.size(), 2u);
  for (const auto& ref : run.references) {
    EXPECT_EQ(ref.after_stage, 1u);
    EXPECT_GT(ref.tps, 0);
  }
  EXPECT_EQ(results::run_noise(run).runs, 4u);
}

// A reload-only stage whose knobs act at the next command switches back and forth with the
// baseline in one run: the plan says so, the blocks alternate and end with the baseline, the
// stage's blocks are each slower than the baseline's around them (a 10 ms sleep before every
// commit flush), the TPS and CPU/tx comparisons come from the blocks, and the configuration is
// back byte for byte.
TEST(Run, AReloadOnlyStageSwitchesBackAndForthWithTheBaseline) {
  cluster();
  fs::path file = workdir() / "switchback.yaml";
  write_file_durably(file, R"(name: switchback
workload:
  name: tpcb-like
  scale: 1
  clients: 4
measure:
  warmup: 1s
  duration: 2s
  pairs: 3
mode: isolated
stages:
  - name: commit-delay
    settings:
      commit_delay: 10000
      commit_siblings: 0
)");
  ProcessResult plan = pgslow({"plan", file.string()});
  ASSERT_TRUE(plan.ok()) << plan.output;
  EXPECT_NE(plan.output.find("switchback: every knob acts within"), std::string::npos)
      << plan.output;
  ProcessResult isolated = pgslow({"plan", file.string(), "--design", "isolated"});
  EXPECT_NE(isolated.output.find("separate runs: the scenario asks for them"), std::string::npos)
      << isolated.output;

  const ServerState before = server_state();
  const fs::path out = workdir() / "results-switchback";
  ProcessResult r = pgslow({"run", file.string(), "--detail", "--out", out.string()});
  ASSERT_TRUE(r.ok()) << r.output;
  expect_restored(before);
  results::Run run = report::read_json(read_file(out / "report.json"), "report.json");
  ASSERT_EQ(run.stages.size(), 2u);
  const results::StageResult& stage = run.stages[1];
  ASSERT_TRUE(stage.switchback.has_value()) << r.output;
  const auto& blocks = stage.switchback->blocks;
  ASSERT_EQ(blocks.size(), 7u) << r.output;
  for (std::size_t i = 0; i < blocks.size(); ++i) {
    EXPECT_EQ(blocks[i].stage, i % 2 == 1);
    EXPECT_GT(blocks[i].seconds, 2.5);  // a 4 s block less its settling second
    EXPECT_LT(blocks[i].seconds, 3.5);
    EXPECT_GT(blocks[i].server_cpu_s, 0);
    // Each block's own latency: the latency axes' samples.
    EXPECT_GT(blocks[i].p95_us, 0) << i;
    EXPECT_LE(blocks[i].p95_us, blocks[i].p99_us) << i;
    if (blocks[i].stage) {
      EXPECT_LT(blocks[i].transactions, blocks[i - 1].transactions) << i;
      EXPECT_LT(blocks[i].transactions, blocks[i + 1].transactions) << i;
      EXPECT_GE(blocks[i].p95_us, 9'000) << i;  // every commit sleeps 10 ms
    }
  }
  ASSERT_EQ(stage.repeats.size(), 1u);
  EXPECT_EQ(stage.repeats[0].p99_per_second.size(), 3u);  // one per stage block
  EXPECT_EQ(run.references.size(), 0u);  // the baseline was measured inside the run
  const auto summaries = results::summarize(run);
  ASSERT_TRUE(summaries[1].vs_baseline.has_value());
  // Every commit sleeps 10 ms: slower, which every stage block above already shows against
  // both its neighbours. The verdict is not asserted: three pairs of blocks (2 degrees of
  // freedom, Holm over nine axes) resolve nothing on a machine whose other programs take 80%
  // of the CPU, and the verdict's coverage is tested on the seeded simulator instead.
  EXPECT_LT(summaries[1].vs_baseline->ratio, 1) << r.output;
  ASSERT_TRUE(summaries[1].cpu_vs_baseline.has_value()) << r.output;
  const auto p99 = std::find_if(summaries[1].axes.begin(), summaries[1].axes.end(),
                                [](const results::AxisChange& a) { return a.axis->key == "p99"; });
  ASSERT_NE(p99, summaries[1].axes.end()) << r.output;
  EXPECT_TRUE(p99->change.interval.known) << r.output;
  EXPECT_NE(r.output.find("measured  switchback, 7 blocks of 4 s"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("CPU/tx"), std::string::npos) << r.output;
  // Where the time went, split by block: the stage's blocks and the reference's each have
  // their own profile.
  ASSERT_TRUE(stage.waits.has_value()) << r.output;
  ASSERT_TRUE(stage.switchback->reference_waits.has_value()) << r.output;
  const double delay = results::wait_share(*stage.waits, "Timeout:CommitDelay");
  const double reference =
      results::wait_share(*stage.switchback->reference_waits, "Timeout:CommitDelay");
  // No wait event for the sleep (ACommitDelayStage... below): the sampler finds the sleeper in
  // /proc, and on scale 1 the other clients queue behind it on the one branch row or on
  // WALWriteLock. The look-up follows commit_delay from block to block: the reference blocks,
  // with commit_delay 0, have none of it.
  EXPECT_EQ(delay, 0) << summaries[1].waits_text;
  EXPECT_EQ(reference, 0) << summaries[1].waits_text;
  EXPECT_GT(results::wait_share(*stage.waits, results::kCommitDelayFromProc), 0)
      << summaries[1].waits_text;
  EXPECT_EQ(results::wait_share(*stage.switchback->reference_waits, results::kCommitDelayFromProc),
            0)
      << summaries[1].waits_text;
  EXPECT_NE(summaries[1].waits_text.find("Timeout:CommitDelay (/proc) "), std::string::npos)
      << summaries[1].waits_text;
  EXPECT_NE(summaries[1].waits_text.find("% of backend time (baseline "), std::string::npos);
}

// A stage of more clients switches back and forth with the baseline's one client: the three
// others stand by, their connections closed, in the baseline's blocks. The wait sampler sees at
// most one of the workload's backends at a time in those blocks, whatever the machine's speed.
TEST(Run, AStageOfMoreClientsSwitchesItsClientsWithTheBaseline) {
  cluster();
  fs::path file = workdir() / "switch-clients.yaml";
  write_file_durably(file, R"(name: switch-clients
workload:
  name: select-only
  scale: 1
  clients: 1
measure:
  warmup: 0s
  duration: 2s
  pairs: 3
mode: isolated
stages:
  - name: four-clients
    load: {clients: 4}
)");
  ProcessResult plan = pgslow({"plan", file.string()});
  ASSERT_TRUE(plan.ok()) << plan.output;
  EXPECT_NE(unwrapped(plan.output).find("the clients beyond the 1 of the smaller side stand by"),
            std::string::npos)
      << plan.output;
  const ServerState before = server_state();
  const fs::path out = workdir() / "results-switch-clients";
  ProcessResult r = pgslow({"run", file.string(), "--out", out.string()});
  ASSERT_TRUE(r.ok()) << r.output;
  expect_restored(before);
  results::Run run = report::read_json(read_file(out / "report.json"), "report.json");
  ASSERT_EQ(run.stages.size(), 2u);
  const results::StageResult& stage = run.stages[1];
  EXPECT_EQ(stage.load.clients, 4);
  ASSERT_TRUE(stage.switchback.has_value()) << r.output;
  ASSERT_EQ(stage.switchback->blocks.size(), 7u) << r.output;
  for (std::size_t i = 0; i < 7; ++i) {
    EXPECT_EQ(stage.switchback->blocks[i].stage, i % 2 == 1);
    EXPECT_GT(stage.switchback->blocks[i].transactions, 0u) << i;
  }
  EXPECT_EQ(stage.repeats[0].failed, 0u) << r.output;
  // The connections it opened (at the start, and again at each switch to the stage) are timed.
  EXPECT_GT(stage.repeats[0].connect_time.p50_us, 0) << r.output;
  ASSERT_TRUE(stage.switchback->reference_waits.has_value()) << r.output;
  const results::WaitProfile& reference = *stage.switchback->reference_waits;
  ASSERT_GT(reference.samples, 0u);
  std::uint64_t backend_samples = 0;
  for (const auto& [wait, n] : reference.backends) backend_samples += n;
  EXPECT_LE(backend_samples, reference.samples) << results::top_waits_text(reference);
}

// wal-hell's commit delay on a write workload without row contention (inserts, one client):
// the stage's backend spends its time in the delay's sleep. PostgreSQL (15 to 18, measured)
// reports no wait event for that sleep, so pg_stat_activity shows it active with none, which
// would read as CPU; the sampler finds it asleep on a timer in /proc and names it
// Timeout:CommitDelay (/proc), where the baseline's commits waited on their WAL flush.
TEST(Run, ACommitDelayStageNamesWhereItsBackendsTimeWent) {
  cluster();
  fs::path file = workdir() / "commit-delay-waits.yaml";
  write_file_durably(file, R"(name: commit-delay-waits
workload:
  name: insert
  clients: 1
measure:
  warmup: 1s
  duration: 3s
  design: isolated
mode: isolated
stages:
  - name: commit-delay
    settings:
      commit_delay: 10000
      commit_siblings: 0
)");
  const ServerState before = server_state();
  const fs::path out = workdir() / "results-commit-delay-waits";
  ProcessResult r = pgslow({"run", file.string(), "--detail", "--out", out.string()});
  ASSERT_TRUE(r.ok()) << r.output;
  expect_restored(before);
  results::Run run = report::read_json(read_file(out / "report.json"), "report.json");
  ASSERT_EQ(run.stages.size(), 2u);
  ASSERT_TRUE(run.stages[0].waits.has_value()) << r.output;
  ASSERT_TRUE(run.stages[1].waits.has_value()) << r.output;
  const auto shares = results::wait_shares(*run.stages[1].waits);
  ASSERT_FALSE(shares.empty());
  // The client's own time (Client:ClientRead) may grow on a busy machine; the sleep still
  // takes most of a 10 ms commit (91% on PostgreSQL 15, 87% on 18, measured on a quiet one).
  const double sleep = results::wait_share(*run.stages[1].waits, results::kCommitDelayFromProc);
  EXPECT_GT(sleep, 0.3) << r.output;
  EXPECT_EQ(results::wait_share(*run.stages[0].waits, results::kCommitDelayFromProc), 0)
      << r.output;
  // What is left as CPU is the backend's own work, no longer the sleep.
  EXPECT_LT(results::wait_share(*run.stages[1].waits, "CPU"), sleep) << r.output;
  EXPECT_EQ(results::wait_share(*run.stages[1].waits, "Timeout:CommitDelay"), 0) << r.output;
  EXPECT_NE(r.output.find("waits     commit_delay, commit_siblings → "), std::string::npos)
      << r.output;
  EXPECT_NE(r.output.find("Timeout:CommitDelay (/proc) "), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("of backend time (baseline "), std::string::npos) << r.output;
  // Without the sampler the stage has no profile, and the report says nothing of waits.
  const fs::path off = workdir() / "results-commit-delay-no-waits";
  // One short run: only the absence of a profile is asserted, not a speed.
  ProcessResult r2 = pgslow({"run", file.string(), "--detail", "--out", off.string(),
                             "--no-wait-sampling", "--warmup", "0.5", "--duration", "1"});
  ASSERT_TRUE(r2.ok()) << r2.output;
  results::Run run2 = report::read_json(read_file(off / "report.json"), "report.json");
  for (const auto& st : run2.stages) EXPECT_FALSE(st.waits.has_value()) << st.name;
  EXPECT_EQ(r2.output.find("waits     "), std::string::npos) << r2.output;
}

// --precision on a stage of separate runs: it takes more (stage, baseline) pairs, looking at
// its interval a few times, and the report says why it stopped.
TEST(Run, APrecisionAddsPairsToASeparateStageUntilItsIntervalOrBudget) {
  cluster();
  const fs::path file = small_work_mem_scenario("precision");
  const fs::path out = workdir() / "results-precision";
  ProcessResult r = pgslow({"run", file.string(), "--detail", "--precision", "1%", "--budget", "20",
                            "--out", out.string()});
  ASSERT_TRUE(r.ok()) << r.output;
  results::Run run = report::read_json(read_file(out / "report.json"), "report.json");
  ASSERT_EQ(run.stages.size(), 2u);
  const results::StageResult& stage = run.stages[1];
  EXPECT_DOUBLE_EQ(stage.precision, 0.01);
  EXPECT_GE(stage.looks, 2) << r.output;
  EXPECT_TRUE(stage.stopped == "precision" || stage.stopped == "budget") << stage.stopped;
  // The first look comes after the 2 pairs of its repeats, where ±1% is out of reach.
  EXPECT_GE(stage.repeats.size(), 3u) << r.output;
  EXPECT_NE(r.output.find("runs alternating with the baseline"), std::string::npos) << r.output;
  // The interval is stated at the looks' confidence, wider than a plain 95% one.
  EXPECT_GT(results::stage_confidence(stage), 0.95);
  ProcessResult bad = pgslow({"run", file.string(), "--precision", "fast"});
  EXPECT_EQ(bad.exit_code, 2) << bad.output;
  EXPECT_NE(bad.output.find("--precision fast is not a precision"), std::string::npos)
      << bad.output;
}

// A sweep expands into one stage per value and the report's curve holds one point per value,
// in report.json, the Markdown table and the HTML chart.
TEST(Run, SweepExpandsIntoStagesAndTheCurveHasOnePointPerValue) {
  cluster();
  fs::path file = workdir() / "sweep.yaml";
  write_file_durably(file, R"(name: sweep
workload:
  name: select-only
  scale: 1
  clients: 1
measure:
  warmup: 0s
  duration: 1s
mode: isolated
sweep:
  pool_size: [1, 2, 3]
  load: {clients: 4}
)");
  const fs::path out = workdir() / "results-sweep";
  ProcessResult r = pgslow({"run", file.string(), "--out", out.string()});
  ASSERT_TRUE(r.ok()) << r.output;
  results::Run run = report::read_json(read_file(out / "report.json"), "report.json");
  EXPECT_EQ(run.sweep, std::vector<std::string>{"pool_size"});
  ASSERT_EQ(run.stages.size(), 4u);  // the baseline and three points
  const auto curves = report::sweep_curves(run);
  ASSERT_EQ(curves.size(), 1u);
  ASSERT_EQ(curves[0].points.size(), 3u);
  for (int i = 0; i < 3; ++i) {
    const auto& p = curves[0].points[static_cast<std::size_t>(i)];
    EXPECT_EQ(p.value, std::to_string(i + 1));
    EXPECT_TRUE(p.ran);
    EXPECT_GT(p.tps, 0);
    EXPECT_EQ(run.stages[p.stage].load.pool_size, i + 1);
    EXPECT_EQ(run.stages[p.stage].load.clients, 4);
    ASSERT_TRUE(p.pool_wait_p99_us);
  }
  ASSERT_TRUE(curves[0].peak);
  const std::string md = read_file(out / "report.md");
  EXPECT_NE(md.find("## Sweep over pool size"), std::string::npos) << md;
  EXPECT_NE(md.find("pool wait p99"), std::string::npos) << md;
  EXPECT_NE(md.find(report::describe_knee(curves[0])), std::string::npos) << md;
  const std::string html = read_file(out / "report.html");
  EXPECT_NE(html.find("<svg class=\"curve\""), std::string::npos);
  EXPECT_NE(r.output.find("sweep over pool size"), std::string::npos) << r.output;
}

// A knob's sweep (issue #22): shared_buffers over 6 values, each point a restart in runs of
// its own, ends with one curve of 6 points, the values as written, in every report format, and
// the configuration back byte for byte. Structure only: no assertion on speed.
TEST(Run, ASweepOfSharedBuffersRunsEachPointAndRestores) {
  cluster();
  const std::vector<std::string> values = {"128MB", "32MB", "8MB", "2MB", "1MB", "256kB"};
  fs::path file = workdir() / "sweep-shared-buffers.yaml";
  write_file_durably(file, R"(name: sweep-shared-buffers
workload:
  name: select-only
  scale: 1
  clients: 2
measure:
  warmup: 500ms
  duration: 1s
mode: isolated
sweep:
  shared_buffers: [128MB, 32MB, 8MB, 2MB, 1MB, 256kB]
)");
  const fs::path out = workdir() / "results-sweep-shared-buffers";
  const ServerState before = server_state();
  ProcessResult r = pgslow({"run", file.string(), "--out", out.string()});
  ASSERT_TRUE(r.ok()) << r.output;
  expect_restored(before);

  results::Run run = report::read_json(read_file(out / "report.json"), "report.json");
  EXPECT_EQ(run.sweep, std::vector<std::string>{"shared_buffers"});
  ASSERT_EQ(run.stages.size(), 7u);  // the baseline and six points
  const auto curves = report::sweep_curves(run);
  ASSERT_EQ(curves.size(), 1u);
  ASSERT_EQ(curves[0].points.size(), 6u);
  for (std::size_t i = 0; i < values.size(); ++i) {
    const auto& p = curves[0].points[i];
    const auto& st = run.stages[p.stage];
    EXPECT_EQ(p.value, values[i]);
    EXPECT_TRUE(p.ran) << st.name << ": " << st.error;
    EXPECT_GT(p.tps, 0);
    EXPECT_EQ(st.name, "shared_buffers " + values[i]);
    EXPECT_EQ(st.sweep_values.at("shared_buffers"), values[i]);
    EXPECT_FALSE(st.switchback) << st.name;  // a restart knob: separate runs
    // Every point but the server's own value changed it, by a restart.
    if (i > 0) {
      ASSERT_EQ(st.changes.size(), 1u) << st.name;
      EXPECT_EQ(st.changes[0].name, "shared_buffers");
      EXPECT_EQ(st.changes[0].new_value, values[i]);
      EXPECT_EQ(st.changes[0].apply_by, "restart");
    }
  }

  // The curve in every format written, each value on it.
  const std::string md = read_file(out / "report.md");
  const std::string html = read_file(out / "report.html");
  const std::string csv = read_file(out / "report.csv");
  const std::string json = read_file(out / "report.json");
  EXPECT_NE(md.find("## Sweep over shared buffers"), std::string::npos) << md;
  EXPECT_NE(md.find(report::describe_knee(curves[0])), std::string::npos) << md;
  EXPECT_NE(html.find("<svg class=\"curve\""), std::string::npos);
  EXPECT_NE(r.output.find("sweep over shared buffers"), std::string::npos) << r.output;
  EXPECT_NE(json.find("\"sweep_values\""), std::string::npos);
  for (const auto& v : values) {
    EXPECT_NE(md.find("| " + v + " |"), std::string::npos) << v << "\n" << md;
    EXPECT_NE(html.find(">" + v + "</text>"), std::string::npos) << v;
  }
  std::vector<std::string> lines = split(csv, '\n');
  ASSERT_GE(lines.size(), 8u);
  const std::vector<std::string> header = csv_fields(lines[0]);
  const auto col = std::find(header.begin(), header.end(), "sweep_shared_buffers");
  ASSERT_NE(col, header.end()) << lines[0];
  const auto at = static_cast<std::size_t>(col - header.begin());
  EXPECT_EQ(csv_fields(lines[1]).at(at), "");  // the baseline is no point
  for (std::size_t i = 0; i < values.size(); ++i)
    EXPECT_EQ(csv_fields(lines[i + 2]).at(at), values[i]) << lines[i + 2];
}

// Past max_connections: with allow_partial the stage runs with the clients that connected
// and reports the refused ones; the pooled fix has none; the configuration is put back.
TEST(Run, RefusalScenarioReportsRefusedConnectionsAndRestores) {
  cluster();
  fs::path file = workdir() / "refusals.yaml";
  write_file_durably(file, R"(name: refusals
workload:
  name: select-only
  scale: 1
  clients: 2
measure:
  warmup: 0s
  duration: 1s
mode: isolated
allow_partial: true
baseline:
  settings:
    max_connections: 12
stages:
  - name: too-many
    load: {clients: 30}
  - name: pooled
    load: {clients: 30, pool_size: 4}
)");
  const fs::path out = workdir() / "results-refusals";
  const ServerState before = server_state();
  ProcessResult r = pgslow({"run", file.string(), "--out", out.string()});
  ASSERT_TRUE(r.ok()) << r.output;
  const ServerState after = server_state();
  EXPECT_EQ(before.auto_conf_sha256, after.auto_conf_sha256);
  EXPECT_EQ(before.settings, after.settings);

  results::Run run = report::read_json(read_file(out / "report.json"), "report.json");
  ASSERT_EQ(run.stages.size(), 3u);
  const auto& too_many = run.stages[1];
  ASSERT_TRUE(too_many.error.empty()) << too_many.error;
  ASSERT_EQ(too_many.repeats.size(), 1u);
  const auto& m = too_many.repeats[0];
  EXPECT_GT(m.connections_refused, 0);
  EXPECT_LT(m.clients_connected, 30);
  EXPECT_EQ(m.clients_connected + m.connections_refused, 30);
  EXPECT_GT(m.committed, 0u);
  EXPECT_EQ(too_many.evidence.at("connections_refused"), m.connections_refused);
  const auto& pooled = run.stages[2];
  ASSERT_EQ(pooled.repeats.size(), 1u) << pooled.error;
  EXPECT_EQ(pooled.repeats[0].connections_refused, 0);
  EXPECT_GT(pooled.repeats[0].committed, 0u);
  // The report shows the refused column.
  const std::string md = read_file(out / "report.md");
  EXPECT_NE(md.find("refused"), std::string::npos) << md;
}

// kill -9 in the middle of a measured stage (the planner stage's workload, its settings
// applied): the next command repairs the server from the journal.
TEST(Run, KilledDuringTheWorkloadIsRepairedByTheNextCommand) {
  cluster();
  const fs::path file = write_scenario();
  const ServerState before = server_state();
  // The second stage's workload: 1 s into it (the first stage takes warm-up + duration).
  ProcessResult killed = pgslow({"run", file.string(), "--out", (workdir() / "killed").string()},
                                {"PGSLOW_CRASH_AT=workload", "PGSLOW_CRASH_AFTER_MS=1000"});
  ASSERT_EQ(killed.signal, 9) << killed.output;
  ASSERT_TRUE(fs::exists(workdir() / "journal.json")) << "the kill left no journal to repair";

  ProcessResult recovered = pgslow({"recover"});
  ASSERT_TRUE(recovered.ok()) << recovered.output;
  expect_restored(before);
}

// A one-stage select-only scenario (scale 1, 2 clients, no warm-up) whose stage sets `settings`
// (YAML lines under `settings:`, indented six spaces).
fs::path one_stage_scenario(const std::string& name, const std::string& settings, int duration_s) {
  fs::path file = workdir() / (name + ".yaml");
  write_file_durably(file, "name: " + name +
                               "\nworkload:\n  name: select-only\n  scale: 1\n  clients: 2\n"
                               "measure:\n  warmup: 0s\n  duration: " +
                               std::to_string(duration_s) + "s\nstages:\n  - name: " + name +
                               "\n    settings:\n" + settings);
  return file;
}

// A stage whose statement_timeout (1ms) would cancel pgslow's own queries: pgslow's sessions set
// their own timeouts, so the run ends and the configuration is restored, never stuck.
TEST(Run, StatementTimeoutStageEndsRestored) {
  cluster();
  const fs::path file = one_stage_scenario("timeout", "      statement_timeout: 1ms\n", 1);
  const ServerState before = server_state();
  ProcessResult r = pgslow({"run", file.string(), "--out", (workdir() / "timeout-out").string()});
  EXPECT_TRUE(r.exit_code == 0 || r.exit_code == 1) << r.exit_code << "\n" << r.output;
  EXPECT_EQ(r.output.find("terminate called"), std::string::npos) << r.output;
  expect_restored(before);
}

// Every changed stage failed (the server rejects the configuration): exit 1 with a message
// that says so, the configuration restored.
TEST(Run, EveryChangedStageFailedIsExit1) {
  cluster();
  // More shared memory than the machine has: the server cannot start with it.
  const fs::path file = one_stage_scenario("rejected", "      shared_buffers: 4TB\n", 1);
  const ServerState before = server_state();
  ProcessResult r = pgslow({"run", file.string(), "--out", (workdir() / "rejected-out").string()});
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_NE(r.output.find("every changed stage failed"), std::string::npos) << r.output;
  const ServerState after = server_state();
  EXPECT_EQ(before.auto_conf_sha256, after.auto_conf_sha256);
  EXPECT_EQ(before.settings, after.settings);
}

// Waits until the changed stage's workload runs (`knob` no longer `original`, the clients
// connected), then calls `act` once. False when that moment never came.
bool when_the_changed_stage_runs(const std::string& knob, const std::string& original,
                                 const std::function<void()>& act) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::minutes(2);
  while (std::chrono::steady_clock::now() < deadline) {
    try {
      pg::Connection conn = pg::Connection::open(conninfo());
      const auto value =
          conn.query_value("SELECT setting FROM pg_settings WHERE name = '" + knob + "'");
      const auto clients = conn.query_value(
          "SELECT count(*) FROM pg_stat_activity WHERE datname LIKE 'pgslow_%' AND "
          "backend_type = 'client backend' AND pid <> pg_backend_pid()");
      if (value && *value != original && clients && std::stoi(*clients) >= 2) {
        conn.close();
        act();
        return true;
      }
    } catch (const pg::Error&) {
      // The server is between states (pgslow restarting it): ask again.
    }
  }
  return false;
}

// The server restarts while a changed stage is measured (an operator, a crash): pgslow does not
// abort (exit 134, "terminate called"); the stage fails saying the server restarted under it
// (its figure would measure the outage), every changed stage failed, so exit 1, and the
// configuration is restored.
TEST(Run, ServerRestartMidStageEndsRestored) {
  cluster();
  const fs::path file = one_stage_scenario("restart", "      random_page_cost: 1e300\n", 4);
  const ServerState before = server_state();
  ProcessResult r;
  // Joined on every path: an exception out of the restart below is reported, not a terminate.
  std::jthread run([&] {
    r = pgslow({"run", file.string(), "--out", (workdir() / "restart-out").string()});
  });
  const bool restarted = when_the_changed_stage_runs("random_page_cost", "4", [] {
    try {
      cluster().restart(std::chrono::seconds(60));
    } catch (const std::exception&) {
      // pgslow may be restoring (restarting) at the same moment: make sure it is up. The two
      // starts can race ("lock file postmaster.pid already exists": pgslow's server is coming
      // up); a later call finds that server running and waits until it accepts queries.
      for (int attempt = 0; attempt < 3 && !cluster().is_running(); ++attempt) {
        try {
          cluster().start();
        } catch (const std::exception&) {
        }
      }
    }
  });
  run.join();
  ASSERT_TRUE(restarted) << r.output;
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_EQ(r.signal, 0) << r.output;
  EXPECT_EQ(r.output.find("terminate called"), std::string::npos) << r.output;
  // Where the restart lands decides the words, not the outcome: under the stage's runs, the
  // stage fails and so every changed stage failed; a slow restart (a busy machine) may still be
  // under way when the next run connects, and the run ends there. Either way: exit 1, said.
  // The stage's reason is a footnote of the table, which wraps.
  const std::string said = unwrapped(r.output);
  const bool under_the_stage = said.find("restarted during the measurement") != std::string::npos ||
                               said.find("stopped during the measurement") != std::string::npos;
  const bool before_the_next_run =
      said.find("does not accept connections (it stopped during the run)") != std::string::npos;
  EXPECT_TRUE(under_the_stage || before_the_next_run) << r.output;
  if (under_the_stage && !before_the_next_run) {
    EXPECT_NE(said.find("every changed stage failed"), std::string::npos) << r.output;
  }
  expect_restored(before);
}

// The server stops (`pg_ctl stop -m immediate` by its owner) while a changed stage is measured:
// no abort; nothing more can be measured, so the run ends with exit 1 and a message that says
// the server stopped, and the restore starts the server again with its original configuration.
TEST(Run, ServerStoppedMidStageEndsRestoredAndStartedAgain) {
  cluster();
  const fs::path file = one_stage_scenario("stopped", "      random_page_cost: 1e300\n", 4);
  const ServerState before = server_state();
  ProcessResult r;
  // Joined on every path: an exception out of the restart below is reported, not a terminate.
  std::jthread run([&] {
    r = pgslow({"run", file.string(), "--out", (workdir() / "stopped-out").string()});
  });
  ProcessResult stop;
  const bool stopped = when_the_changed_stage_runs("random_page_cost", "4", [&] {
    ProcessOptions o;
    if (::geteuid() == 0) o.run_as = "postgres";  // the managed cluster's server user as root
    // -W: no waiting for the stop. pgslow may start the server again before pg_ctl looks,
    // and pg_ctl would then wait 60 s for a server that is (again) running.
    stop = run_process({(cluster().pg_bin() / "pg_ctl").string(), "stop", "-D",
                        cluster().data_dir()->string(), "-m", "immediate", "-W"},
                       o);
  });
  run.join();
  ASSERT_TRUE(stopped) << r.output;
  EXPECT_TRUE(stop.ok()) << stop.output;
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_EQ(r.signal, 0) << r.output;
  EXPECT_EQ(r.output.find("terminate called"), std::string::npos) << r.output;
  EXPECT_NE(unwrapped(r.output).find("stopped during the"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("starting it with its original configuration"), std::string::npos)
      << r.output;
  ASSERT_TRUE(cluster().is_running()) << r.output;
  expect_restored(before);
}

// A signal while the configuration is put back after the last stage: the restore finishes and
// pgslow exits 143 (SIGTERM) or 130 (SIGINT), never 0. The crash hook holds pgslow exactly where
// the final restore begins (PGSLOW_CRASH_SIGNAL=STOP); the test delivers the signal there.
TEST(Run, SignalDuringTheFinalRestoreExits143Or130Restored) {
  cluster();
  const fs::path file = one_stage_scenario("final-restore", "      random_page_cost: 1e300\n", 1);
  const ServerState before = server_state();
  for (int sig : {SIGTERM, SIGINT}) {
    SCOPED_TRACE(sig == SIGTERM ? "SIGTERM" : "SIGINT");
    testing::PgslowProcess p({"--workdir", workdir().string(), "run", file.string(), "--out",
                              (workdir() / "final-restore-out").string()},
                             {"PGSLOW_CRASH_AT=restoring", "PGSLOW_CRASH_SIGNAL=STOP"});
    ASSERT_TRUE(p.wait_until_stopped()) << p.output();
    // Held in the final restore: the journal still keeps the original, and every stage ran.
    EXPECT_TRUE(fs::exists(workdir() / "journal.json"));
    EXPECT_NE(p.output().find("stage 2/2"), std::string::npos) << p.output();
    p.signal_and_continue(sig);
    p.wait();
    const std::string out = p.output();
    EXPECT_EQ(p.killed_by(), 0) << out;
    EXPECT_EQ(p.exit_code(), sig == SIGTERM ? 143 : 130) << out;
    EXPECT_NE(out.find(sig == SIGTERM ? "terminated by SIGTERM" : "interrupted by SIGINT"),
              std::string::npos)
        << out;
    EXPECT_NE(out.find("configuration restored"), std::string::npos) << out;
    EXPECT_EQ(out.find("terminate called"), std::string::npos) << out;
    expect_restored(before);
  }
}

// The clients take every connection slot (max_connections 5, 8 clients): with --allow-partial
// the run goes on with the clients that connected; pgslow's own evidence connections were
// opened before the clients, so they neither fail the run nor take it down.
TEST(Run, AllowPartialWhenClientsTakeEveryConnectionSlot) {
  cluster();
  fs::path file = one_stage_scenario("slots", "      max_connections: 5\n", 2);
  std::string text = read_file(file);
  text.replace(text.find("clients: 2"), 10, "clients: 8");
  write_file_durably(file, text);
  const ServerState before = server_state();
  const fs::path out = workdir() / "slots-out";
  ProcessResult r = pgslow({"run", file.string(), "--allow-partial", "--out", out.string()});
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(r.output.find("terminate called"), std::string::npos) << r.output;
  const ServerState after = server_state();
  EXPECT_EQ(before.auto_conf_sha256, after.auto_conf_sha256);
  EXPECT_EQ(before.settings, after.settings);
  results::Run run = report::read_json(read_file(out / "report.json"), "report.json");
  ASSERT_EQ(run.stages.size(), 2u);
  ASSERT_FALSE(run.stages[1].repeats.empty()) << run.stages[1].error;
  const auto& m = run.stages[1].repeats[0];
  EXPECT_LT(m.clients_connected, m.clients_requested);
  EXPECT_GT(m.clients_connected, 0);
}

}  // namespace
}  // namespace pgslow
