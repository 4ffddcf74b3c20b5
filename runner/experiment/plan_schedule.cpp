// The policy of a run (experiment/run.h measure_plan): which trials a plan's stages take, in which
// order, on any Lab. Unit-tested on the simulated lab
// (tests/unit/experiment/plan_schedule_test.cpp).

#include <fmt/format.h>

#include <algorithm>
#include <ctime>

#include "apply/interrupt.h"
#include "common/clock.h"
#include "common/version.h"
#include "experiment/run.h"
#include "results/summary.h"
#include "results/switchback.h"

namespace pgslow::experiment {
namespace {

using scenario::attribution_level_repeats;
using scenario::kMinBaselineRuns;
using scenario::Plan;
using scenario::PlannedStage;

std::string utc_now() {
  std::time_t t = std::time(nullptr);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&t));
  return buf;
}

// One run of a plan: the stages in order, each followed by its reference runs.
class PlanSchedule {
 public:
  PlanSchedule(const Plan& plan, Lab& lab, const knobs::Catalog& catalog, const PlanPolicy& policy,
               Progress& progress, results::Run& run)
      : plan_(plan), lab_(lab), catalog_(catalog), policy_(policy), progress_(progress), run_(run) {
    for (std::size_t i = 1; i < plan.stages.size(); ++i)
      if (!plan.stages[i].switchback) last_separate_ = i;
  }

  void measure_stage(std::size_t i);

 private:
  // The stage's load, a relative rate made absolute from the baseline measured at the start.
  results::LoadSettings load_of(const PlannedStage& st) const;
  Trial trial(const PlannedStage& st, const results::LoadSettings& load, int repeats) const {
    Trial t = trial_of(st, policy_.timing, policy_.sweep_envelope);
    t.load = load;
    t.timing.repeats = repeats;
    return t;
  }
  // The stage's first measurement: switchback blocks, one run (alternating), or its repeats.
  results::StageResult first_measurement(const PlannedStage& st, const results::LoadSettings& load,
                                         bool alternate);
  // Attribution of stage `i`. When its runs of the baseline count as this stage's reference
  // runs, returns whether an interleaved reference must still follow (the attribution did not
  // end with the baseline); nullopt: the schedule's own rule stands.
  std::optional<bool> attribute(std::size_t i, results::StageResult& r);
  // The interleaved baseline runs after stage `i`, alternating with more of its runs for
  // --precision or its repeats.
  void interleave(std::size_t i, const results::LoadSettings& load, bool alternate);
  // Whether the stage's interval is narrow enough after `round` pairs (one of the looks).
  bool precision_reached(std::size_t i, int round, int rounds);
  void add_reference(const results::Measurement& rm, std::size_t after_stage);

  const Plan& plan_;
  Lab& lab_;
  const knobs::Catalog& catalog_;
  const PlanPolicy& policy_;
  Progress& progress_;
  results::Run& run_;
  // The baseline configuration's runs (stage 0's settings and load) in time order: stage 0's
  // repeats, the interleaved reference runs and attribution's reference runs. An attribution
  // starts from the latest of them, so its reference level is the machine as it is now.
  std::vector<results::Measurement> baseline_runs_;
  // The last stage measured in separate runs: the reference after it tops the baseline's runs
  // up to kMinBaselineRuns (their noise is every separate stage's interval).
  std::size_t last_separate_ = 0;
  // The looks of the stage alternating with the baseline now (interleave).
  results::SwitchbackDesign looks_;
};

results::LoadSettings PlanSchedule::load_of(const PlannedStage& st) const {
  results::LoadSettings load = st.load;
  if (load.rate_percent <= 0) return load;
  // A relative rate: a share of the closed-loop baseline measured at the start.
  const results::Measurement* b =
      run_.stages.empty() ? nullptr : results::median_repeat(run_.stages.front());
  const double base = b != nullptr ? b->tps : 0;
  if (base <= 0)
    throw RuntimeError(
        fmt::format("stage '{}' asks for {:g}% of the baseline's TPS, but the baseline did not run",
                    st.name, load.rate_percent));
  load.rate = base * load.rate_percent / 100.0;
  progress_.note(fmt::format("  fixed rate {:g}% of {:.0f} = {:.0f} tx/s", load.rate_percent, base,
                             load.rate));
  return load;
}

