#pragma once
// Sample results of each type the renderer registry knows, for the golden files
// (registry_golden_test.cpp) and the renderers' own tests.

#include <string>
#include <vector>

#include "report/bench_view.h"
#include "report/bisect_view.h"
#include "report/check_data_view.h"
#include "report/cliff_view.h"
#include "report/knob_list_view.h"
#include "report/plan_view.h"
#include "report/registry.h"
#include "report/versions_view.h"
#include "tests/unit/report/sample_run.h"

namespace pgslow::report::testing {

// A search of work_mem from 64MB down to 64kB that found the cliff between 4MB and 2MB, with an
// uncertain point, evidence and a failed run.
inline CliffPoint point(const std::string& value, double kb, int order, double ratio, double low,
                        double high, CliffVerdict verdict, std::uint64_t tx, double temp_files) {
  CliffPoint p;
  p.value = value;
  p.base_value = kb;
  p.order = order;
  p.samples = {1000 * ratio, 1010 * ratio, 990 * ratio};
  p.baseline_samples = {1000, 1005, 995, 1000};
  p.effect = {ratio, low, high, 3, 4, tx, 0.05};
  p.verdict = verdict;
  p.transactions = tx;
  p.tps = 1000 * ratio;
  p.p99_us = 5000 / ratio;
  p.evidence = {
      {"temp_files", temp_files}, {"temp_bytes", temp_files * 1.5e6}, {"buffer_hit_ratio", 0.99}};
  // Every axis against the baseline runs around the point: temp files cost where they spill.
  const double temp = 1 + temp_files;
  p.axes = {{"tps", {ratio, low, high, 5, 0.995, true}},
            {"cpu_per_tx", {1.02, 0.96, 1.08, 5, 0.995, true}},
            {"temp_bytes", {temp, temp * 0.9, temp * 1.1, 5, 0.995, true}}};
  return p;
}

inline CliffResult sample_cliff() {
  CliffResult r;
  r.knob = "work_mem";
  r.from = "64MB";
  r.to = "64kB";
  r.to_value = 64;
  r.resolution = 2;
  r.grid_steps = 10;
  r.max_points = 5;
  r.confidence = 0.995;
  r.search_confidence = 0.95;
  r.runs = 34;
  r.seconds = 170;
  r.workload = "script scenarios/scripts/sort-heavy.sql at scale 1, 4 clients, 2 s runs";
  r.server = "managed cluster (PostgreSQL 17)";
  r.baseline.value = "64MB";
  r.baseline.base_value = 65536;
  r.baseline.samples = std::vector<double>(16, 1000);
  r.baseline.transactions = 32000;
  r.baseline.evidence = {{"temp_files", 0}, {"temp_bytes", 0}, {"buffer_hit_ratio", 0.99}};
  r.points.push_back(point("64kB", 64, 1, 0.42, 0.38, 0.47, CliffVerdict::kHarmful, 2500, 3));
  r.points.push_back(point("2MB", 2048, 2, 0.82, 0.76, 0.88, CliffVerdict::kHarmful, 4900, 1));
  r.points.push_back(point("16MB", 16384, 3, 1.01, 0.95, 1.07, CliffVerdict::kSafe, 6100, 0));
  CliffPoint eight = point("8MB", 8192, 4, 0.97, 0.93, 1.01, CliffVerdict::kUncertain, 12000, 0);
  eight.looks = 2;
  eight.samples.insert(eight.samples.end(), {970, 975, 965});
  r.points.push_back(eight);
  CliffPoint four = point("4MB", 4096, 5, 0.99, 0.94, 1.04, CliffVerdict::kSafe, 6000, 0);
  four.error = "a run failed: the server restarted under it";
  r.points.push_back(four);
  r.first_harmful = 1;
  r.last_safe = 4;
  return r;
}

// A plan of three stages: the baseline, a reload stage with a skipped knob and a warning, and
// a restart stage whose two knobs are attributed, under a pool of connections.
inline PlanResult sample_plan() {
  PlanResult p;
  p.scenario = "wal-and-cache";
  p.file = "scenarios/wal-and-cache.yaml";
  p.description = "A small cache, then WAL abuse | with a pipe.";
  p.server_version = "15.18";
  p.workload = "tpcb-like";
  p.scale = 5;
  p.clients = 8;
  p.warmup_s = 2;
  p.duration_s = 10;
  p.repeats = 2;
  p.mode = "cumulative";
  PlanStage base;
  base.name = "baseline";
  base.is_baseline = true;
  base.load.clients = 8;
  p.stages.push_back(base);
  PlanStage planner;
  planner.name = "planner";
  planner.description = "Index scans priced out of the plan.";
  planner.load.clients = 8;
  planner.changes = {{"random_page_cost", "4", "1e300", "reload"}};
  planner.skipped = {{"summarize_wal", "on", "needs PostgreSQL 17"}};
  planner.warnings = {"random_page_cost 1e300 makes every index scan look unaffordable"};
  planner.design_why = "switchback: every knob acts within a reload, 6 blocks of each";
  p.stages.push_back(planner);
  PlanStage wal;
  wal.name = "wal-abuse";
  wal.load.clients = 16;
  wal.load.pool_size = 4;
  wal.load.rate = 500;
  wal.needs_restart = true;
  wal.changes = {{"max_wal_size", "1GB", "32MB", "reload"},
                 {"wal_buffers", "4MB", "64kB", "restart"}};
  wal.envelope_text = "memory 136MB";
  wal.design_why = "separate runs: wal_buffers needs a restart";
  wal.attribute = true;
  wal.attribution_units = 2;
  wal.attribution_runs = 8;
  wal.attribution_max_runs = 16;
  p.stages.push_back(wal);
  p.estimated_seconds = 262;
  p.attribution_runs = 8;
  p.attribution_seconds = 96;
  return p;
}

// bisect of a tuning file against the defaults: shared_buffers found alone, a second round's
// pair slower only together, --isolate's attribution, a change not bisected.
inline BisectResult sample_bisect() {
  BisectResult r;
  r.good_label = "default";
  r.bad_label = "tuning.conf";
  r.identical = {"max_connections"};
  r.good_tps = 1000;
  r.bad_tps = 310;
  r.noise = 0.04;
  r.threshold_tps = 620;
  r.clearly_different = true;
  r.conclusion =
      "2 of 4 changes make bad slower: shared_buffers (TPS 0.42x good); "
      "commit_delay + commit_siblings (slower only together: TPS 0.74x good)";
  BisectCulprit one;
  one.round = 1;
  one.knobs = {"shared_buffers"};
  one.changes = {"shared_buffers: 128MB -> 128kB"};
  one.tps = 420;
  one.ratio = 0.42;
  one.threshold_tps = 620;
  one.solo = {{"shared_buffers", 420, 0.42, BisectVerdict::kBad}};
  BisectCulprit two;
  two.round = 2;
  two.knobs = {"commit_delay", "commit_siblings"};
  two.changes = {"commit_delay: 0 -> 100000", "commit_siblings: 5 -> 0"};
  two.tps = 740;
  two.ratio = 0.74;
  two.threshold_tps = 860;
  two.interaction = true;
  two.certain = false;
  two.solo = {{"commit_delay", 990, 0.99, BisectVerdict::kGood},
              {"commit_siblings", 1004, 1.004, BisectVerdict::kGood}};
  r.culprits = {one, two};
  r.remaining_tps = 985;
  r.remaining_ratio = 0.985;
  r.runs = {
      {1, "good", 0, {}, {1000, 1010, 990}, 3, 1000, BisectVerdict::kGood, 6.1, false},
      {2,
       "bad",
       0,
       {"shared_buffers", "commit_delay", "commit_siblings", "work_mem"},
       {310, 305, 315},
       3,
       310,
       BisectVerdict::kBad,
       6.3,
       true},
      {3,
       "search",
       1,
       {"shared_buffers", "commit_delay"},
       {418, 422},
       2,
       420,
       BisectVerdict::kBad,
       4.2,
       true},
      {4, "solo", 1, {"shared_buffers"}, {420, 419}, 2, 419.5, BisectVerdict::kBad, 4.0, false}};
  r.total_runs = 10;
  r.search_runs = 4;
  r.restarts = 3;
  r.wall_seconds = 41.5;
  r.uncertain = true;
  r.drift = -0.02;
  r.candidates = {{"shared_buffers", std::nullopt, "128kB", false, true, "128MB", "tuning.conf:3"},
                  {"commit_delay", std::nullopt, "100000", false, false, "0", "tuning.conf:4"},
                  {"commit_siblings", std::nullopt, "0", false, false, "5", "tuning.conf:5"},
                  {"work_mem", std::string("4MB"), "8MB", false, false, "4MB", "tuning.conf:6"}};
  r.excluded = {
      {"vacuum_cost_page_miss", "10", "tuning.conf:7", "not a setting of PostgreSQL 15", false}};
  return r;
}

// `pgslow bench -w tpcc-lite`: one measurement with its transaction types and headline figures.
inline BenchResult sample_bench() {
  BenchResult b;
  b.workload = "tpcc-lite";
  b.scale = 2;
  b.load.clients = 20;
  b.load.workers = 2;
  b.measurement = measurement(512, 30, 48);
  b.measurement.rolled_back = 70;
  b.measurement.failed = 2;
  b.measurement.retries = 4;
  b.measurement.by_type = {{"new_order", 6900, 70, 2, 3, 41'000, {}},
                           {"payment", 6600, 0, 0, 1, 9'000, {}}};
  b.measurement.by_type[0].latency = b.measurement.latency;
  b.measurement.by_type[1].latency = b.measurement.latency;
  b.measurement.headline = {{"tpmC", 13940, "per minute", ""}, {"NOPM", 13800, "per minute", ""}};
  b.measurement.audit = {
      {"4.2.2", "10 terminals per warehouse", "20 terminals for 2 warehouses", true},
      {"5.5.1.1", "measured interval at least 5 min", "30 s", false}};
  b.measurement.in_flight_at_end = 3;
  b.measurement.in_flight_longest_us = 2'100'000;
  b.data_bytes = 230'000'000;
  b.reset_seconds = 1.8;
  return b;
}

// The sample run on a second version that did not run one stage.
inline VersionRuns sample_versions() {
  Run other = sample_run();
  other.server_version = "PostgreSQL 18.4";
  other.server_major = 18;
  other.stages[1].repeats = {measurement(2104, 60, 15)};
  other.stages.pop_back();
  return VersionRuns{{sample_run(), other}};
}

// The sample run again on PostgreSQL 17, for `pgslow compare`.
inline Run sample_run_on_17() {
  Run other = sample_run();
  other.server_version = "PostgreSQL 17.2";
  other.server_major = 17;
  other.stages[1].repeats = {measurement(2104, 60, 15)};
  return other;
}

// TPC-C-lite's checks on a clone where one failed, its detail naming the offending rows.
inline CheckDataResult sample_check_data() {
  CheckDataResult r;
  r.workload = "tpcc-lite";
  r.database = "pgslow_tpcc_lite_3";
  r.checks = {{"3.3.2.1", "W_YTD = sum(D_YTD)", true, ""},
              {"3.3.2.2", "D_NEXT_O_ID - 1 = max(O_ID) = max(NO_O_ID)", false,
               "district (1, 4): D_NEXT_O_ID - 1 = 3001, max(O_ID) = 3002"},
              {"3.3.2.3", "max(NO_O_ID) - min(NO_O_ID) + 1 = count(*) per district", true, ""}};
  return r;
}

// Two knobs of the cache category against a PostgreSQL 15 server, one the server lacks.
inline KnobList sample_knob_list() {
  KnobList l;
  l.category = "cache";
  l.server = "managed cluster in /tmp/pgslow/cluster (port 5432)";
  l.server_major = 15;
  l.knobs = {
      {"shared_buffers",
       "cache",
       8,
       "128MB",
       {"8MB", "2MB", "128kB"},
       LiveKnob{"128MB", "yes", "restart"}},
      {"io_combine_limit", "cache", 17, "128kB", {"8kB"}, LiveKnob{"-", "no (needs 17)", "-"}}};
  return l;
}

// `knobs show shared_buffers` against a PostgreSQL 15 server.
inline KnobDetail sample_knob_detail() {
  KnobDetail k;
  k.name = "shared_buffers";
  k.category = "cache";
  k.versions = "8 and later";
  k.why = "The server's own page cache. Too small and reads go to the OS page cache or disk.";
  k.healthy = "25% of RAM";
  k.slow = {"8MB", "2MB", "128kB"};
  k.watch = {"hit_ratio", "read_syscalls"};
  k.moves = {"blocks_read", "read_syscalls"};
  k.minimum = {{15, "128kB"}};
  k.docs = "https://www.postgresql.org/docs/current/runtime-config-resource.html";
  k.pitfalls = {"needs a restart", "huge values slow down DROP TABLE"};
  k.server = "managed cluster in /tmp/pgslow/cluster (port 5432)";
  k.server_major = 15;
  LiveSetting live;
  live.current = "128MB";
  live.setting = "16384";
  live.unit = "8kB";
  live.min = "128kB  (16 x 8kB)";
  live.max = "8TB  (1073741823 x 8kB)";
  live.type = "integer";
  live.context = "postmaster";
  live.applies_by = "restart";
  live.source = "configuration file";
  live.default_value = "16384";
  k.live = live;
  return k;
}

inline PresetList sample_preset_list() {
  PresetList l;
  l.presets = {{"default", 0, "Changes nothing: the server as found."},
               {"tiny-cache", 1, "A 2MB buffer cache (256 pages). Misses go to the page cache."}};
  return l;
}

// `presets show tiny-cache` against a PostgreSQL 15 server, with one warning.
inline PresetDetail sample_preset_detail() {
  PresetDetail p;
  p.name = "tiny-cache";
  p.description = "A 2MB buffer cache (256 pages).";
  p.includes = {"default"};
  p.settings = {{"shared_buffers", "2MB", "cache", 8}};
  p.server = "managed cluster in /tmp/pgslow/cluster (port 5432)";
  p.server_major = 15;
  p.checks = {{"shared_buffers", "2MB", "ok", "restart; warning: below 16MB"}};
  p.problem_count = "0 errors, 1 warning";
  p.problems = {"presets.yaml:12: warning: shared_buffers: below 16MB"};
  return p;
}

// An effect measured as -40% with its interval.
inline Effect sample_effect() {
  Effect e;
  e.known = true;
  e.ratio = 0.6;
  e.interval.ratio = 0.6;
  e.interval.low = 0.51;
  e.interval.high = 0.71;
  e.interval.df = 8;
  e.interval.known = true;
  e.verdict = Verdict::kSlower;
  e.transactions = 344273;
  e.reference_transactions = 1150186;
  return e;
}

// A stated interval with 8 degrees of freedom.
inline Interval known_interval(double ratio, double low, double high, double confidence = 0.95) {
  Interval i;
  i.ratio = ratio;
  i.low = low;
  i.high = high;
  i.df = 8;
  i.confidence = confidence;
  i.known = true;
  return i;
}

inline Reveal sample_reveal() {
  Reveal r;
  r.lesson = "cache-machine";
  r.reference_stage = "baseline";
  r.stage = "cache-8mb-136mb";
  r.effect = sample_effect();
  // Every axis against the baseline: slower, and the small cache costs reads per transaction.
  const auto axis = [](const char* key, double ratio, double low, double high) {
    return AxisChange{find_axis(key), change_of(known_interval(ratio, low, high, 0.99)), true};
  };
  r.effect.axes = {axis("tps", 0.6, 0.51, 0.71), axis("cpu_per_tx", 1.04, 0.98, 1.1),
                   axis("blocks_read", 40, 30, 53), axis("p99", 1.3, 1.1, 1.54)};
  r.effect.axes_verdict = axes_verdict(r.effect.axes);
  LatencyCheck a;
  a.mean_us = 132.8;
  a.p50_us = 120;
  a.p99_us = 410;
  a.tps = 30119;
  a.clients = 4;
  a.littles_law_us = 132.8;
  LatencyCheck b = a;
  b.mean_us = 250.8;
  b.p99_us = 1900;
  b.tps = 15950;
  b.littles_law_us = 250.8;
  r.latency = {{"baseline", a}, {"cache-8mb-136mb", b}};
  r.predictions = {{"ana", "slower", "-50%", "right direction, within 2x"},
                   {"bo | the \"room\"", "slower", "10x slower", "right direction, 6.7x off"}};
  r.evidence = {{"hit ratio", "95.7%", "55.4%"}, {"backend time in IO:DataFileRead", "13%", "30%"}};
  r.gap = "The data no longer fits the machine: misses go to the disk.";
  return r;
}

// A cliff lesson's reveal on the sample search: a guess inside the cliff, one 4x above it, a
// value that is not one, a choice; the evidence and waits at the knee (4MB against 2MB).
inline CliffReveal sample_cliff_reveal() {
  CliffReveal r;
  r.lesson = "cliff-sort";
  r.cliff = sample_cliff();
  r.predictions = {{"ana", "knee", "3MB", "right: between 4MB (safe) and 2MB (harmful)", 0, 1},
                   {"bo", "knee", "16MB", "4.0x above the cliff", 0, 4},
                   {"cy", "knee", "lots", "not a value of work_mem (write it as 64MB)", 0, 0},
                   {"cy", "evidence", "b", "right", 0, 0}};
  r.safe = "4MB (last safe)";
  r.harmful = "2MB (first harmful)";
  r.evidence = {{"temp files/tx", "0", "1.00"}, {"backend time in IO:BufFileWrite", "0%", "6%"}};
  r.gap = "The sort no longer fits in work_mem: it writes its rows to a temporary file.";
  return r;
}

inline LessonList sample_lesson_list() {
  LessonList l;
  l.lessons = {{"cache-machine", 6, "A small cache in a small machine"},
               {"little", 0, "Little's law"}};
  return l;
}

inline MysteryClues sample_clues() {
  MysteryClues c;
  c.difficulty = 2;
  c.effect = sample_effect();
  c.before.mean_us = 1200;
  c.before.p99_us = 4100;
  c.now.mean_us = 2000;
  c.now.p99_us = 9800;
  c.evidence = {{"WAL bytes per transaction", "1.2 kB", "9.8 kB"}};
  c.waits = {{"LWLock:WALWrite", "2%", "41%"}, {"CPU", "70%", "40%"}};
  c.log_lines = {"LOG:  checkpoint starting: wal",
                 "LOG:  checkpoints are occurring too frequently"};
  c.log_lines_total = 14;
  c.decoys = true;
  return c;
}

inline MysteryReveal sample_mystery_reveal() {
  MysteryReveal r;
  r.answer = "the wal-hell preset";
  r.culprits = {{"commit_delay", "10000", true}, {"wal_sync_method", "open_dsync", false}};
  r.decoys = {{"work_mem", "8MB", false}};
  r.effect = sample_effect();
  r.guesses = 3;
  r.solved = true;
  return r;
}

// A fix of three changes, one of which did nothing, with one change refused.
inline FixResult sample_fix() {
  FixResult f;
  f.who = "ana";
  f.ran = true;
  f.fault = sample_effect();
  f.fault.ratio = 4.0;
  f.fault.interval = {4.0, 3.5, 4.6, 8, 0.95, true};
  f.fault.verdict = Verdict::kFaster;
  f.vs_broken = f.fault;
  f.vs_broken.ratio = 3.8;
  f.vs_broken.interval = {3.8, 3.3, 4.4, 8, 0.95, true};
  f.vs_healthy = sample_effect();
  f.vs_healthy.ratio = 0.97;
  f.vs_healthy.interval = {0.97, 0.9, 1.05, 8, 0.95, true};
  f.vs_healthy.verdict = Verdict::kWithinNoise;
  f.recovered = {true, 0.96, 0.78, 1.18};
  FixChange a{"enable_indexscan", "on", f.vs_broken, {true, 0.96, 0.78, 1.18}, false};
  FixChange b{"work_mem", "64MB", f.vs_healthy, {true, 0.02, -0.05, 0.08}, true};
  f.changes = {a, b};
  f.refused = {
      "shared_buffers=1TB: needs a server restart the room did not plan for "
      "(--allow-restart runs it)"};
  return f;
}

inline FixScoreboard sample_scoreboard() {
  FixResult partial = sample_fix();
  partial.who = "bo";
  partial.changes.resize(1);
  partial.recovered = {true, 0.42, 0.3, 0.55};
  FixResult refused;
  refused.who = "cy";
  refused.changes = {{"shared_buffers", "1TB", {}, {}, false}};
  refused.refused = {"shared_buffers=1TB: the server refuses it"};
  return rank_fixes({partial, refused, sample_fix()});
}

// A session of one lesson (two quantified predictions, one choice) and one mystery with fixes.
inline SessionRecord sample_record() {
  Reveal reveal = sample_reveal();
  reveal.predictions[0].predicted_ratio = 0.5;  // "-50%" against a measured 0.6: 1.2x off
  reveal.predictions[1].predicted_ratio = 0.1;  // "10x slower": 6x off
  reveal.predictions.push_back({"cy", "cause", "b", "right", 0});
  SessionRecord r;
  r.lessons.push_back(
      record_lesson(reveal, "A small cache in a small machine", "2026-12-02T10:00:00Z"));
  // A cliff lesson: its calibration is the median distance of the guesses (1x and 4x: 2.5x).
  r.lessons.push_back(
      record_cliff_lesson(sample_cliff_reveal(), "How little work_mem?", "2026-12-02T10:15:00Z"));
  r.mysteries.push_back({"2026-12-02T10:30:00Z", 3, sample_mystery_reveal(), sample_scoreboard()});
  return r;
}

}  // namespace pgslow::report::testing
