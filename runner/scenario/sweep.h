#pragma once
// A scenario's `sweep:` section (docs/scenario-format.md): one or two load dimensions, each
// with a list of values, expanded into one stage per value (or per pair) when the scenario is
// read, so `plan`, `check` and `run` all see the stages. The report draws the curve from the
// stages marked as sweep points (report/curve.h).
//
//   sweep:
//     pool_size: [1, 5, 10, 50, 150]   # the x axis
//     load: {clients: 200}             # fixed for every point
//
// Dimensions: clients, pool_size, rate (per second, or "75%" of the baseline's TPS), workers.
// With two dimensions the first is the x axis and the second draws one curve per value.

#include <string>
#include <vector>

#include "common/yaml.h"
#include "scenario/scenario.h"

namespace pgslow::scenario {

// The dimensions a sweep may vary, in the order the docs list them.
const std::vector<std::string>& sweep_dimensions();

// Reads `node` into s.sweep; problems go to the reader.
void read_sweep(yaml::Reader& r, const YAML::Node& node, Scenario& s);

// The stages of the sweep, each marked sweep_point and named after its values
// ("pool_size 10", "rate 75%, clients 256"); with two dimensions the second is the outer loop.
std::vector<StageSpec> expand_sweep(const SweepSpec& sweep);

// "10", "75%", "2000" as a stage name part; the value of `dimension` in `knobs`.
std::string sweep_value_text(const std::string& dimension, const LoadKnobs& knobs);

}  // namespace pgslow::scenario
