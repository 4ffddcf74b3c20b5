#include "results/summary.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <set>

#include "results/evidence_info.h"
#include "results/metric.h"
#include "results/stats.h"
#include "results/waits.h"

namespace pgslow::results {

namespace {

// A stage's runs on a cost or latency axis, one log value per run, in Runs' shape.
Runs value_runs_of(const StageResult& stage, const Axis& axis) {
  Runs r;
  for (const auto& m : stage.repeats) {
    const auto v = axis_value(axis, m);
    if (!v) continue;
    r.log_tps.push_back(std::log(*v));
    r.transactions += m.committed + m.rolled_back;
  }
  return r;
}

// The reference blocks of a switchback run as one measured stage (their evidence and
// transactions), for the evidence comparison.
StageResult switchback_reference(const Switchback& s) {
  StageResult r;
  r.repeats.push_back(blocks_measurement(s.blocks, false));
  r.evidence = s.reference_evidence;
  r.evidence_seconds = r.repeats.front().duration_s;
  return r;
}

std::vector<double> repeat_tps(const StageResult& stage) {
  std::vector<double> out;
  for (const auto& m : stage.repeats) out.push_back(m.tps);
  return out;
}

bool stage_ran(const StageResult& stage) {
  return stage.error.empty() && !stage.repeats.empty();
}

}  // namespace

std::string describe_figure(const HeadlineFigure& f, bool unit_words) {
  // A percentage keeps its decimals beside the next one ("3.00% of Deliveries, 1.40% of
  // districts"); a count has none ("audit 18 of 22 rules passed").
  if (f.unit.starts_with("%")) return f.name + " " + format_number(f.value) + f.unit;
  const bool whole = f.value >= 0 && f.value < 1e15 && f.value == std::floor(f.value);
  std::string out =
      f.name + " " +
      (whole ? format_count(static_cast<std::uint64_t>(f.value)) : format_number(f.value));
  // "of 22 rules passed" reads as part of the figure; other units in words go in parentheses.
  if (f.unit.starts_with("of ")) return out + " " + f.unit;
  if (unit_words && !f.unit.empty()) out += " (" + f.unit + ")";
  return out;
}

std::string describe_headline(const Measurement& m) {
  std::string out;
  for (const auto& f : m.headline) out += (out.empty() ? "" : ", ") + describe_figure(f, false);
  return out;
}

bool fixed_rate(const StageResult& stage) {
  return stage.load.rate > 0;
}

const Measurement* median_repeat(const StageResult& stage) {
  if (stage.repeats.empty()) return nullptr;
  std::vector<const Measurement*> sorted;
  for (const auto& m : stage.repeats) sorted.push_back(&m);
  std::stable_sort(sorted.begin(), sorted.end(),
                   [](const Measurement* a, const Measurement* b) { return a->tps < b->tps; });
  return sorted[(sorted.size() - 1) / 2];
}

double window_seconds(const StageResult& stage) {
  if (stage.evidence_seconds > 0) return stage.evidence_seconds;
  const Measurement* m = median_repeat(stage);
  return m != nullptr ? m->duration_s : 0;
}

Runs runs_of(const StageResult& stage) {
  Runs r;
  for (const auto& m : stage.repeats) {
    if (m.tps <= 0) continue;
    r.log_tps.push_back(std::log(m.tps));
    r.within = std::max(r.within, relative_mean_variance(m.tps_per_second));
    r.transactions += m.committed + m.rolled_back;
  }
  return r;
}

namespace {

// The baseline configuration's runs in time order: stage 0's repeats, then the references.
std::vector<Runs> baseline_sequence(const Run& run) {
  std::vector<Runs> out;
  if (run.stages.empty() || !stage_ran(run.stages.front())) return out;
  for (const auto& m : run.stages.front().repeats) {
    if (m.tps <= 0) continue;
    Runs r;
    r.log_tps = {std::log(m.tps)};
    r.within = relative_mean_variance(m.tps_per_second);
    r.transactions = m.committed + m.rolled_back;
    out.push_back(std::move(r));
  }
  return out;
}

Runs reference_runs(const ReferenceRun& ref) {
  Runs r;
  if (!ref.error.empty() || ref.tps <= 0) return r;
  r.log_tps = {std::log(ref.tps)};
  r.within = relative_mean_variance(ref.tps_per_second);
  r.transactions = ref.transactions;
  return r;
}

void append(Runs& into, const Runs& more) {
  into.log_tps.insert(into.log_tps.end(), more.log_tps.begin(), more.log_tps.end());
  into.within = std::max(into.within, more.within);
  into.transactions += more.transactions;
}

// Sample variance of the logs and its degrees of freedom.
std::pair<double, double> own_variance(const Runs& r) {
  if (r.log_tps.size() < 2) return {0, 0};
  const double sd = stddev(r.log_tps);
  return {sd * sd, static_cast<double>(r.log_tps.size() - 1)};
}

// Batches of a per-second series: its degrees of freedom for the within-run fallback.
constexpr double kWithinRunDf = 4;

}  // namespace

namespace {

// The run-to-run spread of the baseline configuration's runs (log scale, in time order).
void spread_of(const std::vector<double>& logs, Noise& n) {
  n.runs = logs.size();
  if (logs.size() >= 3) {
    // Successive differences: slow drift between the runs barely inflates it.
    n.sigma = std::sqrt(successive_difference_variance(logs));
    n.df = static_cast<double>(logs.size() - 1);
  } else if (logs.size() == 2) {
    n.sigma = stddev(logs);
    n.df = 1;
  }
}

// A stage that changes pgslow's PgBouncer names what PgBouncer did first (the clients' wait,
// the server connections it held), before what the server did (docs/pooler.md).
std::vector<EvidenceMove> pooler_first(const StageResult& stage, std::vector<EvidenceMove> moves) {
  if (std::any_of(stage.changes.begin(), stage.changes.end(),
                  [](const KnobChange& c) { return c.apply_by == kApplyByPooler; }))
    std::stable_partition(moves.begin(), moves.end(),
                          [](const EvidenceMove& m) { return m.key.starts_with("pooler_"); });
  return moves;
}

}  // namespace

Noise run_noise(const Run& run) {
  Noise n;
  std::vector<double> logs;
  for (const auto& r : baseline_sequence(run)) {
    logs.insert(logs.end(), r.log_tps.begin(), r.log_tps.end());
    n.transactions += r.transactions;
  }
  for (const auto& ref : run.references) {
    const Runs r = reference_runs(ref);
    logs.insert(logs.end(), r.log_tps.begin(), r.log_tps.end());
    n.transactions += r.transactions;
  }
  spread_of(logs, n);
  if (!run.references.empty() && logs.size() >= 2)
    n.drift = std::exp(logs.back() - logs.front()) - 1;
  return n;
}

std::string describe_noise(const Noise& noise) {
  if (noise.df <= 0)
    return fmt::format("one baseline run ({} tx): intervals from within-run batch means",
                       format_count(noise.transactions));
  std::string text =
      fmt::format("±{:.1f}% per run (sd of {} baseline runs, {} tx)",
                  (std::exp(noise.sigma) - 1) * 100, noise.runs, format_count(noise.transactions));
  if (noise.drift) text += fmt::format("; drift {:+.1f}% first to last", *noise.drift * 100);
  return text;
}

std::string few_runs_note(const Run& run) {
  // The degrees of freedom of a stage compared by separate runs: the baseline's runs pooled
  // with every stage's repeats (pooled_noise). A switchback stage's come from its own blocks.
  const Noise noise = pooled_noise(run, kTpsAxis);
  if (noise.df <= 0) return {};  // one baseline run: within-run batch means, not run-to-run
  const bool separate =
      std::any_of(run.stages.begin() + (run.stages.empty() ? 0 : 1), run.stages.end(),
                  [](const StageResult& s) { return !s.switchback && stage_ran(s); });
  if (!separate || noise.df >= kFewDegreesOfFreedom) return {};
  return "a stage's interval rests on " + degrees_of_freedom_text(noise.df) +
         ": more --repeats narrow it";
}

double stage_confidence(const StageResult& stage) {
  if (stage.confidence > 0) return stage.confidence;
  return stage.precision > 0 ? confidence_over_looks(stage.looks) : 0.95;
}

Change compare_runs(const Runs& stage, const Runs& reference, const Noise& noise,
                    double confidence) {
  Change c;
  c.reference_transactions = reference.transactions;
  if (stage.log_tps.empty() || reference.log_tps.empty()) {
    c.ratio = reference.log_tps.empty() ? 1 : 0;
    c.text = c.ratio == 0 ? format_change(0) : "n/a";
    return c;
  }
  const double diff = mean(stage.log_tps) - mean(reference.log_tps);
  c.ratio = std::exp(diff);
  // Run-to-run variance: the baseline's (when known) pooled with the stage's own repeats
  // (unless the noise has every stage's already) and, without a run noise, the reference's.
  double sum = noise.df > 0 ? noise.sigma * noise.sigma * noise.df : 0;
  double df = noise.df > 0 ? noise.df : 0;
  if (!noise.includes_stages) {
    const auto [vs, dfs] = own_variance(stage);
    sum += vs * dfs;
    df += dfs;
  }
  if (noise.df <= 0) {
    const auto [vr, dfr] = own_variance(reference);
    sum += vr * dfr;
    df += dfr;
  }
  double sigma2 = df > 0 ? sum / df : 0;
  if (df <= 0) {
    // One run of each: only the noise within the runs is known (batch means).
    sigma2 = 0;
    df = kWithinRunDf;
  }
  // A run's own within-run noise is a floor under its run-to-run noise (a stage with bursts).
  const double se2 =
      std::max(sigma2, stage.within) / static_cast<double>(stage.log_tps.size()) +
      std::max(sigma2, reference.within) / static_cast<double>(reference.log_tps.size());
  c.stage_samples = static_cast<double>(stage.log_tps.size());
  c.reference_samples = static_cast<double>(reference.log_tps.size());
  c.stage_value = std::exp(mean(stage.log_tps));
  c.reference_value = std::exp(mean(reference.log_tps));
  return change_of(log_ratio_interval(diff, std::sqrt(se2), df, confidence), c);
}

namespace {

// One axis of one baseline run (a reference run) as Runs: TPS with its within-run noise.
Runs reference_axis_runs(const ReferenceRun& ref, const Axis& axis) {
  if (axis.kind == AxisKind::kThroughput) return reference_runs(ref);
  Runs r;
  if (const auto v = axis_value(axis, ref)) {
    r.log_tps = {std::log(*v)};
    r.transactions = ref.transactions;
  }
  return r;
}

Runs axis_runs_of(const StageResult& stage, const Axis& axis) {
  return axis.kind == AxisKind::kThroughput ? runs_of(stage) : value_runs_of(stage, axis);
}

// The weighted Holm rule over a stage's axes, its own first; the restated intervals back into
// the changes, worded again.
void apply_holm(std::vector<AxisChange>& changes, double confidence) {
  std::vector<Interval*> own, others;
  for (auto& c : changes) (c.own ? own : others).push_back(&c.change.interval);
  weighted_holm(own, others, confidence);
  for (auto& c : changes)
    if (c.change.interval.known) c.change = change_of(c.change.interval, c.change);
}

// "TPS: 9 more pairs would narrow it to ±25%": the own axes that only a longer run could
// resolve (past ±100%), with what more pairs would give where the design has pairs.
std::string narrowing_note(const std::vector<AxisChange>& axes) {
  std::string out;
  for (const auto& a : axes) {
    if (!a.own || a.change.measurable || !a.change.interval.known ||
        a.change.interval.detectable() <= 1)
      continue;
    const std::string more = more_pairs_text(a.change);
    out += (out.empty() ? "" : "; ") + std::string(a.axis->label) + ": " +
           (more.empty() ? "too few runs to tell" : more);
  }
  return out;
}

}  // namespace

Noise axis_noise(const Run& run, const Axis& axis) {
  if (axis.kind == AxisKind::kThroughput) return run_noise(run);
  Noise n;
  std::vector<double> logs;
  if (!run.stages.empty() && stage_ran(run.stages.front())) {
    const Runs r = value_runs_of(run.stages.front(), axis);
    logs = r.log_tps;
    n.transactions = r.transactions;
  }
  for (const auto& ref : run.references) {
    const Runs r = reference_axis_runs(ref, axis);
    logs.insert(logs.end(), r.log_tps.begin(), r.log_tps.end());
    n.transactions += r.transactions;
  }
  spread_of(logs, n);
  return n;
}

Noise pooled_noise(const Run& run, const Axis& axis) {
  Noise n = axis_noise(run, axis);
  double sum = n.sigma * n.sigma * n.df;
  double df = n.df;
  for (std::size_t i = 1; i < run.stages.size(); ++i) {
    const StageResult& s = run.stages[i];
    if (!stage_ran(s) || s.switchback || (fixed_rate(s) && axis.kind == AxisKind::kThroughput))
      continue;
    const auto [v, dfs] = own_variance(axis_runs_of(s, axis));
    sum += v * dfs;
    df += dfs;
  }
  if (df > n.df) {
    n.sigma = std::sqrt(sum / df);
    n.df = df;
    n.includes_stages = true;
  }
  return n;
}

std::vector<AxisChange> compare_axes(const StageResult& stage,
                                     const std::vector<const ReferenceRun*>& around,
                                     const StageResult* baseline, bool baseline_adjacent,
                                     const Run& run, double confidence) {
  std::vector<AxisChange> out;
  for (const Axis& axis : kAxes) {
    Runs mine = axis_runs_of(stage, axis);
    Runs reference;
    std::size_t reference_runs = around.size();
    for (const ReferenceRun* ref : around) append(reference, reference_axis_runs(*ref, axis));
    // The baseline stage itself right before the first stage, or when no reference run
    // measured the axis around this stage.
    if (baseline != nullptr && (baseline_adjacent || reference.log_tps.empty())) {
      append(reference, axis_runs_of(*baseline, axis));
      reference_runs += baseline->repeats.size();
    }
    // A side that did not measure an axis that is none when absent (the pooler's wait of
    // clients that connect directly) had none of it: the floor, once per run.
    if (axis.absent_is_none && mine.log_tps.empty() != reference.log_tps.empty()) {
      Runs& none = mine.log_tps.empty() ? mine : reference;
      const std::size_t runs = mine.log_tps.empty() ? stage.repeats.size() : reference_runs;
      none.log_tps.assign(runs, std::log(kCounterFloor));
    }
    const bool tps = axis.kind == AxisKind::kThroughput;
    if (!tps && (mine.log_tps.empty() || reference.log_tps.empty())) continue;
    out.push_back({&axis, compare_runs(mine, reference, pooled_noise(run, axis), confidence),
                   is_own_axis(axis, stage.own_axes)});
  }
  apply_holm(out, confidence);
  return out;
}

std::vector<AxisEffect> compare_configuration_axes(const std::vector<Measurement>& runs,
                                                   const std::vector<Measurement>& reference,
                                                   double confidence) {
  StageResult mine, theirs;
  mine.repeats = runs;
  theirs.repeats = reference;
  // A configuration the search measured: no axis comes first, so Holm's rule over them all.
  mine.own_axes.assign(knobs::kAxisKeys.begin(), knobs::kAxisKeys.end());
  if (!stage_ran(mine) || !stage_ran(theirs)) return {};
  // No baseline sequence to pool: each comparison's noise is its two groups' own.
  const std::vector<AxisChange> changes = compare_axes(mine, {}, &theirs, true, Run{}, confidence);
  std::vector<AxisEffect> out;
  for (const auto& c : changes)
    if (c.change.interval.known) out.push_back({std::string(c.axis->key), c.change.interval});
  return out;
}

bool is_own_axis(const Axis& axis, const std::vector<std::string>& own_axes) {
  return axis.kind == AxisKind::kThroughput ||
         std::find(own_axes.begin(), own_axes.end(), axis.key) != own_axes.end();
}

std::vector<AxisChange> switchback_axis_changes(const Switchback& switchback,
                                                const std::vector<std::string>& own_axes) {
  const double confidence = switchback_confidence(switchback);
  std::uint64_t reference_tx = 0;
  for (const auto& b : switchback.blocks)
    if (!b.stage) reference_tx += b.transactions;
  std::vector<AxisChange> out;
  for (const Axis& axis : kAxes) {
    const Interval i = switchback_interval(switchback.blocks, axis, confidence);
    // TPS always (its "no interval" says so), another axis only when the blocks measured it.
    if (!i.known && axis.kind != AxisKind::kThroughput) continue;
    Change counts;
    counts.reference_transactions = reference_tx;
    for (bool stage : {true, false}) {
      std::vector<double> logs;
      for (const auto& b : switchback.blocks)
        if (const auto v = axis_value(axis, b); v && b.stage == stage) logs.push_back(std::log(*v));
      (stage ? counts.stage_samples : counts.reference_samples) = static_cast<double>(logs.size());
      (stage ? counts.stage_value : counts.reference_value) =
          logs.empty() ? 0 : std::exp(mean(logs));
    }
    out.push_back({&axis, change_of(i, counts), is_own_axis(axis, own_axes)});
  }
  apply_holm(out, confidence);
  return out;
}

std::vector<AxisChange> axis_changes(const std::vector<AxisEffect>& effects) {
  std::vector<AxisChange> out;
  for (const auto& e : effects)
    if (const Axis* axis = find_axis(e.axis)) out.push_back({axis, change_of(e.interval), true});
  return out;
}

Change compare_stages(const StageResult& stage, const StageResult& reference) {
  return compare_runs(runs_of(stage), runs_of(reference));
}

std::vector<StageSummary> summarize(const Run& run) {
  std::vector<StageSummary> out;
  const StageResult* baseline =
      !run.stages.empty() && stage_ran(run.stages.front()) ? &run.stages.front() : nullptr;
  const bool isolated = run.mode == "isolated";
  const Noise noise = run_noise(run);
  const StageResult* previous = nullptr;
  for (std::size_t i = 0; i < run.stages.size(); ++i) {
    const StageResult& stage = run.stages[i];
    StageSummary s;
    s.index = i;
    s.ran = stage_ran(stage);
    s.repeats = stage.repeats.size();
    if (s.ran) {
      const auto tps = repeat_tps(stage);
      s.tps = median(tps);
      s.tps_min = min_of(tps);
      s.tps_max = max_of(tps);
      const Measurement* m = median_repeat(stage);
      s.transactions = m->committed + m->rolled_back;
      s.few_transactions = s.transactions < kFewTransactions;
      s.p99_us = m->latency.p99_us;
      s.window_seconds = window_seconds(stage);
      s.tps_text = format_number(s.tps);
      if (s.repeats > 1) {
        s.tps_text += fmt::format(" ({}-{})", format_number(s.tps_min), format_number(s.tps_max));
      }
      // A switchback stage is compared with its own reference blocks, not with the baseline
      // stage's runs: their TPS stands beside its own.
      if (stage.switchback) {
        const Measurement reference = blocks_measurement(stage.switchback->blocks, false);
        s.reference_tps = reference.tps;
        if (reference.tps > 0) s.tps_text += " (reference " + format_number(reference.tps) + ")";
      }
      s.transactions_text = format_count(s.transactions) + " tx";
      if (s.few_transactions) {
        s.note =
            s.transactions == 1 ? "1 transaction" : fmt::format("{} transactions", s.transactions);
      }
      s.headline_text = describe_headline(*m);
      s.retries_text = describe_retries(*m);
      for (const auto& f : m->headline)
        if (!f.warning.empty()) s.headline_warnings.push_back(f.name + ": " + f.warning);
      const Runs mine = runs_of(stage);
      // A fixed-rate stage's throughput is the rate it was given: it is judged on latency,
      // lag and the rate kept (load_columns.h), never "x slower" than a closed loop.
      const bool closed = !fixed_rate(stage);
      if (previous != nullptr && !isolated && closed && !fixed_rate(*previous))
        s.vs_previous = compare_runs(mine, runs_of(*previous), noise);
      if (stage.switchback && closed) {
        // Measured against the baseline blocks around each of its own, in one run.
        s.axes = switchback_axis_changes(*stage.switchback, stage.own_axes);
        s.design = describe_switchback(*stage.switchback);
      } else if (baseline != nullptr && i > 0 && closed) {
        // The baseline measured right before and right after this stage.
        std::vector<const ReferenceRun*> around;
        for (const auto& ref : run.references)
          if (ref.after_stage + 1 == i || ref.after_stage == i) around.push_back(&ref);
        s.axes = compare_axes(stage, around, baseline, i == 1, run, stage_confidence(stage));
      }
      for (const auto& a : s.axes) {
        if (a.axis == &kTpsAxis) s.vs_baseline = a.change;
        if (a.axis == &kCpuAxis && (!stage.switchback || a.change.interval.known))
          s.cpu_vs_baseline = a.change;
      }
      if (!s.axes.empty()) s.verdict = axes_verdict(s.axes);
      s.narrowing_note = narrowing_note(s.axes);
      if (!(stage.switchback && closed) &&
          (stage.precision > 0 || (!stage.stopped.empty() && stage.looks > 1))) {
        s.design = fmt::format("{} runs alternating with the baseline", stage.repeats.size()) +
                   stopping_text(stage.precision, stage.stopped);
      }
      // The evidence is compared with what the stage's knobs changed: the previous stage in
      // a cumulative run (else every later stage repeats the first stage's story), the
      // baseline in an isolated one.
      const StageResult* reference = isolated ? baseline : previous;
      if (stage.switchback) {
        const StageResult blocks_of_reference = switchback_reference(*stage.switchback);
        s.movers = top_movers(evidence_moves(stage, blocks_of_reference), 2);
      } else if (reference != nullptr && i > 0) {
        s.movers = top_movers(pooler_first(stage, evidence_moves(stage, *reference)), 2);
      }
      s.waits_text = waits_text(stage, baseline_waits(stage, baseline),
                                baseline != nullptr ? baseline->envelope : std::string());
      previous = &stage;
    }
    out.push_back(std::move(s));
  }
  return out;
}

}  // namespace pgslow::results
