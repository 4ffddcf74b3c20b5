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
  const Noise noise = run_noise(run);
  if (noise.df <= 0) return {};  // one baseline run: within-run batch means, not run-to-run
  // The fewest degrees of freedom of a stage compared by separate runs: the baseline's noise
  // pooled with the stage's own repeats (compare_runs). A switchback stage's intervals come
  // from its own blocks.
  std::optional<double> fewest;
  for (std::size_t i = 1; i < run.stages.size(); ++i) {
    const StageResult& s = run.stages[i];
    if (s.switchback || !stage_ran(s)) continue;
    const auto own = static_cast<double>(runs_of(s).log_tps.size());
    const double df = noise.df + std::max(0.0, own - 1);
    fewest = std::min(fewest.value_or(df), df);
  }
  if (!fewest || *fewest >= kFewDegreesOfFreedom) return {};
  return "a stage's interval rests on " + degrees_of_freedom_text(*fewest) +
         ": more --repeats narrow it";
}

double stage_confidence(const StageResult& stage) {
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
  // Run-to-run variance: the baseline's (when known) pooled with the stage's own repeats and,
  // without a run noise, the reference's repeats.
  double sum = noise.df > 0 ? noise.sigma * noise.sigma * noise.df : 0;
  double df = noise.df > 0 ? noise.df : 0;
  const auto [vs, dfs] = own_variance(stage);
  sum += vs * dfs;
  df += dfs;
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
  Change out = change_of(log_ratio_interval(diff, std::sqrt(se2), df, confidence));
  out.reference_transactions = c.reference_transactions;
  return out;
}

