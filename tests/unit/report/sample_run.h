#pragma once
// A hand-built Run for the renderer tests: a baseline with three repeats, a cache stage with a
// skipped knob, a WAL stage with a warning (and a headline figure with one), a planner stage
// resting on 12 transactions, and an I/O stage that failed. Numbers echo the published "42,000x
// slower" run.

#include <cmath>

#include "report/views.h"

namespace pgslow::report::testing {

inline Measurement measurement(double tps, double seconds, double p99_ms) {
  Measurement m;
  m.duration_s = seconds;
  m.tps = tps;
  const auto total = static_cast<std::uint64_t>(std::llround(tps * seconds));
  m.rolled_back = total / 100;
  m.committed = total - m.rolled_back;
  m.latency.mean_us = p99_ms * 1000 / 4;
  m.latency.p50_us = p99_ms * 1000 / 5;
  m.latency.p90_us = p99_ms * 1000 / 3;
  m.latency.p95_us = p99_ms * 1000 / 2;
  m.latency.p99_us = p99_ms * 1000;
  m.latency.p999_us = p99_ms * 1500;
  m.latency.max_us = p99_ms * 3000;
  m.clients_requested = 8;
  m.clients_connected = 8;
  for (int i = 0; i < static_cast<int>(seconds); ++i) {
    // A steady series with a little wobble so the line chart has shape.
    m.tps_per_second.push_back(tps * (1 + 0.04 * std::sin(i * 0.7)));
    // The tail spikes every tenth second, as after a checkpoint.
    m.p99_per_second.push_back(p99_ms * 1000 * (i % 10 == 9 ? 3 : 1));
  }
  TxTypeResult no;
  no.name = "new_order";
  no.committed = m.committed / 2;
  no.rolled_back = m.rolled_back;
  no.latency = m.latency;
  m.by_type.push_back(no);
  // Each type over time: New-Order and Payment per 5 s, the tail spiking in the sixth interval.
  m.type_series_interval_s = 5;
  for (const char* name : {"new_order", "payment"}) {
    TypeSeries t;
    t.name = name;
    for (int k = 0; k * 5 < static_cast<int>(seconds); ++k) {
      t.finished.push_back(static_cast<std::uint64_t>(tps * 5 * 0.45 * (1 + 0.03 * (k % 3))));
      t.failed.push_back(k == 5 ? 2 : 0);
      t.p90_us.push_back(p99_ms * 1000 / 3 * (k == 5 ? 4 : 1));
    }
    m.type_series.push_back(std::move(t));
  }
  // The workload's own figures, as tpcc-lite computes them: tpmC counts the rolled back too.
  const double minutes = seconds / 60;
  m.headline.push_back({"tpmC", static_cast<double>(no.committed + no.rolled_back) / minutes,
                        "New-Orders per minute, rolled back included", ""});
  m.headline.push_back(
      {"NOPM", static_cast<double>(no.committed) / minutes, "committed New-Orders per minute", ""});
  return m;
}

inline Run sample_run() {
  Run run;
  run.pgslow_version = "0.1.0";
  run.scenario = "replay-42000x";
  run.description = "The published run's stages, adapted to PostgreSQL 15.";
  run.started_at = "2026-11-30T03:00:00Z";
  run.wall_seconds = 1234;
  run.server_version = "PostgreSQL 15.18";
  run.server_major = 15;
  run.target = "managed cluster in .pgslow/cluster";
  run.workload = "tpcc";
  run.scale = 4;
  run.data_bytes = 412ULL * 1024 * 1024;
  run.reset_method = "template copy (FILE_COPY)";
  run.warmup_s = 10;
  run.duration_s = 60;
  run.repeats = 3;
  run.mode = "cumulative";
  run.machine = {2, 24ULL * 1024 * 1024 * 1024, "Linux 6.1.0", "lab-1"};

  StageResult baseline;
  baseline.name = "baseline";
  baseline.description = "defaults";
  baseline.load.clients = 8;
  baseline.repeats = {measurement(7082, 60, 4.1), measurement(6950, 60, 4.3),
                      measurement(7190, 60, 4.0)};
  baseline.evidence = {{"buffer_hit_ratio", 0.999},
                       {"blocks_read", 420},
                       {"blocks_hit", 9.1e6},
                       {"read_syscalls", 1200},
                       {"checkpoints_requested", 0},
                       {"checkpoints_timed", 0},
                       {"wal_bytes", 2.1e8},
                       {"wal_fpi", 1800},
                       {"temp_files", 0},
                       {"seq_scans", 12},
                       {"index_scans", 3.4e6},
                       {"dead_tuples", 5100}};
  baseline.evidence_seconds = 70;
  baseline.reset_seconds = 0.24;

  StageResult cache;
  cache.name = "tiny-cache";
  cache.load.clients = 8;
  cache.changes = {{"shared_buffers", "128MB", "2MB", "restart"}};
  cache.skipped = {{"io_method", "worker", "needs PostgreSQL 18 (server is 15)"}};
  cache.repeats = {measurement(1052, 60, 31), measurement(1010, 60, 33), measurement(1090, 60, 30)};
  cache.evidence = {{"buffer_hit_ratio", 0.7052},
                    {"blocks_read", 2.6e6},
                    {"blocks_hit", 6.2e6},
                    {"read_syscalls", 3.1e5},
                    {"checkpoints_requested", 0},
                    {"checkpoints_timed", 0},
                    {"wal_bytes", 3.1e7},
                    {"wal_fpi", 300},
                    {"temp_files", 0},
                    {"seq_scans", 4},
                    {"index_scans", 5.0e5},
                    {"dead_tuples", 900}};
  cache.evidence_seconds = 70;

  StageResult wal;
  wal.name = "wal-hell";
  wal.load.clients = 8;
  wal.changes = {{"max_wal_size", "1GB", "32MB", "reload"},
                 {"checkpoint_timeout", "5min", "30s", "reload"}};
  wal.warnings = {"checkpoint_completion_target = 0 makes every checkpoint a burst of writes"};
  wal.repeats = {measurement(1040, 60, 35), measurement(1001, 60, 37), measurement(1075, 60, 34)};
  for (auto& m : wal.repeats) {
    m.headline.push_back({"Delivery skips", 3.0, "% of Deliveries, 1.40% of districts",
                          "3 of 100 Deliveries skipped a district, more than 2.7.4.2 allows"});
    // Two rows of the TPC-C-lite audit, one failed: the label is withheld.
    m.audit = {{"4.2.2", "10 terminals per warehouse", "8 terminals on 4 warehouses", false},
               {"5.2.3", "payment share at least 43%", "43.4% of 1,234", true}};
  }
  wal.evidence = {{"buffer_hit_ratio", 0.701},
                  {"blocks_read", 2.5e6},
                  {"blocks_hit", 6.0e6},
                  {"read_syscalls", 3.0e5},
                  {"checkpoints_requested", 41},
                  {"checkpoints_timed", 2},
                  {"wal_bytes", 6.3e7},
                  {"wal_fpi", 52000},
                  {"temp_files", 0},
                  {"seq_scans", 4},
                  {"index_scans", 4.9e5},
                  {"dead_tuples", 880}};
  wal.evidence_seconds = 70;
  // Which of the two knobs did it: max_wal_size, with the evidence that moved alone.
  Attribution why;
  why.headline =
      "wal-hell: -49.9% (2.0x slower); max_wal_size = 32MB is the cause; 1 other knob: no "
      "measurable effect (could see ±8.6%)";
  why.reference = "baseline";
  why.stage = {0.501, 0.47, 0.53, 3, 3, 184200};
  KnobEffect cause;
  cause.knobs = {"max_wal_size"};
  cause.values = {"32MB"};
  cause.verdict = "the cause";
  cause.alone = EffectInterval{0.52, 0.49, 0.56, 1, 3, 62400};
  cause.without = EffectInterval{0.98, 0.92, 1.05, 1, 3, 120000};
  cause.evidence = {{"checkpoints_requested", 0, 35.1}, {"wal_fpi", 0.00407, 0.714}};
  KnobEffect harmless;
  harmless.knobs = {"checkpoint_timeout"};
  harmless.values = {"30s"};
  harmless.verdict = "no measurable effect";
  why.knobs = {cause, harmless};
  why.harmless = cause.without;
  why.harmless->detectable = 0.086;  // what the one run of the harmless knobs could have seen
  why.extra_runs = 4;
  why.restarts = 0;
  why.seconds = 290;
  why.noise = 0.021;
  wal.attribution = why;

  StageResult planner;
  planner.name = "planner";
  planner.load.clients = 8;
  planner.changes = {{"random_page_cost", "4", "1e300", "reload"},
                     {"cpu_index_tuple_cost", "0.005", "1e300", "reload"}};
  planner.repeats = {measurement(0.2, 60, 41000)};
  planner.evidence = {{"buffer_hit_ratio", 0.52},
                      {"blocks_read", 3.9e6},
                      {"blocks_hit", 4.2e6},
                      {"read_syscalls", 3.8e6},
                      {"checkpoints_requested", 3},
                      {"checkpoints_timed", 1},
                      {"wal_bytes", 1.0e6},
                      {"wal_fpi", 400},
                      {"temp_files", 0},
                      {"seq_scans", 9100},
                      {"index_scans", 30},
                      {"dead_tuples", 12}};
  planner.evidence_seconds = 70;

  StageResult io;
  io.name = "io-workers";
  io.load.clients = 8;
  io.changes = {{"shared_buffers", "2MB", "128kB", "restart"}};
  io.error = "could not start the stage: ERROR:  no unpinned buffers available";

  run.stages = {baseline, cache, wal, planner, io};
  run.expectations = {{"planner at least 100x slower than baseline", true, "35,410x slower"},
                      {"tiny-cache within 10% of baseline", false, "-85.1%"}};
  return run;
}

}  // namespace pgslow::report::testing
