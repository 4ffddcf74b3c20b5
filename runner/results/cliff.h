#pragma once
// What `pgslow cliff KNOB --from A --to B` found (docs/cliff.md): the first value of a knob,
// going from A towards B, whose effect against A leaves the baseline's interval. Plain
// structs, filled by the search (runner/search/cliff_search.h) and the experiment layer (the runs'
// figures and evidence); report/cliff_view.h renders them in every format.

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "results/axes.h"
#include "results/model.h"

namespace pgslow::results {

// A point's verdict. Harmful: its whole interval lies on the worse side of the baseline.
// Safe: its interval includes no change, or lies on the better side. Uncertain: the interval
// includes no change but a looser one (80% one-sided) does not, even after the point was
// measured again: the search goes on as if it were safe, and the report says so.
enum class CliffVerdict { kSafe, kHarmful, kUncertain };
std::string to_string(CliffVerdict v);  // "safe", "harmful", "uncertain"

// One value measured: its runs interleaved with runs of the baseline (B P B P ... B), the
// effect from each run against the baseline runs on either side (drift cancels).
struct CliffPoint {
  std::string value;            // as a person writes it: "2MB"
  double base_value = 0;        // in the knob's base unit (kB for work_mem): orders the points
  std::vector<double> samples;  // the search's samples (higher is better)
  std::vector<double> baseline_samples;  // the baseline runs around them
  EffectInterval effect;                 // search terms (higher is better) vs the baseline
  CliffVerdict verdict = CliffVerdict::kSafe;
  int looks = 1;  // times the point's interval was looked at (re-measured when uncertain)
  int order = 0;  // 1 for the first point measured
  // The runs' figures (the experiment layer fills them; 0: not known, as in the simulation).
  std::uint64_t transactions = 0;
  double tps = 0;     // median over the point's runs
  double p99_us = 0;  // median over the point's runs
  // The median run's evidence, normalised as stages compare it (results::normalised_evidence:
  // temp_files and temp_bytes per transaction, buffer_hit_ratio as a fraction).
  std::map<std::string, double> evidence;
  // Where the median run's backends spent their time (wait events sampled during the run);
  // absent: not sampled.
  std::optional<WaitProfile> waits;
  std::string error;  // a run the server rejected or that failed
  // Every axis (results/axes.h) against the baseline runs around the point's own, Holm's rule
  // over them (cliff_point_axes); empty: not computed (the baseline, the search alone).
  std::vector<AxisEffect> axes;

  bool operator==(const CliffPoint&) const = default;
};

struct CliffResult {
  std::string knob;  // "work_mem"
  std::string from;  // the baseline's value, "64MB"
  std::string to;    // the far end, "64kB"
  double to_value =
      0;  // the far end in the knob's base unit (the baseline's is baseline.base_value)
  double resolution = 2;  // the factor between two values the search still tells apart
  Metric metric = Metric::kTps;
  // The grid the search bisects: values from `from` to `to`, each at most `resolution` from the
  // next (integers, units and duplicates removed); max_points is what a monotonic curve needs
  // at most: floor(log2(steps)) + 2.
  int grid_steps = 0;
  int max_points = 0;
  std::vector<CliffPoint> points;  // in the order they were measured
  // The baseline's own figures (all its runs): transactions, TPS and p99 medians, evidence.
  CliffPoint baseline;
  std::optional<std::size_t> last_safe;      // into points; unset: `from` itself
  std::optional<std::size_t> first_harmful;  // into points; unset: no cliff in the range
  double confidence = 0.95;                  // of each point's interval
  double search_confidence = 0.95;           // of the search as a whole (spread over its looks)
  int runs = 0;                              // every run, baseline included
  double seconds = 0;
  // Where and with what it was measured (the experiment layer): "tpcb-like at scale 1, 4
  // clients, 10 s runs", "managed PostgreSQL 17.2".
  std::string workload;
  std::string server;
  bool operator==(const CliffResult&) const = default;
};

// A point's every axis from the search's runs in the order it made them: `runs[c]` the c-th
// (nullptr: it has no measurement), `calls[c]` the point it measured (-1: the baseline). The
// point's runs and the baseline runs right around them alternate (B P B ... B) and each axis
// gets alternating_interval's interval (results/switchback.h), Holm's rule over them at
// `confidence`. Empty when the point has no run.
std::vector<AxisEffect> cliff_point_axes(const std::vector<const Measurement*>& runs,
                                         const std::vector<int>& calls, int point,
                                         double confidence);

// "down" when the values go down from `from` to `to` (work_mem 64MB -> 64kB), else "up".
std::string cliff_direction(const CliffResult& r);
// The points in value order (from `from` to `to`), baseline first.
std::vector<const CliffPoint*> points_in_value_order(const CliffResult& r);

}  // namespace pgslow::results
