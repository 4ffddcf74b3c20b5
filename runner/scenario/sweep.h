#pragma once
// A scenario's `sweep:` section (docs/scenario-format.md): one or two dimensions, each a list
// of values or a range, expanded into one stage per value (or per pair) when the scenario is
// read, so `plan`, `check` and `run` all see the stages. The report draws the curve from the
// stages marked as sweep points, by the value each point carries (report/curve.h).
//
//   sweep:
//     shared_buffers: [128MB, 32MB, 8MB]                 # the x axis
//     clients: {from: 1, to: 64, steps: 4, scale: log}   # one curve per value: 1, 4, 16, 64
//     load: {pool_size: 0}                               # fixed for every point
//
// A dimension is a row of a table, as target kinds are (server/target_kind.h): its name, how
// one value is read (and range-checked), and how it sets a point's stage. The load dimensions
// (clients, pool_size, rate, workers, connect_per_transaction) are rows of sweep.cpp, also
// read by a stage's `load:`; any knob of the catalog is a dimension whose value goes into the
// point's settings, so make_plan checks it against the live server's range and unit before
// anything changes, as any stage's settings. A new load dimension is one row.
// With two dimensions the first is the x axis and the second draws one curve per value.

#include <cstddef>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/yaml.h"
#include "scenario/scenario.h"

namespace pgslow::scenario {

// What a dimension makes of one value as written: the value as a point's name and the curve
// show it ("10", "75%", "32MB"), or why it is not one and what to write instead.
struct SweepParse {
  std::string text;   // set when the value is valid
  std::string error;  // "is out of range": follows "sweep.clients = 0"
  std::string hint;   // "use a whole number from 1 to 10000"
};

// One row: a dimension a sweep (or a stage's `load:`) can set.
struct SweepDimension {
  std::string name;  // as written under `sweep:`, the curve's axis ("clients")
  std::function<SweepParse(std::string_view written)> parse;
  // Sets a point's stage to the value (its load knobs, its settings or its envelope); `where`
  // is the value's place in the file, for the server's verdict on a knob's value. A load row's
  // records the value in the point's `load:` knobs (load_row).
  std::function<void(const SweepValue& value, StageSpec& point)> apply;
  // A load row's setting of the driver's load, applied when the stage is planned (apply_load).
  std::function<void(const SweepValue& value, results::LoadSettings& load)> set_load = {};
};

// A row of the driver's load: `set_load` sets its field of results::LoadSettings.
SweepDimension load_row(std::string name, std::function<SweepParse(std::string_view)> parse,
                        std::function<void(const SweepValue&, results::LoadSettings&)> set_load);

// `load` with the stage's load knobs set on it, each through its row.
results::LoadSettings apply_load(results::LoadSettings load, const LoadKnobs& knobs);

// The load dimensions, in the order the docs list them.
const std::vector<SweepDimension>& load_dimensions();
// Adds a load dimension (a test's own; a row of the same name is replaced).
void add_load_dimension(SweepDimension row);
// The dimension `name` names: a load dimension, else a knob of the catalog under its own
// spelling; nullopt when neither.
std::optional<SweepDimension> find_sweep_dimension(std::string_view name);

// Whether `name` is a dimension of the server's envelope (server.memory, server.cpus).
bool is_envelope_dimension(std::string_view name);
// The refusal of a sweep of `dimension` (the server's envelope) on a target of `kind`, at
// `where`: one wording for the scenario's own target (read_sweep) and the command line's
// (run_envelope).
ConfigError envelope_sweep_refusal(std::string_view dimension, server::TargetKind kind,
                                   SourceLocation where);

// The most points a sweep may expand into (the product of its dimensions' value counts): far
// more than a run can measure, and each point is a stage held in memory.
inline constexpr std::size_t kMaxSweepPoints = 1000;

// Reads `node` into s.sweep; problems go to the reader. A sweep of more than kMaxSweepPoints
// points is an error at its line (the count and the limit), and expands into nothing.
void read_sweep(yaml::Reader& r, const YAML::Node& node, Scenario& s);
// Reads one value of `dimension` (a YAML scalar); nullopt after an error naming `what`
// ("sweep.clients", "stage 'x' load.clients") at the value's line.
std::optional<SweepValue> read_sweep_value(yaml::Reader& r, const YAML::Node& node,
                                           const SweepDimension& dimension,
                                           const std::string& what);
// Reads a `load:` map (the load dimensions' names as keys) into its load knobs.
LoadKnobs read_load(yaml::Reader& r, const YAML::Node& node, const std::string& what);

// The stages of the sweep, each marked sweep_point, carrying its values and named after them
// ("pool_size 10", "rate 75%, clients 256"); with two dimensions the second is the outer loop.
std::vector<StageSpec> expand_sweep(const SweepSpec& sweep);

// The values of a range {from, to, steps, scale: linear|log} as written: memory and time in
// the unit a person would write (64MB, 16MB, 4MB), whole numbers when both ends are, rounded
// to two significant digits between the ends, without repeats. nullopt (error in `error`)
// when the ends do not go together.
std::optional<std::vector<std::string>> range_values(const std::string& from, const std::string& to,
                                                     int steps, bool log, std::string& error);

}  // namespace pgslow::scenario
