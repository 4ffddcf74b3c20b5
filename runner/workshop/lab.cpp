#include "workshop/lab.h"

#include "apply/owner.h"
#include "results/summary.h"
#include "stage/lab_session.h"
#include "workload/registry.h"

namespace pgslow::workshop {

void measure_plan(const scenario::Plan& plan, server::ServerControl& server,
                  const knobs::Catalog& catalog, const std::filesystem::path& workdir,
                  const stage::RunOptions& options, Progress& progress, results::Run& run) {
  stage::run_plan(plan, server, catalog, workdir, options, progress, run);
}

struct Lab::State {
  State(server::ServerControl& server, const knobs::Catalog& catalog, stage::LabOptions options,
        const scenario::Scenario& s, Progress& events, bool hide)
      : session(server, catalog, workload::find_workload(s.workload.name),
                scenario::workload_params(s), std::move(options), events),
        progress(events),
        hidden(hide) {}
  stage::LabSession session;
  Progress& progress;
  bool hidden = false;
};

Lab::Lab(server::ServerControl& server, const knobs::Catalog& catalog,
         const std::filesystem::path& workdir, const scenario::Scenario& scenario,
         const stage::RunOptions& options, Progress& progress, bool hidden) {
  stage::LabOptions lab_options = stage::make_lab_options(scenario, options, workdir);
  lab_options.command = apply::this_command_line();
  lab_options.hide_settings = hidden;
  state_ =
      std::make_unique<State>(server, catalog, std::move(lab_options), scenario, progress, hidden);
  state_->session.prepare();
}

Lab::~Lab() = default;

results::StageResult Lab::measure(const scenario::PlannedStage& stage) {
  // A hidden stage's marker names no knob: the dashboard is on the participants' screens.
  StageMarker marker{stage.name, {}};
  if (!state_->hidden) {
    for (const auto& c : stage.changes) marker.changes.push_back(results::describe_change(c));
  }
  state_->progress.stage_started(marker);
  return state_->session.measure({stage.name, stage.settings, {}, std::nullopt}, stage.load);
}

void Lab::keep(const std::vector<knobs::Setting>& settings, const std::string& label) {
  state_->session.keep({label, settings, {}, std::nullopt});
}

void Lab::restore() {
  state_->session.finish();
}

}  // namespace pgslow::workshop
