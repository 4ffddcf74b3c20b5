#include "experiment/cliff_experiment.h"

#include <fmt/format.h>

#include <algorithm>

#include "common/errors.h"
#include "common/strings.h"
#include "experiment/lab_measurer.h"
#include "knobs/value.h"
#include "results/metric.h"
#include "results/stats.h"
#include "results/summary.h"
#include "scenario/sweep.h"
#include "search/measurer.h"
#include "server/envelope.h"

namespace pgslow::experiment {

namespace {

// The evidence that says why a value hurts: a sort or hash spilling (temp files and bytes),
// the cache missing (hit ratio).
const std::vector<std::string> kCliffEvidence = {"temp_files", "temp_bytes", "buffer_hit_ratio"};

// Runs the search on `lab` (prepared) from `base` (the settings, load and timing every point
// starts from); the configuration is the lab's to restore.
results::CliffResult run_cliff(Lab& lab, const Trial& base, const search::CliffSpace& space,
                               const CliffExperimentOptions& options) {
  LabMeasurer measurer(lab, base, options.search.metric, "cliff " + space.knob);
  std::vector<std::string> evidence_keys = kCliffEvidence;
  for (const auto& k : options.evidence)
    if (std::find(evidence_keys.begin(), evidence_keys.end(), k) == evidence_keys.end())
      evidence_keys.push_back(k);
  std::vector<int> calls;
  results::CliffResult r = search::find_cliff(measurer, space, options.search, &calls);

  // Each Measurer call is one run of one point (or the baseline, -1): gather their figures.
  const auto& results = measurer.results();
  auto fill = [&](results::CliffPoint& p, int index) {
    std::vector<const results::StageResult*> runs;
    for (std::size_t c = 0; c < calls.size() && c < results.size(); ++c)
      if (calls[c] == index) runs.push_back(&results[c]);
    std::vector<double> tps;
    std::vector<double> p99;
    std::vector<std::pair<double, const results::StageResult*>> by_tps;
    for (const auto* s : runs) {
      if (!s->error.empty() && p.error.empty()) p.error = s->error;
      for (const auto& m : s->repeats) {
        p.transactions += m.committed + m.rolled_back;
        tps.push_back(m.tps);
        p99.push_back(m.latency.p99_us);
        by_tps.emplace_back(m.tps, s);
      }
    }
    p.tps = results::median(tps);
    p.p99_us = results::median(p99);
    if (by_tps.empty()) return;
    // The median run's evidence, as a stage of separate runs reports it.
    std::sort(by_tps.begin(), by_tps.end(),
              [](const auto& a, const auto& b) { return a.first < b.first; });
    const results::StageResult& median = *by_tps[by_tps.size() / 2].second;
    for (const auto& key : evidence_keys)
      if (auto v = results::normalised_evidence(median, key)) p.evidence[key] = *v;
    p.waits = median.waits;
  };
  fill(r.baseline, -1);
  // Each call is one run: its measurement, for every axis of each point.
  std::vector<const results::Measurement*> runs;
  for (const auto& s : results) runs.push_back(s.repeats.empty() ? nullptr : &s.repeats.front());
  for (std::size_t i = 0; i < r.points.size(); ++i) {
    fill(r.points[i], static_cast<int>(i));
    r.points[i].effect.transactions = r.points[i].transactions;
    r.points[i].axes = results::cliff_point_axes(runs, calls, static_cast<int>(i), r.confidence);
  }
  return r;
}

// The problems of `settings` against the live server, a setting it would skip (not in this
// version, ...) counted as an error: a search must run the values it names.
void add_refusals(const std::vector<knobs::Setting>& settings, const knobs::Catalog& catalog,
                  const knobs::ServerSettings& live, std::vector<ConfigError>& problems) {
  const auto verdicts = knobs::validate(settings, catalog, live);
  for (const ConfigError& p : knobs::all_problems(verdicts)) problems.push_back(p);
  for (const auto& v : verdicts) {
    if (v.verdict == knobs::Verdict::kSkipped)
      problems.push_back({v.setting.where, fmt::format("{}: {}", v.setting.name, v.reason), "",
                          ConfigError::Severity::kError});
  }
}

// The machine's size as the searched value: server.memory in kB (written "512MB"), server.cpus
// as a real number. The server must be in an envelope already (its group, where each point's
// limit is set): without one there is nothing to shrink.
search::CliffSpace envelope_space(const CliffExperimentOptions& options,
                                  const server::Envelope& envelope) {
  const bool memory = iequals(options.knob, "server.memory");
  const std::string option = memory ? "--memory" : "--cpus";
  const bool in_group = memory ? envelope.memory_bytes != 0 : envelope.cpus != 0;
  if (!in_group && options.from.empty())
    throw InputError(fmt::format(
        "KNOB: a search of {} needs the server in an envelope of that size to start from: give "
        "{} (e.g. {} {}) on the managed cluster (docs/envelope.md)",
        options.knob, option, option, memory ? "512MB" : "2"));
  search::CliffSpace space;
  space.knob = memory ? "server.memory" : "server.cpus";
  space.integer = memory;
  if (memory) space.unit = knobs::parse_base_unit("kB").value_or(knobs::BaseUnit{});
  std::vector<ConfigError> problems;
  auto parse = [&](const std::string& text, const char* name) -> double {
    std::string why;
    if (memory) {
      if (auto v = server::parse_envelope_memory(text, &why)) {
        if (*v == server::Envelope::kUnlimitedMemory || *v % 1024 != 0)
          why = "give whole kilobytes, e.g. 512MB";
        else
          return static_cast<double>(*v / 1024);
      }
    } else if (auto v = server::parse_envelope_cpus(text, &why)) {
      return *v;
    }
    problems.push_back({{name, 0, 0},
                        fmt::format("{} = {} is refused: {}", space.knob, text, why),
                        "",
                        ConfigError::Severity::kError});
    return 0;
  };
  const std::string from_text =
      !options.from.empty()
          ? options.from
          : (memory ? knobs::format_with_unit(static_cast<double>(envelope.memory_bytes / 1024),
                                              space.unit)
                    : fmt::format("{:g}", envelope.cpus));
  space.from = parse(from_text, "--from");
  space.to = parse(options.to, "--to");
  if (has_errors(problems)) throw InputError(problems);
  if (!in_group)
    throw InputError(fmt::format(
        "KNOB: a search of {} needs the server in an envelope (its group) to set each point's "
        "limit in: give {} {} as well (docs/envelope.md)",
        space.knob, option, from_text));
  return space;
}

// Every point sets the searched knob itself: a fixed setting of it (--set, a lesson's
// `settings:`) would be dropped without a word, so it is refused.
void refuse_fixed_searched_knob(const CliffExperimentOptions& options, const std::string& knob) {
  std::vector<ConfigError> problems;
  for (const knobs::Setting& s : options.settings) {
    if (!iequals(s.name, knob)) continue;
    problems.push_back({s.where.file.empty() ? SourceLocation{"--set", 0, 0} : s.where,
                        fmt::format("{}={}: {} is the knob the search steps through; every run "
                                    "sets it to the point's value, so a fixed value of it would "
                                    "be dropped",
                                    s.name, s.value, knob),
                        fmt::format("start the search there instead: --from {}", s.value),
                        ConfigError::Severity::kError});
  }
  if (has_errors(problems)) throw InputError(problems);
}

search::CliffSpace space_of(const CliffExperimentOptions& options, const knobs::Catalog& catalog,
                            const knobs::ServerSettings& live, const server::Envelope& envelope);

}  // namespace

search::CliffSpace cliff_space(const CliffExperimentOptions& options, const knobs::Catalog& catalog,
                               const knobs::ServerSettings& live,
                               const server::Envelope& envelope) {
  search::CliffSpace space = space_of(options, catalog, live, envelope);
  refuse_fixed_searched_knob(options, space.knob);
  return space;
}

namespace {

search::CliffSpace space_of(const CliffExperimentOptions& options, const knobs::Catalog& catalog,
                            const knobs::ServerSettings& live, const server::Envelope& envelope) {
  if (scenario::is_envelope_dimension(to_lower(options.knob))) {
    search::CliffSpace space = envelope_space(options, envelope);
    if (space.from == space.to)
      throw InputError(
          fmt::format("--from and --to are the same value of {} ({}): nothing to search",
                      space.knob, search::cliff_value_text(space, space.from)));
    (void)search::cliff_grid(space, options.search.resolution);
    return space;
  }
  const knobs::ServerSetting* ss = live.find(options.knob);
  if (ss == nullptr)
    throw InputError(fmt::format(
        "KNOB: PostgreSQL {} has no parameter '{}' (see `pgslow knobs` for the ones pgslow "
        "knows)",
        live.major, options.knob));
  const auto type = knobs::parse_vartype(ss->vartype);
  if (type != knobs::VarType::kInteger && type != knobs::VarType::kReal)
    throw InputError(fmt::format(
        "KNOB: {} is a {} parameter; a cliff search steps through numbers (an integer or real "
        "parameter such as work_mem or random_page_cost)",
        ss->name, ss->vartype));
  std::vector<ConfigError> problems;
  const knobs::BaseUnit unit = knobs::parse_base_unit(ss->unit).value_or(knobs::BaseUnit{});
  // No --from: the server's current value (pg_settings.setting, in its base unit).
  const std::string from_text =
      !options.from.empty()
          ? options.from
          : knobs::format_with_unit(knobs::parse_value(ss->setting, *type, unit).number, unit);
  std::vector<knobs::Setting> settings{
      {ss->name, from_text, {"--from", 0, 0}},
      {ss->name, options.to, {"--to", 0, 0}},
  };
  // Each value alone: both set at once would read as one parameter set twice.
  for (const auto& s : settings) add_refusals({s}, catalog, live, problems);
  if (has_errors(problems)) throw InputError(problems);

  search::CliffSpace space;
  space.knob = ss->name;
  space.integer = type == knobs::VarType::kInteger;
  space.unit = unit;
  const knobs::ParsedValue from = knobs::parse_value(from_text, *type, space.unit);
  const knobs::ParsedValue to = knobs::parse_value(options.to, *type, space.unit);
  space.from = from.number;
  space.to = to.number;
  if (space.from == space.to)
    throw InputError(fmt::format("--from and --to are the same value of {} ({}): nothing to search",
                                 ss->name, from_text));
  // The grid's own checks (a log scale needs positive values), before anything changes.
  (void)search::cliff_grid(space, options.search.resolution);
  return space;
}

}  // namespace

results::CliffResult run_cliff_experiment(const CliffExperiment& e, server::ServerControl& server,
                                          const knobs::Catalog& catalog, Progress& progress) {
  std::vector<ConfigError> problems;
  const search::CliffOptions& search = e.options.search;
  if (search.repeats < 3)
    add_option_problem(
        problems,
        "--repeats must be at least 3: a point's interval needs three runs against the "
        "baseline");
  if (search.max_looks < 1) add_option_problem(problems, "--max-looks must be at least 1");
  if (!(search.resolution > 1))
    add_option_problem(
        problems, "--resolution must be above 1: the factor between neighbouring values (2, 1.25)");
  const CheckedLoad checked = check_search_load(e, problems);
  const workload::WorkloadParams& params = checked.params;
  if (has_errors(problems)) throw InputError(problems);
  search::require_measurable(search.metric, server);

  // Validation first: nothing changes on the server before the knob and both values are
  // known to be in its range.
  const knobs::ServerSettings live = read_live_settings(server);
  const search::CliffSpace space = cliff_space(e.options, catalog, live, server.current_envelope());
  // The settings every run has: checked like a stage's, before anything changes.
  std::vector<ConfigError> fixed;
  add_refusals(e.options.settings, catalog, live, fixed);
  if (has_errors(fixed)) throw InputError(fixed);
  const auto grid = search::cliff_grid(space, search.resolution);
  const std::string workload_text =
      fmt::format("{} at scale {}, {} clients, {:g} s runs after {:g} s of warm-up",
                  e.scripts.empty() ? e.workload : "script " + join(e.scripts, ", "), params.scale,
                  params.clients, e.duration_s, e.warmup_s);
  const std::string from_text = search::cliff_value_text(space, space.from);
  progress.note(fmt::format(
      "cliff {} from {} to {} on {} (PostgreSQL {}): {} steps of at most {:g}x, at most {} "
      "points of {} runs each between runs of {}; {}, judged by {}",
      space.knob, from_text, e.options.to, server.describe(), live.major, grid.size() - 1,
      search.resolution, search::cliff_max_points(static_cast<int>(grid.size()) - 1),
      search.repeats, from_text, workload_text, results::metric_name(search.metric)));

  LabSession lab(server, catalog, *checked.workload, params, search_lab_options(e, "pgslow cliff"),
                 progress);
  lab.prepare();  // the template, once; a matching one is reused
  // An error or Ctrl-C in the search: the session's destructor restores before it reaches the
  // user.
  results::CliffResult result =
      run_cliff(lab, search_trial(e, e.options.settings), space, e.options);
  lab.finish();
  result.workload = workload_text;
  result.server = fmt::format("{} (PostgreSQL {})", server.describe(), live.major);
  return result;
}

}  // namespace pgslow::experiment
