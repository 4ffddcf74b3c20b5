#pragma once
// How far a knob can go from A towards B before it hurts (`pgslow cliff`, docs/cliff.md).
//
// The values from A to B form a grid in log scale, each value at most `resolution` times the
// next (whole base units for an integer knob, duplicates removed). Assuming the effect is
// monotonic along the grid, the search measures B first (safe there: no cliff in the range),
// then bisects between the last safe value (A to start with) and the first harmful one, so a
// grid of S steps costs at most ceil(log2(S)) + 1 points (at most floor(log2(S)) + 2), and
// measurements go where the curve bends rather than evenly.
//
// Each point's runs alternate with runs of the baseline (A): B P B P ... B, and its effect is
// each point run against the mean of the baseline runs on either side of it
// (results::alternating_interval), so the machine's drift and bursts of other load cancel. The
// last baseline run of one point is the first of the next. A point is harmful when its whole
// interval lies on the worse side; safe when it includes no change or lies on the better
// side; a point that looks worse at a looser confidence but not at the stated one is measured
// again (at most max_looks looks). The noise is pooled over the points (it is the machine's),
// and the confidence is spread over every look the search may make, so a whole search is
// misled by chance at most 5% of the time, not each point.
//
//   SimulatedServer sim(...);             // or LabMeasurer over a experiment::LabSession
//   results::CliffResult r = find_cliff(sim, space, options);

#include <functional>
#include <string>
#include <vector>

#include "knobs/value.h"
#include "results/cliff.h"
#include "search/measurer.h"

namespace pgslow::search {

// The values a search may visit.
struct CliffSpace {
  std::string knob;
  double from = 0;       // the baseline, in the knob's base unit (kB for work_mem)
  double to = 0;         // the far end
  bool integer = true;   // whole base units only (pg_settings.vartype integer)
  knobs::BaseUnit unit;  // how values are written ("2MB")
};

struct CliffOptions {
  results::Metric metric = results::Metric::kTps;  // what the Measurer's samples are
  double resolution = 2;                           // factor between neighbouring grid values (> 1)
  int repeats = 3;    // runs of a point per look, each followed by a baseline run (>= 3)
  int max_looks = 2;  // an uncertain point is measured again, up to this many looks
  // Of the search as a whole: each point's look gets an equal share of 1 - confidence.
  double confidence = 0.95;
  double min_noise = 0.01;  // floor of the per-run noise (log scale), as bisect's
  // "Uncertain": the point's interval at this looser confidence lies on the worse side.
  double suggestive_confidence = 0.60;
  std::function<void(const results::CliffPoint&)> on_point;  // progress, after each look
};

// The grid from `from` to `to` (both included), in order, each value at most `resolution`
// times its neighbour. InputError when a value is not positive (a log scale needs it) or the
// resolution is not above 1.
std::vector<double> cliff_grid(const CliffSpace& space, double resolution);
// The grid values as a person writes them (knobs::format_with_unit).
std::string cliff_value_text(const CliffSpace& space, double value);
// What a search needs at most on a grid of `steps` steps: floor(log2(steps)) + 2, which bounds
// the far end plus the ceil(log2(steps)) points of the bisection.
int cliff_max_points(int steps);

// Runs the search. Every Measurer call is one run of one configuration ({knob = value});
// `calls` receives, in call order, the index of the point each call measured (-1: baseline)
// so the experiment layer can attach the runs' figures and evidence to the points.
results::CliffResult find_cliff(Measurer& measurer, const CliffSpace& space,
                                const CliffOptions& options, std::vector<int>* calls = nullptr);

}  // namespace pgslow::search
