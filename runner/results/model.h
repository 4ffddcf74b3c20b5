#pragma once
// The plain result structs every renderer reads (console, Markdown, JSON, CSV, HTML). They
// know nothing of libpq or the server: the runner fills them, report/ renders them, and
// report.json round-trips them (docs/report-schema.md).

#include <algorithm>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "results/stats.h"

namespace pgslow::results {

// A fixed-rate transaction is on time when it starts at most this late (schedule lag).
inline constexpr double kOnTimeLagUs = 1000;

// Latency percentiles in microseconds.
struct LatencySummary {
  double mean_us = 0;
  double p50_us = 0;
  double p90_us = 0;  // TPC-C's response-time limits are read here (5.2.5.3)
  double p95_us = 0;
  double p99_us = 0;
  double p999_us = 0;
  double max_us = 0;

  bool operator==(const LatencySummary&) const = default;
};

// One transaction type of a measurement (New-Order, Payment, ...).
struct TxTypeResult {
  std::string name;
  std::uint64_t committed = 0;
  std::uint64_t rolled_back = 0;  // by design (New-Order's 1%), not failures
  std::uint64_t failed = 0;
  std::uint64_t retries = 0;
  // The failed attempts and backoffs before the committed (or last) one, summed: inside the
  // latencies, as a terminal's user waits for them too.
  double retry_time_us = 0;
  LatencySummary latency;

  bool operator==(const TxTypeResult&) const = default;
};

// One transaction type over the measured window, interval by interval (the TPC-C
// specification's 5.6 charts: throughput and response time over the run, where a ramp, a
// checkpoint or a falling server shows): how many finished (committed or rolled back) and
// failed in each interval, and the p90 latency of those that finished (µs, 0: none did).
struct TypeSeries {
  std::string name;
  std::vector<std::uint64_t> finished;
  std::vector<std::uint64_t> failed;
  std::vector<double> p90_us;

  bool operator==(const TypeSeries&) const = default;
};

// The length of a run's intervals per transaction type: the shortest of 1, 2, 5, 10, 15 and
// 30 s that cuts the window into at most 60 intervals, and 30 s for a longer window (the
// spec's 5.6.3 asks for intervals of at most 30 s).
inline double type_series_interval_s(double duration_s) {
  for (double s : {1.0, 2.0, 5.0, 10.0, 15.0}) {
    if (duration_s <= 60 * s) return s;
  }
  return 30;
}

// A workload's own headline figure (TPC-C's tpmC and NOPM), computed by the workload from the
// measured window. Renderers show them by name, knowing no workload.
struct HeadlineFigure {
  std::string name;  // "tpmC"
  double value = 0;
  std::string unit;     // "per minute", "%"
  std::string warning;  // non-empty: the run breaks a rule of its benchmark (shown with it)

  bool operator==(const HeadlineFigure&) const = default;
};

// One rule of a workload's audit (TPC-C: what its tpmC label needs), measured on the run:
// keyed by the benchmark's clause, with what was measured and whether it passed.
struct AuditRow {
  std::string clause;    // "5.2.3"; "pgslow" for the lab's own rules
  std::string rule;      // "payment share at least 43%"
  std::string measured;  // "43.5% of 1,234"
  bool passed = false;