results::StageResult PlanSchedule::first_measurement(const PlannedStage& st,
                                                     const results::LoadSettings& load,
                                                     bool alternate) {
  const PlannedStage& base = plan_.stages.front();
  if (std::optional<results::SwitchbackDesign> design = st.switchback) {
    design->axis = policy_.precision_axis;
    results::StageResult r = lab_.measure_switchback(trial(base, load_of(base), 1),
                                                     trial(st, load, 1), *design, st.design_why);
    if (r.switchback) progress_.note("  " + results::describe_switchback(*r.switchback));
    return r;
  }
  return lab_.measure(trial(st, load, alternate ? 1 : policy_.timing.repeats));
}

void PlanSchedule::measure_stage(std::size_t i) {
  const PlannedStage& st = plan_.stages[i];
  progress_.note(fmt::format("stage {}/{}: {}", i + 1, plan_.stages.size(), st.name));
  const results::LoadSettings load = load_of(st);
  StageMarker marker{st.name, {}};
  for (const auto& c : st.changes) marker.changes.push_back(results::describe_change(c));
  progress_.stage_started(marker);
  // Alternating with the baseline (stage, baseline, stage, baseline, ...) instead of the
  // stage's repeats back to back: the machine's speed wanders over tens of seconds on a
  // shared machine, and back-to-back repeats measure that wander along with the stage.
  const bool alternate = i > 0 && scenario::alternates_with_baseline(st, policy_.timing.repeats);
  results::StageResult r = first_measurement(st, load, alternate);
  r.description = st.description;
  r.sweep_point = st.sweep_point;
  r.sweep_values = st.sweep_values;
  // The plan's changes compare with the stage measured before (what the table shows);
  // the applier's compare with the original configuration.
  r.changes = st.changes;
  r.own_axes = st.own_axes;
  r.skipped = st.skipped;
  for (const auto& w : st.warnings) {
    if (std::find(r.warnings.begin(), r.warnings.end(), w) == r.warnings.end())
      r.warnings.push_back(w);
  }
  if (i == 0) baseline_runs_.insert(baseline_runs_.end(), r.repeats.begin(), r.repeats.end());
  if (run_.data_bytes == 0 && r.error.empty()) run_.data_bytes = lab_.data_bytes();
  // A switchback stage measured the baseline in its own blocks.
  bool reference_after = !st.switchback;
  if (st.attribute && r.error.empty() && !r.repeats.empty() && st.reference < run_.stages.size() &&
      !apply::InterruptGuard::interrupted())
    reference_after = attribute(i, r).value_or(reference_after);
  run_.stages.push_back(std::move(r));
  apply::InterruptGuard::throw_if_interrupted();
  // Interleaved baseline: the reference configuration again after every other stage, so
  // the machine's drift is measured (the report's noise and drift figures) and each stage
  // is compared with the baseline measured right around it.
  if (i > 0 && reference_after) interleave(i, load, alternate);
}

