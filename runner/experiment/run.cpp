#include "experiment/run.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>
#include <sys/sysinfo.h>
#include <sys/utsname.h>

#include <algorithm>
#include <thread>

#include "apply/interrupt.h"
#include "apply/owner.h"
#include "common/strings.h"
#include "experiment/lab_measurer.h"
#include "experiment/lab_session.h"
#include "results/summary.h"
#include "search/measurer.h"
#include "workload/registry.h"

namespace pgslow::experiment {

using scenario::attribution_level_repeats;
using scenario::Expectation;
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
  // The figure the table shows: the stage against the baseline measured around it, with its
  // interval (one number per cell: the expectation says what the table says).
  const std::vector<results::StageSummary> summaries = results::summarize(run);
  for (const auto& e : scenario.expect) {
    results::Expectation out;
    out.text = e.text;
    const results::StageSummary* s = nullptr;
    for (const auto& candidate : summaries)
      if (iequals(run.stages[candidate.index].name, e.stage)) s = &candidate;
    if (s == nullptr || !s->ran || !s->vs_baseline) {
      out.passed = false;
      out.detail = s == nullptr ? "the stage did not run" : "the stage has no measurement";
    } else if (e.kind == Expectation::Kind::kNoEffect) {
      out.passed = std::none_of(s->axes.begin(), s->axes.end(),
                                [](const results::AxisChange& a) { return a.change.measurable; });
      out.detail = s->verdict.sentence;
    } else {
      const results::Change& c = *s->vs_baseline;
      const std::string interval = results::interval_text(c);
      if (e.kind == Expectation::Kind::kSlowerThanBaseline) {
        const double factor = c.ratio > 0 ? 1 / c.ratio : std::numeric_limits<double>::infinity();
        out.passed = factor >= e.value;
        out.detail = fmt::format("{}x slower, as in the table; interval {}", format_number(factor),
                                 interval);
      } else {
        out.passed = std::abs(c.ratio - 1) <= e.value;
        out.detail = fmt::format("{}, as in the table; interval {}",
                                 results::format_change(c.ratio), interval);
      }
    }
    all = all && out.passed;
    run.expectations.push_back(std::move(out));
  }
  return all;
}

Timing make_timing(const Scenario& s, const RunOptions& options) {
  Timing m;
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
  return m;
}

LabOptions make_lab_options(const Scenario& s, const RunOptions& options, const fs::path& workdir) {
  LabOptions lab_options;
  lab_options.target = options.target;
  lab_options.workdir = workdir;
  lab_options.command = "pgslow run " + s.name;
  lab_options.pooler = options.pooler ? options.pooler : s.pooler;
  lab_options.keep_data = options.keep_data;
  return lab_options;
}

Trial trial_of(const PlannedStage& stage, const Timing& timing,
               const std::optional<server::Envelope>& sweep_envelope) {
  Trial t;
  t.configuration = {stage.name, stage.settings, {}, std::nullopt};
  if (sweep_envelope) t.configuration.envelope = stage.envelope.over(*sweep_envelope);
  t.load = stage.load;
  t.timing = timing;
  return t;
}

void run_plan(const Plan& plan, server::ServerControl& server, const knobs::Catalog& catalog,
              const fs::path& workdir, const RunOptions& options, Progress& progress,
              results::Run& run) {
  const Scenario& s = plan.scenario;
  const workload::Workload& wl = workload::find_workload(s.workload.name);
  workload::WorkloadParams params = workload_params(s);
  if (auto problems = wl.validate(params); has_errors(problems)) {
    for (auto& p : problems) {
      if (p.where.file.empty()) p.where = s.workload.where;
    }
    throw InputError(problems);
  }

  PlanPolicy policy;
  policy.timing = make_timing(s, options);
  // What attributions judge by; cpu_per_tx is refused before any run on a server whose CPU
  // time cannot be read.
  policy.metric = options.metric.value_or(s.measure.metric);
  for (const auto& st : plan.stages)
    if (st.attribute) {
      search::require_measurable(policy.metric, server);
      break;
    }
  policy.precision_axis = options.precision_axis;
  // A sweep of server.memory/cpus: every configuration carries its envelope (the baseline and
  // its interleaved runs the run's own), set on the live group before its data reset.
  if (s.sweep.envelope_dimension() != nullptr) policy.sweep_envelope = server.current_envelope();

  const LabOptions lab_options = make_lab_options(s, options, workdir);
  LabSession lab(server, catalog, wl, params, lab_options, progress);
  run.target = server.describe();
  // The pooler the lab's clients go through, by the one overlay rule (make_lab_options).
  if (lab_options.pooler) run.pooler = lab_options.pooler->describe();
  run.envelope = server.envelope();
  run.machine = this_machine();
  measure_plan(plan, lab, catalog, policy, progress, run);
}

std::unique_ptr<LabSession> open_scenario_lab(server::ServerControl& server,
                                              const knobs::Catalog& catalog,
                                              const fs::path& workdir, const Scenario& scenario,
                                              const RunOptions& options, Progress& progress,
                                              bool hidden) {
  LabOptions lab_options = make_lab_options(scenario, options, workdir);
  lab_options.command = apply::this_command_line();
  lab_options.hide_settings = hidden;
  auto lab =
      std::make_unique<LabSession>(server, catalog, workload::find_workload(scenario.workload.name),
                                   workload_params(scenario), lab_options, progress);
  lab->prepare();
  return lab;
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
                                     const knobs::Catalog& catalog, const PlanPolicy& policy,
                                     Lab& lab, const std::vector<results::Measurement>& known_good,
                                     AttributionRuns& runs, Progress& progress) {
  const PlannedStage& st = plan.stages[index];
  const PlannedStage& ref = plan.stages[st.reference];
  const int repeats = policy.timing.repeats;
  const results::Metric& metric = policy.metric;
  std::vector<search::Candidate> candidates = attribution_candidates(st);
  // The reference's settings under the stage's load (its envelope, if any, is the session's).
  Trial base;
  base.configuration.settings = ref.settings;
  base.load = st.load;
  base.timing = policy.timing;
  experiment::LabMeasurer measurer(lab, base, metric, st.name + " (attribution)", &progress);
  std::vector<knobs::Setting> all;
  for (const auto& c : candidates) all.push_back(c.change);
  measurer.seed(all, stage);

  search::AttributionOptions o;
  o.search.level_repeats = attribution_level_repeats(repeats);
  o.search.max_repeats = std::max(o.search.level_repeats, 3);
  o.max_runs = st.attribution_max_runs;
  o.stage = st.name;
  o.reference = reference.name;
  o.together = search::together_groups(catalog);
  for (const auto& k : catalog.knobs()) o.watch[k.name] = k.watch;
  o.search.metric = metric;
  // The runs made before count as the search's samples of the same metric.
  for (const auto& m : stage.repeats)
    o.search.known_bad.push_back(search::search_sample_of(metric, m, stage.evidence));
  // The reference's runs count when they measured the same load.
  if (reference.load == stage.load && reference.error.empty()) {
    for (const auto& m : known_good)
      o.search.known_good.push_back(search::search_sample_of(metric, m, reference.evidence));
    measurer.seed({}, reference);
  }
  o.observe = [&](const std::vector<knobs::Setting>& changes) { return measurer.observe(changes); };
  search::Attributed a = search::attribute(measurer, candidates, o);
  runs.reference = measurer.reference_runs();
  runs.last_was_reference = measurer.last_was_reference();
  runs.stage = measurer.stage_runs();
  progress.note("  " + a.attribution.headline);
  return std::move(a.attribution);
}

}  // namespace pgslow::experiment
