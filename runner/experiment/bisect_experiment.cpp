#include "experiment/bisect_experiment.h"

#include <fmt/format.h>

#include <algorithm>

#include "common/strings.h"
#include "experiment/lab_measurer.h"
#include "experiment/lab_session.h"
#include "knobs/validate.h"
#include "results/metric.h"
#include "results/summary.h"
#include "search/attribution.h"
#include "search/bisector.h"
#include "search/measurer.h"
#include "search/sources.h"

namespace pgslow::experiment {
namespace {

// One line per measurer call: "run  12  search r1  good + a, b   2 runs  1,234 TPS  fast  8.1 s".
std::string run_line(const search::RunRecord& r, std::size_t candidates,
                     const results::Metric& metric) {
  std::string what = r.knobs.empty()                ? "good"
                     : r.knobs.size() == candidates ? fmt::format("bad ({} changes)", candidates)
                     : r.knobs.size() <= 3          ? "good + " + join(r.knobs, ", ")
                                           : fmt::format("good + {} changes", r.knobs.size());
  return fmt::format("run {:>3}  {:<9} {:<44} {:>3} run{}  {:>16}  {:<9} {:.1f} s{}", r.number,
                     r.purpose, what, r.new_runs, r.new_runs == 1 ? " " : "s",
                     results::format_metric_value(metric, r.tps_level),
                     search::to_string(r.verdict), r.seconds, r.restart ? "  (restart)" : "");
}

std::vector<ConfigError> option_problems(const BisectExperiment& e) {
  std::vector<ConfigError> problems;
  if (e.repeats < 2)
    add_option_problem(problems,
                       "--repeats must be at least 2: the noise needs two runs of each level");
  if (e.max_repeats < 1) add_option_problem(problems, "--max-repeats must be at least 1");
  if (e.min_effect <= 0 || e.min_effect >= 1)
    add_option_problem(problems, "--min-effect must be a percentage between 0 and 100");
  return problems;
}

// The defaults that differ between the two versions, as good and bad for the server under
// test; the list (and what cannot be compared) printed before any run.
search::DefaultsComparison compare_versions(const BisectExperiment& e,
                                            const knobs::ServerSettings& live, Progress& progress) {
  if (e.good_version == 0 || e.bad_version == 0)
    throw InputError("--good-version and --bad-version go together: give both majors");
  if (e.good_version == e.bad_version)
    throw InputError(
        fmt::format("--good-version and --bad-version are both {}: give two "
                    "different majors",
                    e.good_version));
  progress.note(fmt::format("reading the built-in defaults of PostgreSQL {} and {}", e.good_version,
                            e.bad_version));
  const auto good_described = search::describe_version(e.good_version);
  const auto bad_described = search::describe_version(e.bad_version);
  // Numbers and booleans only for the settings both have (one `postgres -C` each).
  std::vector<std::string> both;
  for (const auto& [name, s] : good_described)
    if (bad_described.count(name) != 0) both.push_back(name);
  const search::DefaultsComparison c = search::compare_defaults(
      e.good_version, search::read_version_defaults(e.good_version, both), e.bad_version,
      search::read_version_defaults(e.bad_version, both), live);
  progress.note(
      fmt::format("{} built-in default{} differ between PostgreSQL {} and {} and apply "
                  "to this server (PostgreSQL {}):",
                  c.differing.size(), c.differing.size() == 1 ? "" : "s", e.good_version,
                  e.bad_version, live.major));
  std::size_t width = 0;
  for (const auto& d : c.differing) width = std::max(width, d.name.size());
  for (const auto& d : c.differing)
    progress.note(fmt::format("  {:<{}}  {} -> {}", d.name, width, d.good_value, d.bad_value));
  progress.note(fmt::format("{} setting{} not comparable (listed with the result)",
                            c.not_comparable.size(), c.not_comparable.size() == 1 ? "" : "s"));
  return c;
}

}  // namespace

void add_bisect_axes(search::Result& result, const std::vector<search::Candidate>& candidates,
                     const LabMeasurer& measurer) {
  auto settings_of = [&](const std::vector<std::string>& names) {
    std::vector<knobs::Setting> out;
    for (const auto& c : candidates)
      for (const auto& n : names)
        if (c.change.name == n) out.push_back(c.change);
    return out;
  };
  const std::vector<results::Measurement> good = measurer.observe({}).runs;
  // Changes that are not all candidates by name (a merged unit "a + b") are not compared:
  // without them the configuration would be good itself.
  auto against_good = [&](const std::vector<knobs::Setting>& changes,
                          std::size_t names = 0) -> std::vector<results::AxisEffect> {
    if (changes.empty() || changes.size() < names) return {};
    return results::compare_configuration_axes(measurer.observe(changes).runs, good);
  };
  std::vector<knobs::Setting> bad;
  for (const auto& c : candidates) bad.push_back(c.change);
  result.axes = against_good(bad);
  std::vector<std::string> blamed;
  for (const auto& g : result.culprits) blamed.insert(blamed.end(), g.knobs.begin(), g.knobs.end());
  std::vector<knobs::Setting> remaining;
  for (const auto& c : candidates)
    if (std::find(blamed.begin(), blamed.end(), c.change.name) == blamed.end())
      remaining.push_back(c.change);
  if (result.remaining_tps && !blamed.empty()) result.remaining_axes = against_good(remaining);
  for (auto& g : result.culprits) {
    g.axes = against_good(settings_of(g.knobs), g.knobs.size());
    for (auto& solo : g.solo) solo.axes = against_good(settings_of({solo.knob}), 1);
  }
}

search::Result run_bisect(const BisectExperiment& e, server::ServerControl& server,
                          const knobs::Catalog& catalog, Progress& progress) {
  std::vector<ConfigError> problems = option_problems(e);
  const CheckedLoad checked = check_search_load(e, problems);
  const workload::WorkloadParams& params = checked.params;
  if (has_errors(problems)) throw InputError(problems);
  search::require_measurable(e.metric, server);

  // Validation first: nothing changes on the server before every candidate has a verdict.
  const knobs::ServerSettings live = read_live_settings(server);
  search::Configuration good = e.good;
  search::Configuration bad = e.bad;
  std::vector<search::Excluded> left_out = e.left_out;
  if (e.good_version != 0 || e.bad_version != 0) {
    const search::DefaultsComparison versions = compare_versions(e, live, progress);
    good = versions.good.configuration;
    bad = versions.bad.configuration;
    left_out.insert(left_out.end(), versions.not_comparable.begin(), versions.not_comparable.end());
  }
  search::Difference diff = search::difference(good, bad, catalog, live);
  int restart_candidates = 0;
  for (const auto& c : diff.candidates) restart_candidates += c.needs_restart ? 1 : 0;
  progress.note(fmt::format(
      "bisect {} -> {} on {} (PostgreSQL {}): {} candidate change{} ({} need a restart), {} not "
      "bisected, {} identical; {} at scale {}, {} clients{}, {:.0f} s runs, judged by {}, looking "
      "for what made it {}",
      good.label, bad.label, server.describe(), live.major, diff.candidates.size(),
      diff.candidates.size() == 1 ? "" : "s", restart_candidates,
      diff.excluded.size() + left_out.size(), diff.identical.size(), e.workload, params.scale,
      params.clients, e.rate > 0 ? fmt::format(" at {:g} TPS", e.rate) : "", e.duration_s,
      results::metric_name(e.metric), results::worse_word(e.metric)));

  search::Options bo;
  bo.level_repeats = e.repeats;
  bo.max_repeats = std::max(e.max_repeats, e.repeats);
  bo.min_effect = e.min_effect;
  bo.metric = e.metric;
  const std::size_t n = diff.candidates.size();
  bo.on_run = [&](const search::RunRecord& r) { progress.note(run_line(r, n, e.metric)); };

  search::Result result;
  int live_restarts = -1;
  if (diff.candidates.empty()) {
    // Nothing differs: no run is needed to say so.
    class NoServer final : public search::Measurer {
      std::vector<double> measure(const std::vector<knobs::Setting>&, int) override {
        throw RuntimeError("internal: a bisect with no candidates measured something");
      }
    } none;
    result = search::Bisector(none, {}, bo).run();
  } else {
    LabSession lab(server, catalog, *checked.workload, params,
                   search_lab_options(e, "pgslow bisect"), progress);
    LabMeasurer measurer(lab, search_trial(e, diff.good), e.metric, "bisect");
    lab.prepare();  // the template, once; a matching one is reused
    if (e.isolate) {
      // Each change's part: the same attribution `pgslow run --attribute` makes.
      search::AttributionOptions ao;
      ao.search = bo;
      ao.stage = bad.label;
      ao.reference = good.label;
      ao.together = search::together_groups(catalog);
      for (const auto& k : catalog.knobs()) ao.watch[k.name] = k.watch;
      ao.observe = [&measurer](const std::vector<knobs::Setting>& changes) {
        return measurer.observe(changes);
      };
      search::Attributed at = search::attribute(measurer, diff.candidates, ao);
      result = std::move(at.search);
      result.attribution = std::move(at.attribution);
    } else {
      result = search::Bisector(measurer, diff.candidates, bo).run();
    }
    add_bisect_axes(result, diff.candidates, measurer);
    // An error or Ctrl-C above: the session's destructor restores before it reaches the user.
    lab.finish();
    live_restarts = lab.restarts();
    if (measurer.rejected() > 0)
      result.conclusion +=
          fmt::format(" ({} configuration{} rejected by the server counted as the worst outcome)",
                      measurer.rejected(), measurer.rejected() == 1 ? "" : "s");
  }
  result.good_label = good.label;
  result.bad_label = bad.label;
  result.excluded = left_out;
  result.excluded.insert(result.excluded.end(), diff.excluded.begin(), diff.excluded.end());
  result.identical = diff.identical;
  // The restarts the server really made (the Applier restarts only when a postmaster-context
  // value differs from what is running), rather than the search's own estimate.
  if (live_restarts >= 0) result.restarts = live_restarts;
  return result;
}

}  // namespace pgslow::experiment
