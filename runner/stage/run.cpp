#include "stage/run.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>
#include <sys/sysinfo.h>
#include <sys/utsname.h>

#include <algorithm>
#include <ctime>
#include <thread>

#include "apply/interrupt.h"
#include "bisect/measurer.h"
#include "common/clock.h"
#include "common/strings.h"
#include "common/version.h"
#include "results/summary.h"
#include "results/switchback.h"
#include "stage/lab_measurer.h"
#include "stage/lab_session.h"
#include "workload/registry.h"

namespace pgslow::stage {

using scenario::attribution_level_repeats;
using scenario::Expectation;
using scenario::kMinBaselineRuns;
using scenario::Plan;
using scenario::PlannedStage;
using scenario::Scenario;

namespace fs = std::filesystem;

results::Machine this_machine() {
  results::Machine m;
  m.cores = static_cast<int>(std::thread::hardware_concurrency());
  struct sysinfo si {};
  if (sysinfo(&si) == 0) m.memory_bytes = static_cast<std::uint64_t>(si.totalram) * si.mem_unit;
  struct utsname u {};
  if (uname(&u) == 0) {
    m.kernel = fmt::format("{} {}", u.sysname, u.release);
    m.hostname = u.nodename;
  }
  return m;
}

bool evaluate_expectations(const Scenario& scenario, results::Run& run) {
  run.expectations.clear();
  bool all = true;
  const results::StageResult* baseline = run.stages.empty() ? nullptr : &run.stages.front();
  for (const auto& e : scenario.expect) {
    results::Expectation out;
    out.text = e.text;
    const results::StageResult* stage = nullptr;
    for (const auto& s : run.stages) {
      if (iequals(s.name, e.stage)) stage = &s;
    }
    if (stage == nullptr || baseline == nullptr || !stage->error.empty() ||
        stage->repeats.empty() || baseline->repeats.empty()) {
      out.passed = false;
      out.detail = stage == nullptr ? "the stage did not run" : "the stage has no measurement";
    } else {
      double base = results::median_repeat(*baseline)->tps;
      double tps = results::median_repeat(*stage)->tps;
      if (e.kind == Expectation::Kind::kSlowerThanBaseline) {
        double factor = tps > 0 ? base / tps : std::numeric_limits<double>::infinity();
        out.passed = factor >= e.value;
        out.detail = fmt::format("{:.1f}x slower ({:.1f} -> {:.1f} tps)", factor, base, tps);
      } else {
        double change = base > 0 ? (tps - base) / base : 0;
        out.passed = std::abs(change) <= e.value;
        out.detail = fmt::format("{:+.1f}% ({:.1f} -> {:.1f} tps)", change * 100, base, tps);
      }
    }
    all = all && out.passed;
    run.expectations.push_back(std::move(out));
  }
  return all;
}

LabOptions make_lab_options(const Scenario& s, const RunOptions& options, const fs::path& workdir) {
  LabOptions lab_options;
  lab_options.target = options.target;
  lab_options.workdir = workdir;
  lab_options.command = "pgslow run " + s.name;
  MeasureOptions& m = lab_options.measure;
  m.warmup_s = options.warmup_s.value_or(s.measure.warmup_s);
  m.duration_s = options.duration_s.value_or(s.measure.duration_s);
  m.repeats = options.repeats.value_or(s.measure.repeats);
  m.workers = options.workers;
  m.max_tries = options.max_tries;
  m.allow_partial = options.allow_partial || s.allow_partial;
  m.protocol = options.protocol.value_or(s.measure.protocol);
  m.check_data = options.check_data || s.measure.check_data;
  m.wait_sampling = !options.no_wait_sampling && s.measure.wait_sampling;
  m.schedule_seed = s.workload.seed;
  lab_options.pooler = options.pooler ? options.pooler : s.pooler;
  return lab_options;
}

void run_plan(const Plan& plan, server::ServerControl& server, const knobs::Catalog& catalog,
              const fs::path& workdir, const RunOptions& options, Progress& progress,
              results::Run& run) {
  const Scenario& s = plan.scenario;
  const auto wall_start = now_us();

  const workload::Workload& wl = workload::find_workload(s.workload.name);
  workload::WorkloadParams params = workload_params(s);
  if (auto problems = wl.validate(params); has_errors(problems)) {
    for (auto& p : problems) {
      if (p.where.file.empty()) p.where = s.workload.where;
    }
    throw InputError(problems);
  }

  // What attributions judge by; cpu_per_tx is refused before any run on a server whose CPU
  // time cannot be read.
  const results::Metric metric = options.metric.value_or(s.measure.metric);
  for (const auto& st : plan.stages)
    if (st.attribute) {
      bisect::require_measurable(metric, server);
      break;
    }

  // A sweep of server.memory/cpus: every configuration carries its envelope (the baseline and
  // its interleaved runs the run's own), set on the live group before its data reset.
  const bool envelope_sweep = s.sweep.envelope_dimension() != nullptr;
  const server::Envelope run_envelope = server.current_envelope();
  auto configuration = [&](const PlannedStage& st) {
    Configuration c{st.name, st.settings, {}, std::nullopt};
    if (envelope_sweep) c.envelope = st.envelope.over(run_envelope);
    return c;
  };

  const LabOptions lab_options = make_lab_options(s, options, workdir);
  const MeasureOptions& m = lab_options.measure;
  LabSession lab(server, catalog, wl, params, lab_options, progress);

  run.pgslow_version = kVersion;
  run.scenario = s.name;
  run.description = s.description;
  {
    std::time_t t = std::time(nullptr);
    char buf[32];
    std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&t));
    run.started_at = buf;
  }
  run.server_version = "PostgreSQL " + plan.server_version;
  run.server_major = plan.server_major;
  run.target = server.describe();
  run.envelope = server.envelope();
  run.workload = s.workload.name;
  run.scale = s.workload.scale;
  run.warmup_s = m.warmup_s;
  run.duration_s = m.duration_s;
  run.repeats = m.repeats;
  run.mode = std::string(mode_name(s.mode));
  run.sweep = s.sweep.dimensions;
  run.machine = this_machine();

  // The data: loaded once into a template (skipped when a matching one exists).
  lab.prepare();
  run.reset_method = lab.reset_method();

  auto stamp_wall_time = [&] {
    run.wall_seconds = static_cast<double>(now_us() - wall_start) / 1e6;
  };
  // The baseline configuration's runs (stage 0's settings and load) in time order: stage 0's
  // repeats, the interleaved reference runs and attribution's reference runs. An attribution
  // starts from the latest of them, so its reference level is the machine as it is now.
  std::vector<results::Measurement> baseline_runs;
  auto add_reference = [&](const results::Measurement& rm, std::size_t after_stage) {
    results::ReferenceRun rr;
    rr.after_stage = after_stage;
    rr.tps = rm.tps;
    rr.transactions = rm.committed + rm.rolled_back;
    rr.duration_s = rm.duration_s;
    rr.tps_per_second = rm.tps_per_second;
    rr.server_cpu_s = rm.server_cpu_s;
    rr.per_tx = rm.per_tx;
    rr.latency = rm.latency;
    run.references.push_back(std::move(rr));
    baseline_runs.push_back(rm);
  };
  // The last stage measured in separate runs: the reference after it tops the baseline's runs
  // up to kMinBaselineRuns (their noise is every separate stage's interval).
  std::size_t last_separate = 0;
  for (std::size_t i = 1; i < plan.stages.size(); ++i)
    if (!plan.stages[i].switchback) last_separate = i;
  try {
    for (std::size_t i = 0; i < plan.stages.size(); ++i) {
      const PlannedStage& st = plan.stages[i];
      progress.note(fmt::format("stage {}/{}: {}", i + 1, plan.stages.size(), st.name));
      results::LoadSettings load = st.load;
      if (load.rate_percent > 0) {
        // A relative rate: a share of the closed-loop baseline measured at the start.
        const results::Measurement* b =
            run.stages.empty() ? nullptr : results::median_repeat(run.stages.front());
        const double base = b != nullptr ? b->tps : 0;
        if (base <= 0)
          throw RuntimeError(fmt::format(
              "stage '{}' asks for {:g}% of the baseline's TPS, but the baseline did not run",
              st.name, load.rate_percent));
        load.rate = base * load.rate_percent / 100.0;
        progress.note(fmt::format("  fixed rate {:g}% of {:.0f} = {:.0f} tx/s", load.rate_percent,
                                  base, load.rate));
      }
      StageMarker marker{st.name, {}};
      for (const auto& c : st.changes) marker.changes.push_back(results::describe_change(c));
      progress.stage_started(marker);
      // Alternating with the baseline (stage, baseline, stage, baseline, ...) instead of the
      // stage's repeats back to back: the machine's speed wanders over tens of seconds on a
      // shared machine, and back-to-back repeats measure that wander along with the stage.
      const bool alternate =
          i > 0 && st.reference == 0 && !st.attribute && m.repeats >= 2 && !st.switchback;
      const PlannedStage& base = plan.stages.front();
      std::optional<results::SwitchbackDesign> design = st.switchback;
      if (design) design->axis = options.precision_axis;
      results::StageResult r = design
                                   ? lab.measure_switchback(configuration(base), configuration(st),
                                                            load, *design, st.design_why)
                                   : lab.measure(configuration(st), load,
                                                 alternate ? std::optional<int>(1) : std::nullopt);
      if (r.switchback) progress.note("  " + results::describe_switchback(*r.switchback));
      r.description = st.description;
      r.sweep_point = st.sweep_point;
      r.sweep_values = st.sweep_values;
      // The plan's changes compare with the stage measured before (what the table shows);
      // the applier's compare with the original configuration.
      r.changes = st.changes;
      r.skipped = st.skipped;
      for (const auto& w : st.warnings) {
        if (std::find(r.warnings.begin(), r.warnings.end(), w) == r.warnings.end())
          r.warnings.push_back(w);
      }
      if (i == 0) baseline_runs.insert(baseline_runs.end(), r.repeats.begin(), r.repeats.end());
      if (run.data_bytes == 0 && r.error.empty()) run.data_bytes = lab.data_bytes();
      // A switchback stage measured the baseline in its own blocks.
      bool reference_after = !st.switchback;
      if (st.attribute && r.error.empty() && !r.repeats.empty() &&
          st.reference < run.stages.size() && !apply::InterruptGuard::interrupted()) {
        progress.note(fmt::format("stage {}/{}: {}: naming each knob's part", i + 1,
                                  plan.stages.size(), st.name));
        // The reference's runs nearest in time (the baseline's, interleaved, in an isolated
        // run; the reference stage's own in a cumulative one).
        const results::StageResult& reference = run.stages[st.reference];
        std::vector<results::Measurement> known_good;
        if (st.reference == 0) {
          const auto keep = std::min<std::size_t>(
              baseline_runs.size(), static_cast<std::size_t>(attribution_level_repeats(m.repeats)));
          known_good.assign(baseline_runs.end() - static_cast<std::ptrdiff_t>(keep),
                            baseline_runs.end());
        } else {
          known_good = reference.repeats;
        }
        AttributionRuns extra;
        try {
          r.attribution = attribute_stage(plan, i, reference, r, catalog, m.repeats, metric, lab,
                                          known_good, extra, progress);
        } catch (const RuntimeError& e) {
          // The stage's own figure stands; only the per-knob part is missing.
          r.warnings.push_back(fmt::format("not attributed: {}", e.what()));
          progress.note(r.warnings.back());
        }
        // The baseline measured during the attribution is the baseline measured right after
        // this stage: it counts for the noise, the drift and this stage's comparison.
        if (st.reference == 0 && st.load == plan.stages.front().load) {
          for (const auto& rm : extra.reference) add_reference(rm, i);
          // It ended with the baseline: that run is the interleaved reference after this stage.
          reference_after = !extra.last_was_reference;
        }
        // Its runs of the whole stage are the stage measured again: the row rests on them too.
        add_repeats(r, extra.stage);
      }
      run.stages.push_back(std::move(r));
      apply::InterruptGuard::throw_if_interrupted();
      // Interleaved baseline: the reference configuration again after every other stage, so
      // the machine's drift is measured (the report's noise and drift figures) and each stage
      // is compared with the baseline measured right around it.
      if (i > 0 && reference_after) {
        const bool alternating = alternate && run.stages.back().error.empty();
        int rounds = alternating ? m.repeats : 1;
        // --precision: more pairs of the stage and the baseline, within the budget, looking at
        // the interval a few times at a confidence spread over the looks (results/switchback.h),
        // so that stopping when it is narrow enough keeps its 95%.
        std::vector<int> looks;
        if (alternating && s.measure.precision > 0) {
          results::SwitchbackDesign d;
          d.precision = s.measure.precision;
          d.min_pairs = m.repeats;
          d.max_pairs = std::max(
              m.repeats,
              static_cast<int>(s.measure.budget_s / (2 * (m.warmup_s + m.duration_s + 1))));
          looks = results::look_schedule(d);
          rounds = looks.back();
          run.stages.back().precision = d.precision;
          run.stages.back().looks = static_cast<int>(looks.size());
        }
        for (int round = 1; round <= rounds; ++round) {
          progress.note(fmt::format("  reference: {} again", base.name));
          // The last reference tops the baseline up to kMinBaselineRuns (plan.h): the noise of
          // every interval comes from these runs.
          int repeats = alternating ? 1 : m.repeats;
          if (last_separate == i && round == rounds)
            repeats = std::max(repeats, kMinBaselineRuns - static_cast<int>(baseline_runs.size()));
          results::StageResult ref = lab.measure(configuration(base), base.load, repeats);
          for (const auto& rm : ref.repeats) add_reference(rm, i);
          if (!ref.error.empty()) {
            results::ReferenceRun rr;
            rr.after_stage = i;
            rr.error = ref.error;
            run.references.push_back(std::move(rr));
          }
          apply::InterruptGuard::throw_if_interrupted();
          if (std::find(looks.begin(), looks.end(), round) != looks.end()) {
            const results::StageSummary now = results::summarize(run)[i];
            results::StageResult& stage = run.stages.back();
            std::vector<results::AxisInterval> axes;
            for (const auto& a : now.axes) axes.push_back({a.axis, a.change.interval});
            if (const results::Axis* reached =
                    results::precision_reached(axes, stage.precision, options.precision_axis)) {
              stage.stopped = "precision";
              progress.note(fmt::format("  ±{:g}% reached on {} after {} pairs",
                                        stage.precision * 100, reached->label, round));
              break;
            }
            if (round == rounds) stage.stopped = "budget";
          }
          if (round == rounds) break;
          progress.note(fmt::format("  {} again ({} of {})", st.name, round + 1, rounds));
          results::StageResult again = lab.measure(configuration(st), load, 1);
          results::StageResult& stage = run.stages.back();
          if (!again.error.empty())
            stage.warnings.push_back(
                fmt::format("run {} of {} failed: {}", round + 1, rounds, again.error));
          add_repeats(stage, {again});
          apply::InterruptGuard::throw_if_interrupted();
        }
      }
    }
  } catch (...) {
    stamp_wall_time();
    lab.restore_after_error();
    throw;
  }
  evaluate_expectations(s, run);
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