  bool operator==(const AuditRow&) const = default;
};

// One measured run (warm-up excluded). Outcome totals, defined once (pgbench's rule):
//   started = committed + rolled_back + failed; retries count extra attempts, not transactions.
struct Measurement {
  double duration_s = 0;
  std::uint64_t committed = 0;
  std::uint64_t rolled_back = 0;
  std::uint64_t failed = 0;
  std::uint64_t retries = 0;
  std::uint64_t reconnects = 0;
  double tps = 0;               // committed + rolled_back per second (pgbench counts both)
  LatencySummary latency;       // from the scheduled start in fixed-rate mode
  LatencySummary schedule_lag;  // fixed-rate mode only
  LatencySummary pool_wait;     // pool mode only: time waiting for a pooled connection
  LatencySummary connect_time;  // every connection the run opened (one per transaction with
                                // connect_per_transaction)
  double on_time_ratio = 0;     // fixed-rate mode: share started within kOnTimeLagUs of schedule
  // The server's memory (PSS) per client connection, idle right after connecting; 0: not
  // measured (a remote server, connect per transaction).
  double idle_connection_pss_bytes = 0;
  int idle_connections_measured = 0;  // the backends it was measured on
  std::vector<TxTypeResult> by_type;
  // Each transaction type over time, in intervals of type_series_interval_s (the last one
  // ends with the window, so it may be shorter); empty for a workload of one type.
  double type_series_interval_s = 0;
  std::vector<TypeSeries> type_series = {};
  std::vector<HeadlineFigure> headline;  // the workload's own figures; empty for most
  std::vector<AuditRow> audit;           // the workload's audit; empty for most
  std::map<std::string, std::uint64_t> failures_by_class;  // "serialization failure" -> n
  int clients_requested = 0;
  int clients_connected = 0;           // fewer than requested: refused connections (53300)
  int connections_refused = 0;         // connections the server refused at the start (53300)
  std::vector<double> tps_per_second;  // the progress series, one value per second
  // The latency's p99 (µs) of the transactions that finished in each of those seconds (0: none
  // did): a checkpoint's spikes, which the run's own p99 averages away. Empty: not recorded.
  std::vector<double> p99_per_second = {};
  // Transactions still under way when the window closed (counted as none of the above: a
  // transaction counts when it finishes inside the window), and how long the longest of them
  // had run by then, from its scheduled start: a lower bound on its latency.
  std::uint64_t in_flight_at_end = 0;
  double in_flight_longest_us = 0;
  // CPU seconds (user + system) spent in the measured window by every server process (a local
  // server: /proc) and by pgslow's client threads; 0: not measured. Per transaction they are
  // the cost of a transaction, which moves much less with other load than TPS does.
  double server_cpu_s = 0;
  double client_cpu_s = 0;
  // The share of the machine's CPU (0 to 1 of cores x wall time) other programs used in user
  // mode (evidence::CpuShares::neighbours): the covariate the comparisons subtract
  // (results/switchback.h); nullopt: not measured (a remote server, an older report).
  std::optional<double> neighbour_cpu = std::nullopt;
  // The evidence counters the cost axes read (results/axes.h: wal_bytes, wal_fpi, blocks_read,
  // read_syscalls, temp_bytes), per transaction over this run's own evidence window; empty:
  // not measured (no evidence connection, an older report).
  std::map<std::string, double> per_tx = {};

  bool operator==(const Measurement&) const = default;
};

// The length of interval k of m's type series: type_series_interval_s, the last one up to the
// window's end; 0 past it.
inline double type_series_seconds(const Measurement& m, std::size_t k) {
  const double begin = m.type_series_interval_s * static_cast<double>(k);
  return std::clamp(m.duration_s - begin, 0.0, m.type_series_interval_s);
}

// One knob a stage changes, as validated against the live server.
struct KnobChange {
  std::string name;
  std::string old_value;  // the server's value before the stage
  std::string new_value;
  std::string apply_by;  // "reload", "restart" or kApplyByPooler

  bool operator==(const KnobChange&) const = default;
};

// How a setting of pgslow's PgBouncer ("pgbouncer.pool_mode") is applied: its configuration
// rewritten and RELOAD on its admin console (docs/pooler.md).
inline constexpr std::string_view kApplyByPooler = "pooler reload";

// A knob the server lacks or cannot take, with the reason ("needs PostgreSQL 17").
struct SkippedKnob {
  std::string name;
  std::string value;
  std::string reason;

  bool operator==(const SkippedKnob&) const = default;
};

// Load-side knobs of a stage (the driver's settings).
struct LoadSettings {
  int clients = 0;
  int pool_size = 0;  // 0: one connection per client
  bool connect_per_transaction = false;
  double rate = 0;          // transactions per second, 0: closed loop
  int workers = 0;          // driver threads
  double rate_percent = 0;  // the rate as a share of the baseline's TPS ("75%"); 0: absolute
  // The clients' path (docs/pooler.md): "" the run's pooler, if any; "driver" the driver's own
  // pool (pool_size); "pgbouncer" pgslow's PgBouncer, whose pool pool_size then sizes.
  std::string pooler;
  // PgBouncer settings this stage gives pgslow's PgBouncer over the run's pooler (a stage's
  // `pgbouncer.pool_mode: session` and the like, docs/pooler.md "Pooler settings as knobs"),
  // by setting name ("pool_mode").
  std::map<std::string, std::string> pooler_settings;