Change change_of(const Interval& interval) {
  Change c;
  c.ratio = interval.ratio;
  c.interval = interval;
  const Verdict v = verdict_of(c.interval);
  c.measurable = v == Verdict::kSlower || v == Verdict::kFaster;
  c.text = format_verdict(c.interval);
  if (c.measurable) {
    c.text = format_change(c.ratio);
    if (c.text.find("slower") == std::string::npos && c.text.find("faster") == std::string::npos)
      c.text += v == Verdict::kSlower ? " slower" : " faster";
  }
  return c;
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

// The restated intervals back into the changes, worded again.
void apply_holm(std::vector<AxisChange>& changes, double confidence) {
  std::vector<Interval*> family;
  for (auto& c : changes) family.push_back(&c.change.interval);
  holm(family, confidence);
  for (auto& c : changes) {
    const std::uint64_t reference = c.change.reference_transactions;
    if (c.change.interval.known) c.change = change_of(c.change.interval);
    c.change.reference_transactions = reference;
  }
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

std::vector<AxisChange> compare_axes(const StageResult& stage,
                                     const std::vector<const ReferenceRun*>& around,
                                     const StageResult* baseline, bool baseline_adjacent,
                                     const Run& run, double confidence) {
  std::vector<AxisChange> out;
  for (const Axis& axis : kAxes) {
    const Runs mine = axis_runs_of(stage, axis);
    Runs reference;
    for (const ReferenceRun* ref : around) append(reference, reference_axis_runs(*ref, axis));
    // The baseline stage itself right before the first stage, or when no reference run
    // measured the axis around this stage.
    if (baseline != nullptr && (baseline_adjacent || reference.log_tps.empty()))
      append(reference, axis_runs_of(*baseline, axis));
    const bool tps = axis.kind == AxisKind::kThroughput;
    if (!tps && (mine.log_tps.empty() || reference.log_tps.empty())) continue;
    out.push_back({&axis, compare_runs(mine, reference, axis_noise(run, axis), confidence)});
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
  if (!stage_ran(mine) || !stage_ran(theirs)) return {};
  // No baseline sequence to pool: each comparison's noise is its two groups' own.
  const std::vector<AxisChange> changes = compare_axes(mine, {}, &theirs, true, Run{}, confidence);
  std::vector<AxisEffect> out;
  for (const auto& c : changes)
    if (c.change.interval.known) out.push_back({std::string(c.axis->key), c.change.interval});
  return out;
}

std::vector<AxisChange> switchback_axis_changes(const Switchback& switchback) {
  const double confidence = switchback_confidence(switchback);
  std::uint64_t reference_tx = 0;
  for (const auto& b : switchback.blocks)
    if (!b.stage) reference_tx += b.transactions;
  std::vector<AxisChange> out;
  for (const Axis& axis : kAxes) {
    const Interval i = switchback_interval(switchback.blocks, axis, confidence);
    // TPS always (its "no interval" says so), another axis only when the blocks measured it.
    if (!i.known && axis.kind != AxisKind::kThroughput) continue;
    Change c = change_of(i);
    c.reference_transactions = reference_tx;
    out.push_back({&axis, c});
  }
  apply_holm(out, confidence);
  return out;
}

std::vector<AxisChange> axis_changes(const std::vector<AxisEffect>& effects) {
  std::vector<AxisChange> out;
  for (const auto& e : effects)
    if (const Axis* axis = find_axis(e.axis)) out.push_back({axis, change_of(e.interval)});
  return out;
}

std::string axis_change_text(const AxisChange& a) {
  if (a.axis->kind == AxisKind::kThroughput)
    return a.change.measurable ? a.change.text + " " + format_interval(a.change.interval)
                               : a.change.text;
  return cost_change_text(a.change);
}

namespace {

// "+10.6% CPU/tx" (cell) or "+10.6% CPU/tx [+3.1%, +18.8%]" (sentence), factors from 2x.
std::string named_change(const AxisChange& a, bool with_interval) {
  const Change& c = a.change;
  const std::string label(a.axis->label);
  if (c.ratio >= 2 || c.ratio <= 0.5) {
    std::string text = format_number(c.ratio) + "x the " + label;
    if (with_interval)
      text +=
          fmt::format(" ({}–{}x)", format_number(c.interval.low), format_number(c.interval.high));
    return text;
  }
  std::string text = format_signed_percent(c.ratio) + " " + label;
  if (with_interval) text += " " + format_interval(c.interval);
  return text;
}

}  // namespace

AxesVerdict axes_verdict(const std::vector<AxisChange>& axes) {
  AxesVerdict v;
  const AxisChange* tps = nullptr;
  bool any_known = false;
  for (const auto& a : axes) {
    if (a.axis->kind == AxisKind::kThroughput) tps = &a;
    any_known = any_known || a.change.interval.known;
  }
  // Nothing to weigh: the TPS text as it is ("no interval", "n/a").
  if (!any_known) {
    if (tps != nullptr) v.cell = v.sentence = tps->change.text;
    return v;
  }
  auto moved = [&](bool more, bool (*which)(const Axis&)) {
    std::vector<const AxisChange*> out;
    for (const auto& a : axes)
      if (which(*a.axis) && a.change.measurable && (a.change.ratio > 1) == more) out.push_back(&a);
    std::stable_sort(out.begin(), out.end(), [](const AxisChange* x, const AxisChange* y) {
      return std::fabs(std::log(x->change.ratio)) > std::fabs(std::log(y->change.ratio));
    });
    return out;
  };
  const auto tps_rest = [&] {
    if (tps == nullptr || !tps->change.interval.known) return std::string();
    return "; TPS " + tps->change.text;
  };
  const bool tps_moved = tps != nullptr && tps->change.measurable;
  auto word = [&](const char* verb, const std::vector<const AxisChange*>& list) {
    v.axis = list.front()->axis;
    v.cell = std::string(verb) + named_change(*list.front(), false);
    v.sentence = std::string(verb);
    for (std::size_t k = 0; k < list.size() && k < 2; ++k)
      v.sentence += (k == 0 ? "" : ", ") + named_change(*list[k], true);
    v.sentence += tps_rest();
  };
  const auto latency = [](const Axis& a) { return a.kind == AxisKind::kLatency; };
  if (tps_moved && tps->change.ratio < 1) {
    v.axis = tps->axis;
    v.cell = tps->change.text;
    v.sentence = axis_change_text(*tps);
  } else if (const auto up = moved(true, is_cost); !up.empty()) {
    word("costs ", up);
  } else if (const auto tail = moved(true, latency); !tail.empty()) {
    word("tail ", tail);
  } else if (tps_moved) {
    v.axis = tps->axis;
    v.cell = tps->change.text;
    v.sentence = axis_change_text(*tps);
  } else if (const auto down = moved(false, is_cost); !down.empty()) {
    word("saves ", down);
  } else if (const auto quicker = moved(false, latency); !quicker.empty()) {
    word("tail ", quicker);
  } else {
    v.cell = "no measurable effect";
    std::string could;
    for (const auto& a : axes) {
      if (!a.change.interval.known) continue;
      could += fmt::format("{}{} ±{}", could.empty() ? "" : ", ", a.axis->label,
                           format_signed_percent(1 + a.change.interval.detectable())
                               .substr(1));  // "+4.2%" without its sign
    }
    v.sentence = "no measurable effect (could see " + could + ")";
  }
  return v;
}

std::string stopping_text(double precision, const std::string& stopped) {
  if (stopped == "precision") return fmt::format(", stopped at ±{:g}% as asked", precision * 100);
  if (stopped == "budget")
    return fmt::format(", time budget spent before ±{:g}% was reached", precision * 100);
  return "";
}

std::string describe_switchback(const Switchback& s) {
  return fmt::format("switchback, {} blocks of {:g} s", s.blocks.size(), s.block_s) +
         stopping_text(s.precision, s.stopped);
}

std::string cost_change_text(const Change& change) {
  if (!change.interval.known) return "no interval";
  if (!change.measurable) return format_verdict(change.interval);
  if (change.ratio >= 2 || change.ratio <= 0.5)
    return fmt::format("{}x as much ({}–{}x)", format_number(change.ratio),
                       format_number(change.interval.low), format_number(change.interval.high));
  return fmt::format("{} [{}, {}]", format_signed_percent(change.ratio),
                     format_signed_percent(change.interval.low),
                     format_signed_percent(change.interval.high));
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
        s.axes = switchback_axis_changes(*stage.switchback);
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
      if (!(stage.switchback && closed) && stage.precision > 0) {
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
