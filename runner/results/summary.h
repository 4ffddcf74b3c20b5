#pragma once
// What the report says about each stage, decided once for every format: the TPS figure, the
// change versus the baseline measured around it (and the previous stage in cumulative runs)
// with its interval and verdict (slower, faster, within noise), the transaction count behind
// every figure, and the evidence that moved most.

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "results/axes.h"
#include "results/model.h"
#include "results/stats.h"
#include "results/switchback.h"

namespace pgslow::results {

// A TPS figure resting on fewer transactions than this says how many it rests on.
inline constexpr std::uint64_t kFewTransactions = 100;
// Evidence whose larger raw count is below this is not a "mover" (one checkpoint is not news).
inline constexpr double kMinEvidenceCount = 3;
// The same for byte counters: under 1 MiB in both stages is not a mover.
inline constexpr double kMinEvidenceBytes = 1024.0 * 1024;

// One evidence figure compared with the baseline, normalised (per transaction, per minute).
struct EvidenceMove {
  std::string key;
  std::string label;    // "read syscalls/tx"
  double baseline = 0;  // normalised; the reference stage's value (baseline or previous)
  double stage = 0;     // normalised
  double score = 0;     // |log ratio|: how far it moved
  std::string text;     // "hit ratio 99.9% → 70.5%"
};

// The run-to-run noise of a run, from the reference configuration measured again and again
// (the baseline stage's repeats, then every interleaved reference run, in time order).
struct Noise {
  std::size_t runs = 0;  // baseline measurements it rests on
  double sigma = 0;      // relative standard deviation of one run (log scale)
  double df = 0;         // degrees of freedom of sigma (0: unknown)
  // The last baseline measurement against the first (0.03: the machine got 3% faster); only
  // with interleaved reference runs.
  std::optional<double> drift;
  std::uint64_t transactions = 0;  // behind the baseline measurements together
  // sigma and df pool every stage's own repeats too (compare_runs adds none of its own).
  bool includes_stages = false;
};
Noise run_noise(const Run& run);
// "±2.1% per run (sd of 5 baseline runs)"; "unknown (one baseline run)".
std::string describe_noise(const Noise& noise);
// When a stage compared by separate runs rests on fewer than three degrees of freedom (the
// baseline's noise pooled with its own repeats): "a stage's interval rests on 2 degrees of
// freedom: more --repeats narrow it"; else empty.
std::string few_runs_note(const Run& run);

// One configuration's runs, as the interval needs them.
struct Runs {
  std::vector<double> log_tps;  // one per run
  // The variance of one run's mean TPS, relative, from batch means of its per-second series
  // (the within-run noise, autocorrelation included); the largest over the runs.
  double within = 0;
  std::uint64_t transactions = 0;
};
Runs runs_of(const StageResult& stage);

// The change of a stage against a reference, with its interval (results/stats.h).
struct Change {
  double ratio = 0;  // tps / reference tps (geometric means of the runs)
  Interval interval;
  bool measurable = false;  // the verdict is slower or faster
  std::string text;         // "-85.1% (6.7x slower)", or "within noise (±4.2%)"
  std::uint64_t reference_transactions = 0;
  // What the interval rests on: the stage's and the reference's runs (or switchback blocks),
  // for what more of them would narrow it to (stats.h narrowing).
  double stage_samples = 0;
  double reference_samples = 0;
  // The two values compared (geometric means, in the axis's unit); 0 when not kept.
  double stage_value = 0;
  double reference_value = 0;
};

// `stage` against `reference`. The run-to-run noise comes from `noise` when it is known
// (pooled with the repeats' own spread), else from the repeats of the two, else from batch
// means of each run's per-second series (within-run only, said in the report's header).
// `confidence`: of the interval (a stage measured to a precision states each look's).
Change compare_runs(const Runs& stage, const Runs& reference, const Noise& noise = {},
                    double confidence = 0.95);
// The confidence a stage's intervals are stated at: 95%, spread over its looks when it was
// measured to a precision (results/switchback.h look_confidence).
double stage_confidence(const StageResult& stage);
// A Change from an interval (its verdict and text), as compare_runs words it; `counts` gives
// what it rests on and the values compared (its other fields are replaced).
Change change_of(const Interval& interval, const Change& counts = {});
// "could see ±4.2%"; past ±100%, no figure but what more pairs would narrow it to: "too few
// runs to tell, past ±100%; 9 more pairs would narrow it to ±25%".
std::string could_see_text(const Change& change);
// Past ±100%: "6 more pairs would narrow it to ±24%" (results/stats.h narrowing); "" within
// ±100% or when the design has no pairs to add.
std::string more_pairs_text(const Change& change);
// One axis of a stage against the baseline around it (results/axes.h), from the stage's own
// design, its interval restated by Holm's rule over the stage's axes.
struct AxisChange {
  const Axis* axis = nullptr;
  Change change;  // ratio stage / reference of the axis's value (above 1: more of it)
  // TPS or an axis the stage's knobs are known to move (StageResult::own_axes): tested first,
  // with most of the 5% (stats.h weighted_holm), and the only axes a verdict headlines.
  bool own = false;
};
// A counter's change of 20x or more as its two values, "0 → 1.39 kB" (from none, the ratio is
// the floor's, not the stage's); "" for any other change.
// With its interval: the stage's value as the ratio's interval puts it, "0 → 13.5 [9.8–18.6]".
std::string axis_values_text(const AxisChange& change, bool with_interval = false);
// A stage's axes: `mine` against `reference` for each, the run-to-run noise of each from
// `noise` (an axis's own, noise_of), the weighted Holm rule over those with an interval at
// `confidence`, TPS and the stage's `own_axes` first (stats.h weighted_holm).
// The TPS axis is always there when both ran; another only when both measured it.
// `baseline` (the baseline stage) counts among the reference's runs when `baseline_adjacent`
// (it ran right before the stage) or when no run of `around` measured the axis.
std::vector<AxisChange> compare_axes(const StageResult& stage,
                                     const std::vector<const ReferenceRun*>& around,
                                     const StageResult* baseline, bool baseline_adjacent,
                                     const Run& run, double confidence);
// A configuration's runs against the reference's when no baseline run was measured around them
// (a knob alone in an attribution): each axis from the two groups' own repeats, Holm's rule
// over them at `confidence`, and kept as a result keeps them (axis_changes reads them back).
std::vector<AxisEffect> compare_configuration_axes(const std::vector<Measurement>& runs,
                                                   const std::vector<Measurement>& reference,
                                                   double confidence = 0.95);
// A switchback stage's axes against the baseline blocks around each of its own, TPS and
// `own_axes` first.
std::vector<AxisChange> switchback_axis_changes(const Switchback& switchback,
                                                const std::vector<std::string>& own_axes = {});
// Whether `axis` is TPS or one of `own_axes`.
bool is_own_axis(const Axis& axis, const std::vector<std::string>& own_axes);
// Axes a result kept (a cliff point's), as changes: their intervals as Holm's rule stated them,
// every one its own (the search's metric chose them all alike).
std::vector<AxisChange> axis_changes(const std::vector<AxisEffect>& effects);
// The run-to-run noise of one axis, from the baseline configuration's runs in time order
// (successive differences, so slow drift barely counts), pooled with the spread of every
// stage's own repeats (each stage measured again is a sample of the same noise): its degrees
// of freedom are every run's but one per configuration.
Noise axis_noise(const Run& run, const Axis& axis);
// axis_noise pooled with every stage's own repeats (a fixed-rate stage's TPS is its rate, not
// a sample of the noise), as every stage of separate runs compares with: includes_stages.
Noise pooled_noise(const Run& run, const Axis& axis);
// An axis's change for a reader: TPS as its verdict ("-3.0% slower", "within noise (could see
// ±4.2%)"), any other as cost_change_text; each with the interval when it moved.
std::string axis_change_text(const AxisChange& change);
// The verdict over a stage's axes, naming the axis: the cell of the table ("-85.2% (6.7x
// slower)", "costs +10.6% CPU/tx", "no measurable effect") and the sentence ("costs +10.6%
// CPU/tx [+3.1%, +18.8%]; TPS within noise (could see ±19%)"; "no measurable effect (could
// see TPS ±19%, CPU/tx ±4.0%)"). TPS headlines whenever it is resolved (slower or faster),
// with the stage's own axes that moved beside it; else the own axis that moved most; an axis
// nobody expected is only ever an "also". A ratio below 1 reads "95% fewer", never "0.05x".
struct AxesVerdict {
  std::string cell;
  std::string sentence;
  const Axis* axis = nullptr;  // the axis the cell names (TPS: slower, faster); nullptr: none
};
AxesVerdict axes_verdict(const std::vector<AxisChange>& axes);
// ", stopped at ±5% as asked", ", time budget spent before ±5% was reached" for a stage
// measured to a precision; "" otherwise.
std::string stopping_text(double precision, const std::string& stopped);
// "switchback, 25 blocks of 4 s", with stopping_text: how a switchback stage was measured.
std::string describe_switchback(const Switchback& switchback);
// "+12.0% [+9.1%, +15.2%]" for a cost (CPU per transaction) that moved measurably, else
// "within noise (could see ±3.1%)", "no interval".
std::string cost_change_text(const Change& change);

// Compares `stage` with `reference` (both ran), their repeats alone giving the noise.
Change compare_stages(const StageResult& stage, const StageResult& reference);

struct StageSummary {
  std::size_t index = 0;  // into Run::stages
  bool ran = false;       // false: the stage failed (error) or has no measurement
  double tps = 0;         // median over repeats (a switchback stage has one: blocks_measurement)
  double tps_min = 0;
  double tps_max = 0;
  double reference_tps = 0;  // a switchback stage: its reference blocks' TPS; else 0
  std::size_t repeats = 0;
  std::uint64_t transactions = 0;  // behind the median figure (committed + rolled back)
  bool few_transactions = false;
  double p99_us = 0;          // of the median repeat
  double window_seconds = 0;  // the evidence window
  // The last earlier stage that ran: cumulative runs only, where it is the last step. In an
  // isolated run the stage above is unrelated, so there is none.
  std::optional<Change> vs_previous;
  // Stage 0's configuration measured right before and after this stage (interleaved), or
  // stage 0 itself in a report without reference runs.
  std::optional<Change> vs_baseline;
  // The server's CPU per transaction against the baseline's (a local server): ratio > 1 costs
  // more. Text: "+12.0% [+9.1%, +15.2%]", or "within noise (could see ±3.1%)".
  std::optional<Change> cpu_vs_baseline;
  // Every axis against the baseline, TPS and CPU/tx (the two above) included, in the axes'
  // order, with Holm's rule over them; empty without a baseline comparison.
  std::vector<AxisChange> axes;
  AxesVerdict verdict;  // over `axes`; empty without them
  // How the stage was measured when it is not the default: "switchback, 21 blocks of 4 s",
  // "6 runs alternating with the baseline, stopped at ±5% as asked"; empty otherwise.
  std::string design;
  // Up to two, largest first, versus the previous stage that ran (cumulative runs) or the
  // baseline (mode "isolated").
  std::vector<EvidenceMove> movers;
  // Where the backends spent their time, against the baseline (results/waits.h); empty when
  // the stage was not sampled.
  std::string waits_text;
  std::string tps_text;           // "1,052" or "1,052 (1,010-1,090)" with repeats
  std::string transactions_text;  // "31,560 tx": behind the median figure
  std::string note;               // "12 transactions" when few, else empty
  // The workload's own figures of the median repeat ("tpmC 12,345, NOPM 12,222, Delivery skips
  // 0.05 % of districts"), empty for workloads without; and their warnings.
  std::string headline_text;
  std::vector<std::string> headline_warnings;
  std::string retries_text;  // describe_retries of the median repeat
  // TPS or an own axis that could see only more than ±100%: what more pairs would narrow it
  // to ("TPS could see ±820%; 9 more pairs would narrow it to ±25%"); empty otherwise.
  std::string narrowing_note;
};

// "tpmC 12,345, NOPM 12,222": a measurement's headline figures on one line, by name.
std::string describe_headline(const Measurement& m);
// "new_order 120 in 3.20 s, payment 2,380 in 1 min 16 s": each type's retries and the time
// they took (inside its latency); empty when nothing was retried.
std::string describe_retries(const Measurement& m);
// One of them: "tpmC 31,512", "Delivery skips 3.00% of Deliveries, 1.40% of districts",
// "audit 18 of 22 rules passed", and
// with `unit_words` its unit in words too: "NOPM 14,382 (committed New-Orders per minute)".
std::string describe_figure(const HeadlineFigure& f, bool unit_words);

// Whether the stage ran at a fixed rate (its TPS is not compared with closed-loop stages).
bool fixed_rate(const StageResult& stage);

// The median repeat: the one whose TPS is the median (the lower middle for an even count).
const Measurement* median_repeat(const StageResult& stage);

// Compares `stage` with `reference` (both ran).
Change compare_stages(const StageResult& stage, const StageResult& reference);

// Evidence of `stage` compared with `baseline`, every key both have, largest move first.
std::vector<EvidenceMove> evidence_moves(const StageResult& stage, const StageResult& baseline);

// The normalised value of one evidence key in one stage, and how it is written
// ("70.5%", "640/tx", "41/min"); nullopt when the stage lacks the key or a divisor.
std::optional<double> normalised_evidence(const StageResult& stage, const std::string& key);
std::string format_evidence_value(const std::string& key, double normalised);
// "read syscalls/tx", "checkpoints requested/min", "hit ratio".
std::string evidence_label(const std::string& key);
// The seconds a stage's evidence covers: its evidence window, else its median run's duration.
double window_seconds(const StageResult& stage);

// The `n` figures a stage's row shows: families ranked by their largest move, one key each.
std::vector<EvidenceMove> top_movers(const std::vector<EvidenceMove>& moves, std::size_t n);

std::vector<StageSummary> summarize(const Run& run);
// A change's 95% interval as a table cell ("[-18.0%, -6.1%]"), "—" without one.
std::string interval_text(const std::optional<Change>& change);

// The header line facts, one place for every format: "tpcc, scale 4 (412 MB)", "2 cores, 23 GB".
std::string describe_workload(const Run& run);
std::string describe_machine(const Machine& machine);
std::string describe_measure(const Run& run);  // "60 s measured after 10 s warm-up, 3 repeats"
std::string describe_clients(const Run& run);  // "8 clients" or "8-100 clients"
// "shared_buffers 128MB → 2MB", with " (restart)" when it needs one.
std::string describe_change(const KnobChange& change);
// The header of every format as (label, value) lines: server, workload, measure, noise,
// machine, run.
// "clone (PG18 file_copy_method=clone), 14.2 ms per reset, before each measured window": how
// the stages' data was reset and what one reset took (its time is not in any window).
std::string describe_reset(const Run& run);
std::vector<std::pair<std::string, std::string>> run_facts(const Run& run);
// "summarize_wal = on: needs PostgreSQL 17".
std::string describe_skipped(const SkippedKnob& knob);

}  // namespace pgslow::results
