#pragma once
// Each knob's part in a stage with several knobs (docs/reading-the-report.md, "Which knob did
// it"). Group testing first: bisect's delta debugging over the stage's knobs finds the
// culprit groups with cached subsets, and every knob outside them is reported with the group
// ("no measurable effect (could see ±x%)") without a run of its own. Then, per culprit: its effect
// alone against the reference, the stage without it (its share), and whether it acts only with
// another knob. `pgslow run --attribute` and `pgslow bisect --isolate` both call attribute();
// the search's options say which metric its samples are (Options::metric).
//
//   SimulatedServer sim(...);            // or any Measurer (experiment/lab_measurer.h)
//   AttributionOptions o;
//   Attributed a = attribute(sim, candidates, o);
//   a.attribution.headline              // "stage: 15x slower; commit_delay = 10000 is the cause"

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "knobs/catalog.h"
#include "results/model.h"
#include "search/bisector.h"
#include "search/measurer.h"

namespace pgslow::search {

// What a configuration's runs showed beyond TPS, when the measurer knows it.
struct Observation {
  std::uint64_t transactions = 0;  // over every run of the configuration
  // Of its latest run, normalised as the report compares stages (per transaction, per minute).
  std::map<std::string, double> evidence;
  // Every run of it, in order: its axes (results/axes.h) against the reference's.
  std::vector<results::Measurement> runs = {};
};

struct AttributionOptions {
  // The search's options (levels, repeats, min_effect, metric); known_good/bad reused, samples of
  // that metric.
  Options search;
  std::string stage = "bad";       // for the headline
  std::string reference = "good";  // what the effects compare with
  // Knobs the catalog says act only together (commit_delay with commit_siblings): each group
  // is one unit of the search and of the report, never split.
  std::vector<std::vector<std::string>> together;
  // Evidence keys worth showing per knob (the catalog's `watch`), for EvidenceMove.
  std::map<std::string, std::vector<std::string>> watch;
  // The runs of a configuration (good plus these changes) as the measurer recorded them;
  // unset: transaction counts and evidence are left empty (the simulated server).
  std::function<Observation(const std::vector<Setting>&)> observe;
  // At most this many runs (0: no limit). Noise near the search's threshold costs repeats and
  // finer splits; past the budget the stage is reported "not attributed" with the noise that
  // stopped it, instead of a run that never ends.
  int max_runs = 0;
};

struct Attributed {
  Result search;  // bisect's result (culprit groups, every run)
  results::Attribution attribution;
  std::vector<double> good_samples;  // every sample of the reference, for the next stage
};

// The catalog's `acts_with` pairs as groups of knobs (AttributionOptions::together).
std::vector<std::vector<std::string>> together_groups(const knobs::Catalog& catalog);

// Units of attribution: the candidates with every `together` group merged into one candidate
// named "a + b" (value "va, vb"). Exposed for `pgslow plan`'s cost estimate.
std::vector<Candidate> attribution_units(const std::vector<Candidate>& candidates,
                                         const std::vector<std::vector<std::string>>& together);

// Runs the search and the per-knob measurements. The Measurer sees the original knobs (a
// merged unit is expanded to its members).
Attributed attribute(Measurer& measurer, const std::vector<Candidate>& candidates,
                     AttributionOptions options);

// The extra runs an attribution of `units` units is expected to cost beyond the stage's own
// `repeats`: levels topped up to `level_repeats`, two tests per halving, the remainder, and
// good measured again around the remainder (drift control).
int expected_attribution_runs(int units, int repeats, int level_repeats);

}  // namespace pgslow::search