std::optional<bool> PlanSchedule::attribute(std::size_t i, results::StageResult& r) {
  const PlannedStage& st = plan_.stages[i];
  progress_.note(
      fmt::format("stage {}/{}: {}: naming each knob's part", i + 1, plan_.stages.size(), st.name));
  // The reference's runs nearest in time (the baseline's, interleaved, in an isolated
  // run; the reference stage's own in a cumulative one).
  const results::StageResult& reference = run_.stages[st.reference];
  std::vector<results::Measurement> known_good;
  if (st.reference == 0) {
    const auto keep = std::min<std::size_t>(
        baseline_runs_.size(),
        static_cast<std::size_t>(attribution_level_repeats(policy_.timing.repeats)));
    known_good.assign(baseline_runs_.end() - static_cast<std::ptrdiff_t>(keep),
                      baseline_runs_.end());
  } else {
    known_good = reference.repeats;
  }
  AttributionRuns extra;
  try {
    r.attribution = attribute_stage(plan_, i, reference, r, catalog_, policy_, lab_, known_good,
                                    extra, progress_);
  } catch (const RuntimeError& e) {
    // The stage's own figure stands; only the per-knob part is missing.
    r.warnings.push_back(fmt::format("not attributed: {}", e.what()));
    progress_.note(r.warnings.back());
  }
  std::optional<bool> reference_after;
  // The baseline measured during the attribution is the baseline measured right after
  // this stage: it counts for the noise, the drift and this stage's comparison.
  if (st.reference == 0 && st.load == plan_.stages.front().load) {
    for (const auto& rm : extra.reference) add_reference(rm, i);
    // It ended with the baseline: that run is the interleaved reference after this stage.
    reference_after = !extra.last_was_reference;
  }
  // Its runs of the whole stage are the stage measured again: the row rests on them too.
  add_repeats(r, extra.stage);
  return reference_after;
}

void PlanSchedule::interleave(std::size_t i, const results::LoadSettings& load, bool alternate) {
  const PlannedStage& st = plan_.stages[i];
  const PlannedStage& base = plan_.stages.front();
  const Timing& timing = policy_.timing;
  const scenario::MeasureSpec& measure = plan_.scenario.measure;
  const bool alternating = alternate && run_.stages.back().error.empty();
  int rounds = alternating ? timing.repeats : 1;
  // More pairs of the stage and the baseline, looking at the intervals a few times, the 5%
  // spent over the looks (results/switchback.h look_confidence) so that stopping when they
  // look good keeps it: --precision until the watched axis is that narrow, within the budget;
  // by default until its headline is resolved, within twice its repeats.
  std::vector<int> looks;
  looks_ = {};
  if (alternating) {
    looks_ = results::alternating_looks(measure.precision, timing.repeats, measure.budget_s,
                                        2 * (timing.warmup_s + timing.duration_s + 1));
    looks = results::look_schedule(looks_);
    rounds = looks.back();
    results::StageResult& stage = run_.stages.back();
    stage.precision = looks_.resolve ? 0 : looks_.precision;
    stage.looks = static_cast<int>(looks.size());
  }
  for (int round = 1; round <= rounds; ++round) {
    progress_.note(fmt::format("  reference: {} again", base.name));
    // The last reference tops the baseline up to kMinBaselineRuns (plan.h): the noise of
    // every interval comes from these runs.
    int repeats = alternating ? 1 : timing.repeats;
    if (last_separate_ == i && round == rounds)
      repeats = std::max(repeats, kMinBaselineRuns - static_cast<int>(baseline_runs_.size()));
    results::StageResult ref = lab_.measure(trial(base, base.load, repeats));
    for (const auto& rm : ref.repeats) add_reference(rm, i);
    if (!ref.error.empty()) {
      results::ReferenceRun rr;
      rr.after_stage = i;
      rr.error = ref.error;
      run_.references.push_back(std::move(rr));
    }
    apply::InterruptGuard::throw_if_interrupted();
    if (std::find(looks.begin(), looks.end(), round) != looks.end() &&
        precision_reached(i, round, rounds))
      break;
    if (round == rounds) break;
    progress_.note(fmt::format("  {} again ({} of {})", st.name, round + 1, rounds));
    results::StageResult again = lab_.measure(trial(st, load, 1));
    results::StageResult& stage = run_.stages.back();
    if (!again.error.empty())
      stage.warnings.push_back(
          fmt::format("run {} of {} failed: {}", round + 1, rounds, again.error));
    add_repeats(stage, {again});
    apply::InterruptGuard::throw_if_interrupted();
  }
}