  bool operator==(const LoadSettings&) const = default;
};

// What a search judges a configuration by (metric.h defines each) and which way it looks:
// attribution and bisect record it, so a report words their ratios in the metric's own terms.
struct Metric {
  enum class Kind {
    kTps,            // committed + rolled back per second; higher is better
    kCpuPerTx,       // the server's CPU seconds per transaction; lower is better
    kP99,            // the latency's 99th percentile (µs); lower is better
    kEvidencePerTx,  // an evidence key per committed transaction (wal_bytes, ...); lower is better
  };
  Kind kind = Kind::kTps;
  std::string evidence;  // kEvidencePerTx: the evidence key ("wal_bytes", "blocks_read")
  // false: look for what made it worse (--direction slower, the default); true: for what made
  // it better (--direction faster). Only search_sample (metric.h) reads it.
  bool better = false;

  static const Metric kTps;
  static const Metric kCpuPerTx;
  static const Metric kP99;

  bool operator==(const Metric&) const = default;
};
inline const Metric Metric::kTps{Metric::Kind::kTps, {}, false};
inline const Metric Metric::kCpuPerTx{Metric::Kind::kCpuPerTx, {}, false};
inline const Metric Metric::kP99{Metric::Kind::kP99, {}, false};

// An effect as a ratio new / reference (0.1: 10x slower) with its 95% interval, computed
// from the repeated runs of both configurations (their spread; no fixed band), and the
// transactions the new configuration's runs committed.
struct EffectInterval {
  double ratio = 1;
  double low = 1;
  double high = 1;
  int runs = 0;                    // runs of the new configuration
  int reference_runs = 0;          // runs of the reference
  std::uint64_t transactions = 0;  // committed + rolled back in the new configuration's runs
  // The smallest change either way this comparison could have seen (Interval::detectable);
  // 0: not computed.
  double detectable = 0;

  bool operator==(const EffectInterval&) const = default;
};

// Evidence that moved when a knob alone was applied: the reference's value and the knob's,
// normalised as the report compares stages (per transaction, per minute; latency_p99 in µs).
struct KnobEvidence {
  std::string key;  // docs/knobs.md evidence name ("wal_sync", "latency_p99", ...)
  double reference = 0;
  double value = 0;

  bool operator==(const KnobEvidence&) const = default;
};

// One axis's comparison as a result keeps it (a cliff point's, a knob's alone): the axis by its key
// and the interval Holm's rule stated, so a report read back words it as it was computed.
struct AxisEffect {
  std::string axis;  // results/axes.h kAxes key: "tps", "cpu_per_tx", ...
  Interval interval;

  bool operator==(const AxisEffect& o) const {
    const Interval &a = interval, &b = o.interval;
    return axis == o.axis && a.ratio == b.ratio && a.low == b.low && a.high == b.high &&
           a.df == b.df && a.confidence == b.confidence && a.known == b.known;
  }
};

// One knob's (or a catalog pair's) part in its stage (docs/reading-the-report.md).
struct KnobEffect {
  std::vector<std::string> knobs;   // one knob, or knobs the catalog says act together
  std::vector<std::string> values;  // the stage's value of each
  // "the cause", "contributes", "no measurable effect", "only with <knob>"
  std::string verdict;
  std::optional<EffectInterval> alone;    // reference + this knob; unset: harmless as a group
  std::optional<EffectInterval> without;  // the whole stage without it, vs the reference
  std::vector<KnobEvidence> evidence;     // moved when it alone was applied
  std::string note;                       // "either one alone is enough", ...
  // Alone against the reference on every axis both measured (results/axes.h), Holm's rule over
  // them; empty when it was not measured alone or the search had no runs (a bare Measurer).
  std::vector<AxisEffect> axes = {};

  bool operator==(const KnobEffect&) const = default;
};

// Per-knob attribution of a stage with several knobs (bisect's search, attribution.h).
struct Attribution {
  // What the search judged by; every ratio here is of its samples, where higher is better
  // (a cost's reciprocal: metric.h), so 0.1 is "10x worse" for every metric.
  Metric metric = Metric::kTps;
  std::string headline;           // "wal-hell: 15x slower; commit_delay = 10000 is the cause; ..."
  EffectInterval stage;           // the whole stage vs its reference, from the attribution's runs
  std::string reference;          // the stage the effects compare with ("baseline")
  std::vector<KnobEffect> knobs;  // causes first, then contributors, then the harmless
  // The knobs found harmless as one group (the stage without its causes), when measured.
  std::optional<EffectInterval> harmless;
  // That group against the reference on every axis (KnobEffect::axes): what the knobs blamed
  // for nothing cost where the metric did not move. Empty when not measured.
  std::vector<AxisEffect> harmless_axes = {};
  int extra_runs = 0;  // runs made for the attribution, beyond the stage's own
  int restarts = 0;
  double seconds = 0;
  double noise = 0;  // per-run relative standard deviation (log scale) the intervals use
  std::string note;  // non-additive effects, verdicts left uncertain

