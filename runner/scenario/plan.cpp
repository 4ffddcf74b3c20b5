#include "scenario/plan.h"

#include <fmt/format.h>

#include <algorithm>
#include <functional>
#include <map>
#include <set>

#include "common/strings.h"
#include "knobs/value.h"
#include "scenario/plan_pooler.h"
#include "scenario/scenario.h"
#include "scenario/sweep.h"
#include "search/attribution.h"
#include "workload/registry.h"

namespace pgslow::scenario {

// Clients of a scenario that names none and whose workload has no default of its own.
constexpr int kDefaultScenarioClients = 8;

using knobs::overlay;

std::vector<knobs::Setting> resolve_stage_settings(const std::vector<PresetRef>& presets,
                                                   const std::vector<knobs::Setting>& settings,
                                                   const knobs::Catalog& catalog,
                                                   std::vector<ConfigError>& problems) {
  std::vector<knobs::Setting> out;
  std::vector<std::string> names;
  for (const auto& p : catalog.presets()) names.push_back(p.name);
  for (const auto& ref : presets) {
    const knobs::Preset* preset = catalog.find_preset(ref.name);
    if (preset == nullptr) {
      auto suggestion = closest_match(ref.name, names);
      problems.push_back(ConfigError{
          ref.where, fmt::format("unknown preset '{}'", ref.name),
          suggestion
              ? fmt::format("did you mean '{}'? `pgslow presets list` shows them all", *suggestion)
              : "`pgslow presets list` shows the presets"});
      continue;
    }
    try {
      out = overlay(std::move(out), catalog.expand(*preset));
    } catch (const InputError& e) {
      problems.insert(problems.end(), e.problems().begin(), e.problems().end());
    }
  }
  return overlay(std::move(out), settings);
}

namespace {

// A stage at a fixed rate under a workload with keying and think times: the driver waits them
// only in the closed loop and refuses the pair (driver::validate), so the plan refuses it first,
// at the line that sets the rate, before any stage is measured.
void check_think_time(const Scenario& scenario, const StageSpec& st, const LoadKnobs& knobs,
                      const results::LoadSettings& load, std::vector<ConfigError>& problems) {
  if (!scenario.workload.think_time || (load.rate <= 0 && load.rate_percent <= 0)) return;
  const SweepValue* rate = knobs.find(load.rate > 0 ? "rate" : "rate_percent");
  problems.push_back(ConfigError{
      rate != nullptr ? rate->where : st.where,
      fmt::format("stage '{}' runs at a fixed rate, but workload.think_time is on: keying and "
                  "think times are waited only in the closed loop, where a terminal's next "
                  "transaction follows its last",
                  st.name),
      "drop the stage's rate, or workload.think_time (a fixed rate without TPC-C's waits)"});
}

}  // namespace

void check_scenario_offline(const Scenario& scenario, const knobs::Catalog& catalog,
                            std::vector<ConfigError>& problems) {
  // (No name: the parser has said so already.)
  if (!scenario.workload.name.empty()) {
    try {
      workload::find_workload(scenario.workload.name);
    } catch (const InputError& e) {
      problems.push_back(ConfigError{scenario.workload.where, e.what(), ""});
    }
  }
  for (const auto& st : scenario.stages) {
    auto settings = resolve_stage_settings(st.presets, st.settings, catalog, problems);
    auto found = knobs::check_offline(settings, catalog);
    problems.insert(problems.end(), found.begin(), found.end());
    const LoadKnobs knobs = stage_load_knobs(st, catalog);
    check_think_time(scenario, st, knobs, apply_load({}, knobs), problems);
  }
}

std::string current_value(const knobs::ServerSettings& server, const std::string& name) {
  const knobs::ServerSetting* s = server.find(name);
  if (s == nullptr) return "(absent)";
  if (s->vartype == "integer" || s->vartype == "real") {
    auto unit = knobs::parse_base_unit(s->unit);
    if (unit && unit->kind != knobs::BaseUnit::Kind::kNone) {
      try {
        return knobs::format_with_unit(std::stod(s->setting), *unit);
      } catch (...) {
      }
    }
  }
  return s->setting;
}

namespace {

// The value a stage runs with, for comparing stages: the stage's setting, else the server's.
std::string value_in(const std::vector<knobs::Setting>& settings,
                     const knobs::ServerSettings& server, const std::string& name) {
  for (const auto& s : settings) {
    if (iequals(s.name, name)) return s.value;
  }
  return current_value(server, name);
}

const knobs::SettingVerdict* verdict_for(const std::vector<knobs::SettingVerdict>& verdicts,
                                         const std::string& name) {
  for (const auto& v : verdicts) {
    if (iequals(v.setting.name, name)) return &v;
  }
  return nullptr;
}

struct StageDraft {
  std::string name;
  std::string description;
  bool isolated = false;                  // compared with the baseline, not with the stage before
  std::vector<knobs::Setting> requested;  // the whole configuration asked for
  std::vector<knobs::Setting> own;        // what this stage itself adds (for skipped/warnings)
  results::LoadSettings load;
  bool attribute = false;
  bool sweep_point = false;
  std::map<std::string, std::string> sweep_values{};
  EnvelopeChange envelope{};
  bool same_as_baseline = false;  // an A/A stage (StageSpec::same_as_baseline)
};

}  // namespace

namespace {

// Clients the scenario leaves out: the workload's default (TPC-C's ten terminals per
// warehouse), else 8. Every path (run, lesson, sweep) reads them from the plan. The workload
// and its options (script files included) are checked before anything runs; so is the
// pooler a scenario or its sweep asks for.
void plan_workload(const Scenario& scenario, Plan& plan, std::vector<ConfigError>& problems) {
  try {
    const workload::Workload& w = workload::find_workload(scenario.workload.name);
    workload::WorkloadParams params = workload_params(plan.scenario);
    workload::resolve_clients(w, params, kDefaultScenarioClients);
    plan.scenario.workload.clients = params.clients;
    for (auto& p : w.validate(params)) {
      if (p.where.file.empty()) p.where = scenario.workload.where;
      problems.push_back(std::move(p));
    }
  } catch (const InputError& e) {
    problems.push_back(ConfigError{scenario.workload.where, e.what(), ""});
  }
  if (plan.scenario.workload.clients == 0)
    plan.scenario.workload.clients = kDefaultScenarioClients;  // an unknown workload
  check_scenario_pooler(scenario, problems);
}

// The stages to plan, as drafts: the baseline, then the scenario's stages in its mode.
std::vector<StageDraft> draft_stages(const Scenario& scenario, const knobs::Catalog& catalog,
                                     const results::LoadSettings& base_load,
                                     std::vector<ConfigError>& problems) {
  std::vector<StageDraft> drafts;
  drafts.push_back(StageDraft{"baseline", "the server as found", false, scenario.baseline,
                              scenario.baseline, base_load});
  std::vector<std::vector<knobs::Setting>> own_settings;
  std::vector<LoadKnobs> load_knobs;
  for (const auto& st : scenario.stages) {
    own_settings.push_back(resolve_stage_settings(st.presets, st.settings, catalog, problems));
    load_knobs.push_back(stage_load_knobs(st, catalog));
  }
  if (scenario.mode == Mode::kCumulative || scenario.mode == Mode::kBoth) {
    std::vector<knobs::Setting> acc = scenario.baseline;
    results::LoadSettings load = base_load;
    for (std::size_t i = 0; i < scenario.stages.size(); ++i) {
      acc = overlay(acc, own_settings[i]);
      load = apply_load(load, load_knobs[i]);
      check_pooler_knobs(scenario, scenario.stages[i], load_knobs[i], load, problems);
      check_think_time(scenario, scenario.stages[i], load_knobs[i], load, problems);
      drafts.push_back(StageDraft{
          scenario.stages[i].name, scenario.stages[i].description, false, acc, own_settings[i],
          load, scenario.stages[i].attribute.value_or(scenario.attribute),
          scenario.stages[i].sweep_point, scenario.stages[i].sweep_values,
          scenario.stages[i].envelope, scenario.stages[i].same_as_baseline});
    }
  }
  if (scenario.mode == Mode::kIsolated || scenario.mode == Mode::kBoth) {
    for (std::size_t i = 0; i < scenario.stages.size(); ++i) {
      auto alone = overlay(scenario.baseline, own_settings[i]);
      auto load = apply_load(base_load, load_knobs[i]);
      // (In mode both, the cumulative pass has checked it.)
      if (scenario.mode == Mode::kIsolated) {
        check_pooler_knobs(scenario, scenario.stages[i], load_knobs[i], load, problems);
        check_think_time(scenario, scenario.stages[i], load_knobs[i], load, problems);
      }
      std::string name = scenario.stages[i].name;
      if (scenario.mode == Mode::kBoth) {
        // The first cumulative stage already is the first stage alone.
        if (i == 0) continue;
        name += " (alone)";
      }
      drafts.push_back(
          StageDraft{name, scenario.stages[i].description, true, alone, own_settings[i], load,
                     scenario.stages[i].attribute.value_or(scenario.attribute),
                     scenario.stages[i].sweep_point, scenario.stages[i].sweep_values,
                     scenario.stages[i].envelope, scenario.stages[i].same_as_baseline});
    }
  }

  return drafts;
}

// A stage that asks for an attribution gets one when it changes two knobs or more: its units and
// the runs it is expected to take.
void size_attribution(PlannedStage& stage, const Scenario& scenario,
                      const knobs::Catalog& catalog) {
  if (stage.is_baseline || attribution_candidates(stage).size() < 2) return;
  stage.attribute = true;
  stage.attribution_units = static_cast<int>(
      search::attribution_units(attribution_candidates(stage), search::together_groups(catalog))
          .size());
  stage.attribution_runs =
      search::expected_attribution_runs(stage.attribution_units, scenario.measure.repeats,
                                        attribution_level_repeats(scenario.measure.repeats));
  // Two spare runs for a verdict near the threshold, and two more pairs (remainder, good)
  // when the stage without its cause is not plainly like the reference (docs/bisect.md,
  // "Rounds"); noisier than that, the stage says so instead of running on.
  stage.attribution_max_runs = stage.attribution_runs + 2 + 4;
}

// Draft `i` checked against the catalog and the live server: the settings it applies, the
// knobs skipped, the changes versus the stage it is compared with, whether it restarts, and
// its attribution's size. `previous_applied`: the settings of the stage measured before it.
PlannedStage plan_stage(const std::vector<StageDraft>& drafts, std::size_t i, const Plan& plan,
                        const std::vector<knobs::Setting>& previous_applied,
                        const Scenario& scenario, const knobs::Catalog& catalog,
                        const knobs::ServerSettings& server,
                        const std::function<void(const std::vector<ConfigError>&)>& add_problems) {
  const StageDraft& d = drafts[i];
  PlannedStage stage;
  stage.name = d.name;
  stage.description = d.description;
  stage.is_baseline = i == 0;
  stage.load = d.load;
  stage.sweep_point = d.sweep_point;
  stage.sweep_values = d.sweep_values;
  stage.same_as_baseline = d.same_as_baseline;
  stage.envelope = d.envelope;
  stage.verdicts = knobs::validate(d.requested, catalog, server);
  for (const auto& v : stage.verdicts) {
    for (const auto& p : v.problems) {
      if (p.severity == ConfigError::Severity::kError) add_problems({p});
    }
  }
  for (const auto& v : stage.verdicts) {
    const bool own = std::any_of(d.own.begin(), d.own.end(), [&](const knobs::Setting& s) {
      return iequals(s.name, v.setting.name) && s.value == v.setting.value;
    });
    if (v.verdict == knobs::Verdict::kSkipped) {
      if (own)
        stage.skipped.push_back(results::SkippedKnob{v.setting.name, v.setting.value, v.reason});
      continue;
    }
    if (v.verdict == knobs::Verdict::kError) continue;
    stage.settings.push_back(v.setting);
    if (own) {
      for (const auto& p : v.problems) {
        if (p.severity == ConfigError::Severity::kWarning) {
          stage.warnings.push_back(
              fmt::format("{} = {}: {}", v.setting.name, v.setting.value, p.message));
        }
      }
    }
  }
  // Changes versus the stage this one is compared with: the one measured before
  // (cumulative), or the baseline (isolated). The baseline compares with the server.
  const std::vector<knobs::Setting>& reference =
      d.isolated && !plan.stages.empty() ? plan.stages.front().settings : previous_applied;
  std::set<std::string> names;
  for (const auto& s : stage.settings) names.insert(to_lower(s.name));
  for (const auto& s : reference) names.insert(to_lower(s.name));
  for (const auto& name : names) {
    std::string before = value_in(reference, server, name);
    std::string after = value_in(stage.settings, server, name);
    if (before == after) continue;
    const knobs::ServerSetting* row = server.find(name);
    bool restart = row != nullptr && row->context == "postmaster";
    const knobs::SettingVerdict* v = verdict_for(stage.verdicts, name);
    if (v != nullptr) restart = v->verdict == knobs::Verdict::kRestart;
    stage.changes.push_back(
        results::KnobChange{name, before, after, restart ? "restart" : "reload"});
  }
  add_pooler_changes(scenario, d.isolated || i == 0 ? drafts.front().load : drafts[i - 1].load,
                     d.load, stage.changes);
  // A restart is needed when a postmaster-context value differs from the stage run before.
  for (const auto& s : stage.settings) names.insert(to_lower(s.name));
  for (const auto& s : previous_applied) names.insert(to_lower(s.name));
  for (const auto& name : names) {
    const knobs::ServerSetting* row = server.find(name);
    if (row != nullptr && row->context == "postmaster" &&
        value_in(previous_applied, server, name) != value_in(stage.settings, server, name)) {
      stage.needs_restart = true;
    }
  }
  stage.reference = d.isolated ? 0 : (i == 0 ? 0 : i - 1);
  if (d.attribute) size_attribution(stage, scenario, catalog);
  return stage;
}

// Identical configurations measured twice are allowed (a repeat), but say so. A sweep point
// of server.memory/cpus differs by its envelope alone.
void warn_repeated_configurations(Plan& plan) {
  for (std::size_t i = 1; i < plan.stages.size(); ++i) {
    if (plan.stages[i].same_as_baseline) continue;  // the same configuration on purpose
    if (knobs::same_settings(plan.stages[i].settings, plan.stages[i - 1].settings) &&
        plan.stages[i].load == plan.stages[i - 1].load &&
        plan.stages[i].envelope == plan.stages[i - 1].envelope) {
      plan.stages[i].warnings.push_back(
          "this stage runs the same configuration as the one before (every knob it sets was "
          "skipped or already set)");
    }
  }
}

// What measure_plan (experiment/plan_schedule.cpp) measures: every stage, and after each stage
// but the first the baseline again (interleaved reference), each with all repeats; a data reset
// (about 1 s) before every run; a restart or reload into each stage and, for the reference, back.
void estimate_time(const Scenario& scenario, Plan& plan) {
  const double per_run = scenario.measure.warmup_s + scenario.measure.duration_s;
  const double runs = scenario.measure.repeats * (per_run + 1.0);
  for (std::size_t i = 0; i < plan.stages.size(); ++i) {
    const PlannedStage& st = plan.stages[i];
    const double change = st.needs_restart ? 3.0 : 0.5;
    if (st.switchback) {
      // One run: a warm-up, the blocks (ending with the baseline's), a switch per block.
      const results::SwitchbackDesign& d = *st.switchback;
      const int blocks = 2 * d.max_pairs + 1;
      plan.estimated_seconds += scenario.measure.warmup_s + 1.0 + blocks * (d.block_s + 0.1);
      continue;
    }
    plan.estimated_seconds += runs + change;
    // The interleaved baseline after the stage; an attribution against the baseline usually
    // ends with one of its own (run.cpp takes it instead), counted in attribution_runs.
    const bool attribution_ends_with_baseline = st.attribution_runs > 0 && st.reference == 0;
    if (i > 0 && !attribution_ends_with_baseline) plan.estimated_seconds += runs + change;
    // A stage alternating with the baseline (experiment/run.cpp) switches configuration for every
    // repeat.
    if (i > 0 && st.reference == 0 && st.attribution_runs == 0)
      plan.estimated_seconds += 2 * (scenario.measure.repeats - 1) * change;
    // Until its headline is resolved it may take more pairs (plan_schedule.cpp); about half of
    // those it may take, as a rule.
    if (i > 0 && st.reference == 0 && st.attribution_runs == 0 && scenario.measure.repeats >= 2)
      plan.estimated_seconds +=
          (alternating_looks_of(scenario.measure).max_pairs - scenario.measure.repeats) *
          (per_run + 1.0 + change);
    if (st.attribution_runs == 0) continue;
    bool restarts =
        std::any_of(st.changes.begin(), st.changes.end(),
                    [](const results::KnobChange& c) { return c.apply_by == "restart"; });
    // Each run resets the data; about half of the search's configurations switch the
    // restart-needing knobs (they share chunks, see bisector.cpp).
    double seconds =
        st.attribution_runs * (per_run + 1.0) + (restarts ? 1.5 : 0.5) * st.attribution_runs;
    plan.attribution_runs += st.attribution_runs;
    plan.attribution_seconds += seconds;
    plan.estimated_seconds += seconds;
  }
  // The last reference's top-up to kMinBaselineRuns (experiment/run.cpp), when nothing else reaches
  // it.
  const int baseline_runs = scenario.measure.repeats * static_cast<int>(plan.stages.size());
  if (plan.stages.size() >= 2 && plan.attribution_runs == 0 && baseline_runs < kMinBaselineRuns)
    plan.estimated_seconds += (kMinBaselineRuns - baseline_runs) * (per_run + 1.0);
}

}  // namespace

Plan make_plan(const Scenario& scenario, const knobs::Catalog& catalog,
               const knobs::ServerSettings& server) {
  std::vector<ConfigError> problems;
  Plan plan;
  plan.scenario = scenario;
  plan.server_major = server.major;
  plan.server_version =
      fmt::format("{}.{}", server.version_num / 10000, server.version_num % 10000);
  plan_workload(scenario, plan, problems);

  results::LoadSettings base_load;
  base_load.clients = plan.scenario.workload.clients;
  const std::vector<StageDraft> drafts = draft_stages(scenario, catalog, base_load, problems);

  // Validate every configuration; report each problem once (stages share settings).
  std::set<std::string> seen;
  auto add_problems = [&](const std::vector<ConfigError>& found) {
    for (const auto& p : found) {
      if (seen.insert(p.str()).second) problems.push_back(p);
    }
  };
  std::vector<knobs::Setting> previous_applied;
  for (std::size_t i = 0; i < drafts.size(); ++i) {
    PlannedStage stage =
        plan_stage(drafts, i, plan, previous_applied, scenario, catalog, server, add_problems);
    if (!stage.is_baseline) {
      choose_design(stage, plan.stages.front(), scenario, catalog);
      stage.own_axes = own_axes(stage, plan.stages.front().load, catalog);
    }
    previous_applied = stage.settings;
    plan.stages.push_back(std::move(stage));
  }
  warn_repeated_configurations(plan);
  if (has_errors(problems)) throw InputError(problems);
  estimate_time(scenario, plan);
  return plan;
}

double estimate_seconds_offline(const Scenario& scenario, const knobs::Catalog& catalog) {
  std::vector<ConfigError> ignored;  // `pgslow check` names them
  Plan plan;
  plan.scenario = scenario;
  results::LoadSettings base_load;
  base_load.clients =
      scenario.workload.clients > 0 ? scenario.workload.clients : kDefaultScenarioClients;
  const std::vector<StageDraft> drafts = draft_stages(scenario, catalog, base_load, ignored);
  for (std::size_t i = 0; i < drafts.size(); ++i) {
    const StageDraft& d = drafts[i];
    PlannedStage stage;
    stage.name = d.name;
    stage.is_baseline = i == 0;
    stage.load = d.load;
    stage.envelope = d.envelope;
    stage.settings = d.requested;
    stage.reference = d.isolated ? 0 : (i == 0 ? 0 : i - 1);
    // The changes versus the stage it is compared with, values as written, each by reload.
    const std::vector<knobs::Setting> none;
    const std::vector<knobs::Setting>& reference =
        i == 0 ? none : plan.stages[stage.reference].settings;
    const knobs::ServerSettings no_server;
    std::set<std::string> names;
    for (const auto& s : stage.settings) names.insert(to_lower(s.name));
    for (const auto& s : reference) names.insert(to_lower(s.name));
    for (const auto& name : names) {
      const std::string before = value_in(reference, no_server, name);
      const std::string after = value_in(stage.settings, no_server, name);
      if (before != after)
        stage.changes.push_back(results::KnobChange{name, before, after, "reload"});
    }
    add_pooler_changes(scenario, d.isolated || i == 0 ? drafts.front().load : drafts[i - 1].load,
                       d.load, stage.changes);
    if (d.attribute) size_attribution(stage, scenario, catalog);
    if (!stage.is_baseline) choose_design(stage, plan.stages.front(), scenario, catalog);
    plan.stages.push_back(std::move(stage));
  }
  estimate_time(scenario, plan);
  return plan.estimated_seconds;
}

int attribution_level_repeats(int repeats) {
  return std::max(2, repeats);
}

std::vector<search::Candidate> attribution_candidates(const PlannedStage& stage) {
  std::vector<search::Candidate> out;
  for (const auto& c : stage.changes) {
    // A PgBouncer setting stays the stage's through its attribution: the search applies
    // server settings.
    if (c.apply_by == results::kApplyByPooler) continue;
    search::Candidate k;
    k.change.name = c.name;
    k.change.value = c.new_value;
    k.good_value = c.old_value;
    k.server_value = c.old_value;
    k.needs_restart = c.apply_by == "restart";
    out.push_back(std::move(k));
  }
  return out;
}

results::PlanResult plan_result(const Plan& plan) {
  const Scenario& s = plan.scenario;
  results::PlanResult r;
  r.scenario = s.name;
  r.file = s.file.string();
  r.description = s.description;
  r.server_version = plan.server_version;
  r.workload = s.workload.name;
  r.scale = s.workload.scale;
  r.clients = s.workload.clients;
  r.warmup_s = s.measure.warmup_s;
  r.duration_s = s.measure.duration_s;
  r.repeats = s.measure.repeats;
  r.mode = std::string(mode_name(s.mode));
  for (const PlannedStage& st : plan.stages) {
    results::PlanStage& shown = r.stages.emplace_back(st);  // the part the plan shows
    if (!st.envelope.empty()) shown.envelope_text = st.envelope.over({}).describe();
  }
  r.estimated_seconds = plan.estimated_seconds;
  r.attribution_runs = plan.attribution_runs;
  r.attribution_seconds = plan.attribution_seconds;
  return r;
}

}  // namespace pgslow::scenario