bool PlanSchedule::precision_reached(std::size_t i, int round, int rounds) {
  results::StageResult& stage = run_.stages.back();
  stage.confidence = results::look_confidence(looks_, round);
  const results::StageSummary now = results::summarize(run_)[i];
  if (looks_.resolve) {
    // Resolved: TPS called (the headline, whatever its own axes say), else TPS and each own axis
    // called or within ±results::kResolvedWithin (the headline is then the own axis or "≈").
    const bool resolved =
        (now.vs_baseline && now.vs_baseline->measurable) ||
        std::all_of(now.axes.begin(), now.axes.end(), [&](const auto& a) {
          const results::Interval& in = a.change.interval;
          return !a.own || !in.known || a.change.measurable || in.half_width() <= looks_.precision;
        });
    if (resolved) {
      stage.stopped = "resolved";
      progress_.note(fmt::format("  its headline resolved after {} pairs", round));
      return true;
    }
    if (round == rounds) stage.stopped = "unresolved";
    return false;
  }
  std::vector<results::AxisInterval> axes;
  for (const auto& a : now.axes) axes.push_back({a.axis, a.change.interval});
  if (const results::Axis* reached =
          results::precision_reached(axes, stage.precision, policy_.precision_axis)) {
    stage.stopped = "precision";
    progress_.note(fmt::format("  ±{:g}% reached on {} after {} pairs", stage.precision * 100,
                               reached->label, round));
    return true;
  }
  if (round == rounds) stage.stopped = "budget";
  return false;
}

void PlanSchedule::add_reference(const results::Measurement& rm, std::size_t after_stage) {
  results::ReferenceRun rr;
  rr.after_stage = after_stage;
  rr.tps = rm.tps;
  rr.transactions = rm.committed + rm.rolled_back;
  rr.duration_s = rm.duration_s;
  rr.tps_per_second = rm.tps_per_second;
  rr.server_cpu_s = rm.server_cpu_s;
  rr.neighbour_cpu = rm.neighbour_cpu;
  rr.per_tx = rm.per_tx;
  rr.latency = rm.latency;
  run_.references.push_back(std::move(rr));
  baseline_runs_.push_back(rm);
}

// The run's header as far as the plan and the timing say it (the live run adds the server's).
void describe_plan(const Plan& plan, const Timing& timing, results::Run& run) {
  const scenario::Scenario& s = plan.scenario;
  run.pgslow_version = kVersion;
  run.scenario = s.name;
  run.description = s.description;
  run.started_at = utc_now();
  run.server_version = "PostgreSQL " + plan.server_version;
  run.server_major = plan.server_major;
  run.workload = s.workload.name;
  run.scale = s.workload.scale;
  run.warmup_s = timing.warmup_s;
  run.duration_s = timing.duration_s;
  run.repeats = timing.repeats;
  run.mode = std::string(mode_name(s.mode));
  run.sweep = s.sweep.dimensions;
}

}  // namespace

void measure_plan(const Plan& plan, Lab& lab, const knobs::Catalog& catalog,
                  const PlanPolicy& policy, Progress& progress, results::Run& run) {
  const auto wall_start = now_us();
  auto stamp_wall_time = [&] {
    run.wall_seconds = static_cast<double>(now_us() - wall_start) / 1e6;
  };
  describe_plan(plan, policy.timing, run);
  try {
    // The data: loaded once into a template (skipped when a matching one exists).
    lab.prepare();
    run.reset_method = lab.reset_method();
    PlanSchedule schedule(plan, lab, catalog, policy, progress, run);
    for (std::size_t i = 0; i < plan.stages.size(); ++i) schedule.measure_stage(i);
  } catch (...) {
    stamp_wall_time();
    lab.restore_after_error();
    throw;
  }
  evaluate_expectations(plan.scenario, run);
  try {
    lab.finish();
  } catch (...) {
    // A signal during the final restore (apply::Interrupted after the restore) or a failed
    // restore: the run's results are complete all the same.
    stamp_wall_time();
    throw;
  }
  stamp_wall_time();
}

}  // namespace pgslow::experiment