  bool operator==(const Attribution&) const = default;
};

// One block of a switchback run (docs/reading-the-report.md "Switchback runs"): the part of a
// block kept after its settling time, under the reference configuration or the stage's.
struct SwitchbackBlock {
  bool stage = false;
  double seconds = 0;              // kept
  std::uint64_t transactions = 0;  // committed + rolled back in the kept part
  double server_cpu_s = 0;         // every server process, in the kept part; 0: not measured
  double client_cpu_s = 0;         // pgslow's client threads
  std::optional<double> neighbour_cpu = std::nullopt;  // as Measurement::neighbour_cpu
  // The cost axes' counters per transaction over the kept part (Measurement::per_tx); empty:
  // not measured.
  std::map<std::string, double> per_tx = {};
  // The latency's tail over the kept part (µs); 0: not recorded (an older report).
  double p95_us = 0;
  double p99_us = 0;

  bool operator==(const SwitchbackBlock&) const = default;
};

// Where the backends spent their time (docs/evidence.md "Where the time went"):
// pg_stat_activity read `samples` times, every `interval_ms`; backends[wait] the backends found
// in each wait ("CPU", "IO:DataFileRead", ...) summed over the readings. results/waits.h.
struct WaitProfile {
  std::uint64_t samples = 0;
  double interval_ms = 0;
  std::map<std::string, std::uint64_t> backends;

  bool operator==(const WaitProfile&) const = default;
};

// A stage measured in one continuous run that switched between the reference configuration
// and the stage's every `block_s` seconds (reload only), instead of separate runs.
struct Switchback {
  double block_s = 0;
  double settle_s = 0;   // dropped at the start of each block
  std::string why;       // why the stage got this design (the knobs' carryover)
  double precision = 0;  // the half-width asked for (--precision); 0: a fixed number of blocks
  int looks = 1;         // times the run could stop (results/switchback.h look_confidence)
  // The confidence its intervals are stated at: the look it stopped at (0: a report from
  // before, where each look's was 1 - 0.05 / looks).
  double confidence = 0;
  // "precision": the interval reached `precision`; "budget": the time ran out first;
  // "fixed": no precision asked; "interrupted".
  std::string stopped;
  std::vector<SwitchbackBlock> blocks;  // in time order, reference first and last
  // The evidence of the reference's kept parts taken together (the stage's is the stage's).
  std::map<std::string, double> reference_evidence;
  std::optional<WaitProfile> reference_waits;  // the reference's kept parts' wait samples

  bool operator==(const Switchback&) const = default;
};

// What kind of failure a stage's `error` is (report.json `failure`, docs/report-schema.md).
enum class StageFailure {
  kNone,
  kRejected,      // the server rejected the configuration itself (it did not start, a value
                  // differed after the apply): bisect counts it as a rejected configuration
  kRunFailed,     // a run failed: the server restarted or stopped under it, clients refused, ...
  kStoppedEarly,  // a switchback stage could not measure what it planned: the run exits 1
  kInterrupted,   // Ctrl-C during its runs: what was measured stands
};
// "rejected", "run failed", "stopped early", "interrupted"; "" for kNone.
std::string_view failure_name(StageFailure failure);
std::optional<StageFailure> parse_failure(std::string_view name);

// One stage: its configuration, its measurements (one per repeat) and the server-side
// evidence of the measured window. Evidence values are per-stage deltas or ratios, keyed by
// the evidence names of docs/knobs.md ("buffer_hit_ratio", "checkpoints_requested", ...).
struct StageResult {
  std::string name;
  std::string description;
  std::vector<KnobChange> changes;  // versus the previous stage (cumulative) or baseline
  // The axes its changes are known to move, TPS first (PlanStage::own_axes): its verdict
  // tests them first and headlines only them (results/summary.h). Empty: TPS alone.
  std::vector<std::string> own_axes;
  std::vector<SkippedKnob> skipped;
  std::vector<std::string> warnings;  // pitfalls of the values used
  LoadSettings load;
  std::vector<Measurement> repeats;
  std::map<std::string, double> evidence;      // the median repeat's evidence
  std::optional<WaitProfile> waits;            // the median repeat's; absent: not sampled
  double reset_seconds = 0;                    // data reset (template clone) before the stage
  std::string log_excerpt;                     // the server log lines written during the stage
  std::string error;                           // the stage could not run: why (empty when it ran)
  StageFailure failure = StageFailure::kNone;  // what kind of failure `error` is
  // Seconds the evidence window covered (snapshot to snapshot); 0: the median repeat's
  // duration_s. Counters are normalised per second or per transaction over this window.
  double evidence_seconds = 0;
  bool sweep_point = false;  // a point of the scenario's sweep (Run::sweep)
  // A sweep point's value per swept dimension, as written ("clients" -> "10",
  // "shared_buffers" -> "32MB"): the curve's x axis.
  std::map<std::string, std::string> sweep_values;
  // The server's envelope the stage ran in ("memory 64MB, cpus 1"), when the run sweeps it
  // (server.memory/cpus); "" otherwise: the run's envelope (Run::envelope) holds for all.
  std::string envelope;
  std::optional<Attribution> attribution;  // `attribute: true`: each knob's part
  // Measured by switchback against the baseline: `repeats` then holds the stage's blocks taken
  // together, and the comparison rests on the blocks.
  std::optional<Switchback> switchback;
  // A stage of separate runs measured to a precision (--precision) or until its own axes were
  // resolved: the half-width asked for (0: resolving), the times the run could stop, the
  // confidence of the look it stopped at (0: a fixed number of runs, or an older report: at
  // 1 - 0.05 / looks) and why it stopped ("precision", "resolved" or "budget").
  double precision = 0;
  int looks = 1;
  double confidence = 0;
  std::string stopped;

