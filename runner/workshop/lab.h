#pragma once
// The one place workshop mode measures (lessons and mysteries): both go through the measuring
// seam, stage::LabSession, via the scenario runner for lessons and directly for mysteries.

#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "common/progress.h"
#include "knobs/catalog.h"
#include "results/model.h"
#include "scenario/plan.h"
#include "server/server_control.h"
#include "stage/run.h"

namespace pgslow::workshop {

// Measures a whole lesson scenario: every planned stage, configuration restored at the end.
void measure_plan(const scenario::Plan& plan, server::ServerControl& server,
                  const knobs::Catalog& catalog, const std::filesystem::path& workdir,
                  const stage::RunOptions& options, Progress& progress, results::Run& run);

// Measures configurations one at a time on one workload, and can leave the last one applied
// (a mystery keeps its degradation until it is revealed). With `hidden`, the journal is sealed
// and names no setting (apply::Journal::hidden), and the stage markers name no knob.
class Lab {
 public:
  Lab(server::ServerControl& server, const knobs::Catalog& catalog,
      const std::filesystem::path& workdir, const scenario::Scenario& scenario,
      const stage::RunOptions& options, Progress& progress, bool hidden);
  ~Lab();
  Lab(const Lab&) = delete;
  Lab& operator=(const Lab&) = delete;

  // Applies the stage's full configuration on top of the original, resets the data, measures.
  results::StageResult measure(const scenario::PlannedStage& stage);
  // Applies `settings` as a kept degradation (`pgslow restore` or a reveal undoes it).
  void keep(const std::vector<knobs::Setting>& settings, const std::string& label);
  // Puts the original configuration back (a no-op when nothing is changed).
  void restore();

 private:
  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace pgslow::workshop
