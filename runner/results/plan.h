#pragma once
// `pgslow plan`'s result: what a run of the scenario would do, changing nothing. The engine
// fills it from its plan (scenario::plan_result); report/plan_view.h renders it (console, Markdown,
// JSON).

#include <string>
#include <vector>

#include "results/model.h"

namespace pgslow::results {

// A stage as the plan shows it. scenario::PlannedStage is one of these plus what the applier
// and the measuring need, so the plan's view is its stages, not a copy kept in step by hand.
struct PlanStage {
  std::string name;
  std::string description;
  bool is_baseline = false;
  LoadSettings load;
  bool needs_restart = false;         // versus the stage measured before it
  std::vector<KnobChange> changes;    // versus the stage measured before it
  std::string envelope_text;          // a sweep point's own ("memory 64MB"); "": the run's
  std::vector<SkippedKnob> skipped;   // asked for, but the server lacks or refuses them
  std::vector<std::string> warnings;  // pitfalls of the values used
  std::string design_why;             // switchback or separate runs, and why
  // The axes its changes are known to move, TPS first (scenario/plan.h own_axes): tested
  // before the others (results/summary.h).
  std::vector<std::string> own_axes;
  // Per-knob attribution (attribute: true and at least two knobs changed): the units the
  // search works on (catalog pairs merged) and the extra runs it is expected to cost.
  bool attribute = false;
  int attribution_units = 0;
  int attribution_runs = 0;
  int attribution_max_runs = 0;  // the budget: past it the stage is reported not attributed
};

struct PlanResult {
  std::string scenario;
  std::string file;
  std::string description;
  std::string server_version;  // "15.18"
  std::string workload;
  int scale = 0;
  int clients = 0;
  double warmup_s = 0;
  double duration_s = 0;
  int repeats = 0;
  std::string mode;               // "cumulative" or "isolated"
  std::vector<PlanStage> stages;  // stages[0] is the baseline
  double estimated_seconds = 0;   // measuring; loading the data comes on top
  int attribution_runs = 0;       // of which extra runs for attribution
  double attribution_seconds = 0;
};

}  // namespace pgslow::results