  bool operator==(const StageResult&) const = default;
};

struct Machine {
  int cores = 0;
  std::uint64_t memory_bytes = 0;
  std::string kernel;
  std::string hostname;

  bool operator==(const Machine&) const = default;
};

struct Expectation {
  std::string text;  // as written: "planner at least 100x slower than baseline"
  bool passed = false;
  std::string detail;  // the measured figure

  bool operator==(const Expectation&) const = default;
};

// One re-measurement of the reference configuration (the baseline stage's), taken after stage
// `after_stage` so that drift in the machine's speed is measured, not attributed to a stage
// (ARCHITECTURE.md "Measurement: what a number may claim").
struct ReferenceRun {
  std::size_t after_stage = 0;  // index into Run::stages
  double tps = 0;
  std::uint64_t transactions = 0;  // committed + rolled back
  double duration_s = 0;
  std::vector<double> tps_per_second;
  double server_cpu_s = 0;  // as Measurement::server_cpu_s; 0: not measured
  std::optional<double> neighbour_cpu = std::nullopt;  // as Measurement::neighbour_cpu
  std::map<std::string, double> per_tx = {};           // as Measurement::per_tx
  LatencySummary latency;  // as Measurement::latency; zeros: not recorded
  std::string error;       // the re-measurement failed: why

  bool operator==(const ReferenceRun&) const = default;
};

struct Run {
  int schema_version = 3;  // 2: references; 3: StageResult::attribution
  std::string pgslow_version;
  std::string scenario;
  std::string description;
  std::string started_at;  // ISO 8601, UTC
  double wall_seconds = 0;
  std::string server_version;  // "PostgreSQL 15.18"
  int server_major = 0;
  std::string target;  // "managed cluster in .pgslow/cluster"
  // The server's envelope ("memory 512MB, cpus 1.5 (cgroup v1 pgslow-...)"); "" when the server
  // ran unlimited (docs/envelope.md). Runs with different envelopes measured different machines.
  std::string envelope;
  std::string workload;
  int scale = 0;
  std::uint64_t data_bytes = 0;
  // How each stage's data was reset before its window ("template copy (FILE_COPY)", "clone
  // (PG18 file_copy_method=clone)"); "" when it was not. Its time is each stage's reset_seconds.
  std::string reset_method;
  // The pooler the run's clients went through (docs/pooler.md): "pgbouncer (transaction,
  // default_pool_size 10)"; "" when they reached the server directly or through the driver's
  // own pool. A sweep's `pooler:` points say theirs in each stage's load.
  std::string pooler;
  double warmup_s = 0;
  double duration_s = 0;
  int repeats = 1;
  std::string mode;  // cumulative | isolated
  Machine machine;
  std::vector<StageResult> stages;  // the first is the baseline
  // The baseline's configuration measured again between stages, in order (interleaved).
  std::vector<ReferenceRun> references;
  // The swept dimensions, load or knob ("rate", then "clients" for a family of curves;
  // "shared_buffers"); empty without a sweep. The curve's points are the stages marked
  // sweep_point, at their sweep_values.
  std::vector<std::string> sweep;
  std::vector<Expectation> expectations;

  bool operator==(const Run&) const = default;
};

}  // namespace pgslow::results