void add_repeats(results::StageResult& stage, const std::vector<results::StageResult>& more) {
  for (const auto& m : more) {
    if (!m.error.empty() || m.repeats.empty()) continue;
    const std::size_t before = stage.repeats.size();
    stage.repeats.insert(stage.repeats.end(), m.repeats.begin(), m.repeats.end());
    const auto median =
        static_cast<std::size_t>(results::median_repeat(stage) - stage.repeats.data());
    if (median >= before) {
      stage.evidence = m.evidence;
      stage.evidence_seconds = m.evidence_seconds;
      stage.waits = m.waits;
    }
  }
}

results::Attribution attribute_stage(const Plan& plan, std::size_t index,
                                     const results::StageResult& reference,
                                     const results::StageResult& stage,
                                     const knobs::Catalog& catalog, int repeats,
                                     results::Metric metric, LabSession& lab,
                                     const std::vector<results::Measurement>& known_good,
                                     AttributionRuns& runs, Progress& progress) {
  const PlannedStage& st = plan.stages[index];
  const PlannedStage& ref = plan.stages[st.reference];
  std::vector<bisect::Candidate> candidates = attribution_candidates(st);
  stage::LabMeasurer measurer(lab, ref.settings, metric, st.load, st.name + " (attribution)",
                              &progress);
  std::vector<knobs::Setting> all;
  for (const auto& c : candidates) all.push_back(c.change);
  measurer.seed(all, stage);

  bisect::AttributionOptions o;
  o.search.level_repeats = attribution_level_repeats(repeats);
  o.search.max_repeats = std::max(o.search.level_repeats, 3);
  o.max_runs = st.attribution_max_runs;
  o.stage = st.name;
  o.reference = reference.name;
  o.together = bisect::together_groups(catalog);
  for (const auto& k : catalog.knobs()) o.watch[k.name] = k.watch;
  o.search.metric = metric;
  // The runs made before count as the search's samples of the same metric.
  for (const auto& m : stage.repeats)
    o.search.known_bad.push_back(bisect::search_sample_of(metric, m, stage.evidence));
  // The reference's runs count when they measured the same load.
  if (reference.load == stage.load && reference.error.empty()) {
    for (const auto& m : known_good)
      o.search.known_good.push_back(bisect::search_sample_of(metric, m, reference.evidence));
    measurer.seed({}, reference);
  }
  o.observe = [&](const std::vector<knobs::Setting>& changes) { return measurer.observe(changes); };
  bisect::Attributed a = bisect::attribute(measurer, candidates, o);
  runs.reference = measurer.reference_runs();
  runs.last_was_reference = measurer.last_was_reference();
  runs.stage = measurer.stage_runs();
  progress.note("  " + a.attribution.headline);
  return std::move(a.attribution);
}

}  // namespace pgslow::stage
