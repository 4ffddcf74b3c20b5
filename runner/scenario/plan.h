#pragma once
// A scenario checked against the knob catalog and the live server: for each stage, the full
// configuration to apply, each knob's verdict (reload, restart, skipped with the reason), the
// changes versus the stage before, and the load. Everything here is decided before the first
// change to the server; a scenario with any error never gets a Plan.

#include <map>
#include <string>
#include <vector>

#include "knobs/catalog.h"
#include "knobs/validate.h"
#include "results/model.h"
#include "results/plan.h"
#include "results/switchback.h"
#include "scenario/scenario.h"
#include "search/result.h"

namespace pgslow::scenario {

// What the plan shows of a stage (results::PlanStage: name, load, changes, skipped knobs,
// warnings, design, attribution), and what the applier and the measuring need besides.
struct PlannedStage : results::PlanStage {
  // The stage's whole configuration on top of the server's original one (skipped knobs
  // left out): what the applier writes for this stage.
  std::vector<knobs::Setting> settings;
  std::vector<knobs::SettingVerdict> verdicts;  // of `settings`
  EnvelopeChange envelope;   // the server's own envelope for this stage (a sweep point)
  bool sweep_point = false;  // a point of the scenario's sweep
  std::map<std::string, std::string> sweep_values;  // its value per dimension ("32MB")
  bool same_as_baseline = false;  // an A/A stage (StageSpec::same_as_baseline): no warning
  std::size_t reference = 0;      // the stage `changes` compare with (baseline, or the one before)
  // Switchback against the baseline in one run (results/switchback.h), or unset: separate runs;
  // `design_why` says why, in the plan and the report.
  std::optional<results::SwitchbackDesign> switchback;
};

// The axes a stage's changes are known to move, TPS first and then in the axes' order: each
// server knob's `moves:` (knobs/*.yaml), a pool's wait when the stage changes PgBouncer or a
// pool, the latency's tail when its load differs from the baseline's (`baseline_load`), the
// server's CPU when it connects per transaction. results/summary.h tests them first.
std::vector<std::string> own_axes(const PlannedStage& stage,
                                  const results::LoadSettings& baseline_load,
                                  const knobs::Catalog& catalog);

// The longest carryover (knobs/*.yaml) a switchback stage may have: its blocks are three times
// as long, and a stage needs several of them in a couple of minutes.
inline constexpr double kMaxSwitchbackCarryover = 5;
// How long a switch of pgslow's PgBouncer settings (a pool's size, by RELOAD) takes to settle:
// the run waits up to this long after each switch for the pool to hold what it allows
// (experiment/pooler_path.h), and the block drops it.
inline constexpr double kPoolerCarryover = 1;

struct Plan {
  Scenario scenario;
  int server_major = 0;
  std::string server_version;        // "15.18"
  std::vector<PlannedStage> stages;  // stages[0] is the baseline
  // Measuring (the stages and the interleaved references, attribution's extra runs), resets
  // and restarts; loading the data comes on top.
  double estimated_seconds = 0;
  int attribution_runs = 0;        // of which extra runs for attribution
  double attribution_seconds = 0;  // of which attribution's
};

// make_plan's estimate of a run's time without a server (`pgslow scenarios`): every knob taken
// to apply by reload and every value as written; on a server, `pgslow plan` knows which knobs need
// a restart and which the version lacks.
double estimate_seconds_offline(const Scenario& scenario, const knobs::Catalog& catalog);

// Runs of the baseline configuration a run makes at least (the last interleaved reference
// makes up the difference): every interval's noise comes from their spread, and with fewer
// than 3 its t quantile (12.7 for one degree of freedom) makes even a 50x effect "within noise".
inline constexpr int kMinBaselineRuns = 3;

// Switchback (one run, switching between the baseline and the stage) when every knob the stage
// changes acts within kMaxSwitchbackCarryover seconds of a reload, and its load differs from the
// baseline's only in PgBouncer settings a RELOAD applies live (load_switch_refusal,
// plan_pooler.h); separate runs otherwise. The
// reason goes into stage.design_why, for the plan and the report (scenario/plan_design.cpp).
void choose_design(PlannedStage& stage, const PlannedStage& baseline, const Scenario& scenario,
                   const knobs::Catalog& catalog);
// The looks a stage alternating with the baseline takes under `m` (results/switchback.h
// alternating_looks; experiment/plan_schedule.cpp takes the same, with the command line's timing).
results::SwitchbackDesign alternating_looks_of(const MeasureSpec& m);

// Whether a stage of separate runs alternates with the baseline (stage, baseline, stage, ...)
// instead of taking its repeats back to back: compared with the baseline, no attribution, and
// `repeats` of 2 or more; such a stage takes more pairs until resolved (alternating_looks).
bool alternates_with_baseline(const PlannedStage& stage, int repeats);

// Runs of the reference and the stage an attribution needs at least: the interval needs the
// spread of repeated runs, so a scenario with one repeat gets one more of each.
int attribution_level_repeats(int repeats);

// The stage's changes versus its reference as bisect candidates (attribution's input).
std::vector<search::Candidate> attribution_candidates(const PlannedStage& stage);

// Checks the scenario against the catalog (presets, knob names) and the live server (versions,
// ranges, contexts, cross-parameter rules). Throws InputError carrying every problem.
Plan make_plan(const Scenario& scenario, const knobs::Catalog& catalog,
               const knobs::ServerSettings& server);

// The settings of the named presets expanded in order, then `settings` on top; a later value
// of the same knob wins. Unknown presets are problems (with a suggestion).
std::vector<knobs::Setting> resolve_stage_settings(const std::vector<PresetRef>& presets,
                                                   const std::vector<knobs::Setting>& settings,
                                                   const knobs::Catalog& catalog,
                                                   std::vector<ConfigError>& problems);

// What can be checked without a server (as `pgslow check --offline`): the workload's name and
// every stage's presets and knobs (names and safe values only); the problems are added to
// `problems`. make_plan checks all of it again against the server.
void check_scenario_offline(const Scenario& scenario, const knobs::Catalog& catalog,
                            std::vector<ConfigError>& problems);

// The server's current value of a parameter as a person writes it ("128MB", "on").
std::string current_value(const knobs::ServerSettings& server, const std::string& name);

// `pgslow plan`'s result (report/plan_view.h renders it): per stage the knobs with old and new
// values, reload or restart, skipped knobs with reasons, the load, and the estimated duration.
results::PlanResult plan_result(const Plan& plan);

}  // namespace pgslow::scenario
