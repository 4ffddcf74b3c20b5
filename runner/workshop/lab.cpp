#include "workshop/lab.h"

#include "apply/applier.h"
#include "apply/interrupt.h"
#include "apply/owner.h"
#include "common/errors.h"
#include "report/summary.h"
#include "workload/dataset.h"
#include "workload/registry.h"

namespace pgslow::workshop {

void measure_plan(const scenario::Plan& plan, server::ServerControl& server,
                  const knobs::Catalog& catalog, const std::filesystem::path& workdir,
                  const scenario::RunOptions& options, Progress& progress, report::Run& run) {
  scenario::run_plan(plan, server, catalog, workdir, options, progress, run);
}

struct Lab::State {
  State(server::ServerControl& server, const knobs::Catalog& catalog,
        const std::filesystem::path& workdir, const scenario::Scenario& s,
        const scenario::RunOptions& options, Progress& events)
      : workload(workload::find_workload(s.workload.name)),
        params(make_params(s)),
        dataset(server.conninfo(), workload, params),
        applier(server, workdir, catalog, options.target),
        executor(server, applier, workload, params, dataset, measure_options(s, options), events),
        progress(events) {}

  static workload::WorkloadParams make_params(const scenario::Scenario& s) {
    workload::WorkloadParams p;
    p.scale = s.workload.scale;
    p.clients = s.workload.clients;
    p.think_time = s.workload.think_time;
    p.seed = s.workload.seed;
    p.options = s.workload.options;
    return p;
  }
  static scenario::MeasureOptions measure_options(const scenario::Scenario& s,
                                                  const scenario::RunOptions& o) {
    scenario::MeasureOptions m;
    m.warmup_s = o.warmup_s.value_or(s.measure.warmup_s);
    m.duration_s = o.duration_s.value_or(s.measure.duration_s);
    m.repeats = o.repeats.value_or(s.measure.repeats);
    m.workers = o.workers;
    m.max_tries = o.max_tries;
    m.allow_partial = o.allow_partial;
    return m;
  }

  apply::InterruptGuard guard;
  const workload::Workload& workload;
  workload::WorkloadParams params;
  workload::Dataset dataset;
  apply::Applier applier;
  scenario::StageExecutor executor;
  Progress& progress;
  bool hidden = false;
};

Lab::Lab(server::ServerControl& server, const knobs::Catalog& catalog,
         const std::filesystem::path& workdir, const scenario::Scenario& scenario,
         const scenario::RunOptions& options, Progress& progress, bool hidden) {
  apply::require_permission(server);
  state_ = std::make_unique<State>(server, catalog, workdir, scenario, options, progress);
  state_->hidden = hidden;
  if (hidden) state_->applier.hide_settings();
  if (state_->dataset.load(progress)) progress.note("data loaded into the template");
  apply::InterruptGuard::throw_if_interrupted();
}

Lab::~Lab() = default;

report::StageResult Lab::measure(const scenario::PlannedStage& stage) {
  // A hidden stage's marker names no knob: the dashboard is on the participants' screens.
  StageMarker marker{stage.name, {}};
  if (!state_->hidden) {
    for (const auto& c : stage.changes) marker.changes.push_back(report::describe_change(c));
  }
  state_->progress.stage_started(marker);
  return state_->executor.run_stage(stage.name, stage.settings, stage.load);
}

void Lab::keep(const std::vector<knobs::Setting>& settings, const std::string& label) {
  state_->applier.apply(settings, apply::Operation::kApply,
                        {label, {}, apply::this_command_line()});
  state_->applier.keep();
}

void Lab::restore() {
  state_->applier.restore();
}

}  // namespace pgslow::workshop
