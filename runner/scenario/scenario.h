#pragma once
// A scenario file parsed into plain structs (docs/scenario-format.md). Parsing checks the
// file's shape only; make_plan() (plan.h) checks it against the catalog and the live server.

#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "common/errors.h"
#include "common/yaml.h"
#include "driver/driver.h"
#include "knobs/catalog.h"
#include "results/model.h"
#include "server/pooler.h"
#include "server/target.h"
#include "workload/workload.h"

namespace pgslow::scenario {

enum class Mode { kCumulative, kIsolated, kBoth };
std::string_view mode_name(Mode m);

// One value of a sweep's dimension as points show it ("10", "75%", "32MB"), and where it is
// written (a range's values: where the range is).
struct SweepValue {
  std::string text;
  SourceLocation where;
};

// Load-side knobs of a stage as written: the load dimensions it sets (scenario/sweep.h, one
// row each), with their values; unset dimensions keep the scenario's. apply_load (plan.cpp)
// sets each on the stage's results::LoadSettings through its row, so a new driver setting is
// one field of LoadSettings and one row, and nothing here.
struct LoadKnobs {
  std::map<std::string, SweepValue> values;  // by dimension name ("clients")

  bool empty() const { return values.empty(); }
  // The value written for `dimension`, or nullptr.
  const SweepValue* find(const std::string& dimension) const {
    auto it = values.find(dimension);
    return it == values.end() ? nullptr : &it->second;
  }
};

// A `load:` map is read by read_load (sweep.h), through the load dimensions' rows.

// A stage's own server envelope, from a sweep of server.memory or server.cpus: unset fields
// keep the run's (the scenario's `server:`, or --memory/--cpus). docs/envelope.md.
struct EnvelopeChange {
  std::optional<std::uint64_t> memory_bytes;
  std::optional<double> cpus;
  bool empty() const { return !memory_bytes && !cpus; }
  // `run`'s envelope with this stage's values over it.
  server::Envelope over(server::Envelope run) const {
    if (memory_bytes) run.memory_bytes = *memory_bytes;
    if (cpus) run.cpus = *cpus;
    return run;
  }
  bool operator==(const EnvelopeChange&) const = default;
};

struct WorkloadSpec {
  std::string name;
  int scale = 1;
  int clients = 0;  // 0: not given; make_plan puts the workload's default (tpcc-lite 10 x W) or 8
  bool think_time = false;
  std::uint64_t seed = 1;
  std::map<std::string, std::string> options;
  SourceLocation where;
};

struct MeasureSpec {
  double warmup_s = 5;
  double duration_s = 30;
  int repeats = 1;
  bool check_data = false;    // measure.check_data: consistency checks after each run
  bool wait_sampling = true;  // measure.wait_sampling: the wait-event profile (docs/evidence.md)
  // How stages compare with the baseline (docs/scenario-format.md "measure"): auto lets every
  // stage whose knobs act within seconds of a reload switch back and forth in one run;
  // isolated gives every stage separate runs.
  bool switchback = true;
  int pairs = 10;         // a switchback stage's blocks of each configuration (without precision)
  double precision = 0;   // measure until the interval is this narrow (0.05: +-5%); 0: fixed
  double budget_s = 120;  // with a precision: a switchback stage's time at most
  // measure.metric: what attributions judge by (results/metric.h); run --metric overrides it.
  results::Metric metric = results::Metric::kTps;
  // measure.protocol: how the clients send statements (pgbench -M); run -M overrides it.
  driver::Protocol protocol = driver::Protocol::kPrepared;
};

struct PresetRef {
  std::string name;
  SourceLocation where;
};

struct StageSpec {
  std::string name;
  std::string description;
  std::vector<PresetRef> presets;
  std::vector<knobs::Setting> settings;  // override the presets
  LoadKnobs load;
  EnvelopeChange envelope;        // a sweep point of server.memory/cpus
  std::optional<bool> attribute;  // unset: the scenario's `attribute`
  // `same_as_baseline: true`: an A/A stage, the baseline's configuration measured again as a
  // stage; its verdict must read "no measurable effect" (scenarios/noise-check.yaml).
  bool same_as_baseline = false;
  SourceLocation where;
  bool sweep_point = false;  // expanded from the sweep: section
  // A sweep point's value per dimension, as the curve shows it ("shared_buffers" -> "32MB").
  std::map<std::string, std::string> sweep_values;
};

// `sweep:` (scenario/sweep.h): the values of one or two dimensions, load or knob.
struct SweepSpec {
  std::vector<std::string> dimensions;          // "clients", "shared_buffers"
  std::vector<std::vector<SweepValue>> values;  // per dimension, in the order written
  LoadKnobs load;                               // fixed for every point
  SourceLocation where;
  bool empty() const { return dimensions.empty(); }
  // The first server.memory or server.cpus dimension (they change the server's envelope),
  // or nullptr.
  const std::string* envelope_dimension() const;
};

struct Expectation {
  // kNoEffect: an A/A stage's check, no axis of its verdict called (no_effect: true).
  enum class Kind { kSlowerThanBaseline, kWithinBaseline, kNoEffect };
  std::string stage;
  Kind kind = Kind::kSlowerThanBaseline;
  double value = 0;  // a factor (slower_than_baseline) or a fraction (within_baseline: 0.10)
  std::string text;  // as the user wrote it, for the report
  SourceLocation where;
};

struct Scenario {
  std::filesystem::path file;
  // Run with the clients that got a connection when the server refuses some (SQLSTATE 53300)
  // and report the refusals, instead of failing the stage (run --allow-partial).
  bool allow_partial = false;
  std::string name;
  std::string description;
  server::TargetSpec target;  // kind managed unless the file says otherwise
  SourceLocation target_where;
  WorkloadSpec workload;
  // `pooler:` (docs/pooler.md): the clients reach the server through it; unset: directly.
  std::optional<server::PoolerSpec> pooler;
  MeasureSpec measure;
  Mode mode = Mode::kCumulative;
  // Name each knob's part in every stage with several knobs (docs/scenario-format.md).
  bool attribute = false;
  std::vector<knobs::Setting> baseline;
  SweepSpec sweep;
  std::vector<StageSpec> stages;  // the sweep's points first, then the stages: list
  std::vector<Expectation> expect;
};

// The workload's parameters as the scenario gives them (script files relative to the file).
workload::WorkloadParams workload_params(const Scenario& scenario);

// A sweep of server.memory/cpus changes the envelope of the managed cluster: the run's
// envelope, given the scenario and the target the command uses (a target of another kind is
// an InputError naming the sweep's file and line). A swept field the run gives no value of
// its own is unlimited in the group (Envelope::kUnlimitedMemory), so every stage can set one.
server::Envelope run_envelope(const Scenario& scenario, const server::TargetSpec& target);

// Parses a scenario file; throws InputError carrying every problem, each with file:line:col.
Scenario load_scenario(const std::filesystem::path& path);
// Same from text, for tests and the fuzz target; problems are appended, never thrown.
Scenario parse_scenario(std::string_view text, const std::string& file,
                        std::vector<ConfigError>& problems);

// "5%" or "0.05" as 0.05: the half-width an interval is measured to (--precision,
// measure.precision); nullopt outside 0.5% to 50%.
std::optional<double> parse_precision(std::string_view text);

// Whether a YAML file looks like a scenario (a top-level `stages:` or `workload:` key), for
// `pgslow check`, which accepts scenarios and preset files alike.
bool looks_like_scenario(const std::filesystem::path& path);

}  // namespace pgslow::scenario
