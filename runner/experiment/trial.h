#pragma once
// One measurement as a value (docs/architecture.md "The experiment layer"): a Trial is a whole
// configuration (settings on top of the server's original ones, and the envelope), a load
// and the timing of its runs. Every experiment (`run`, bench, bisect, cliff, attribution,
// lessons, the mystery) builds Trials and hands them to a Lab (experiment/lab.h); the live lab and
// the simulated one measure the same value. A Trial becomes the driver's options in one place,
// driver_options() below, so a new driver setting is one field here and one line there.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "driver/driver.h"
#include "knobs/catalog.h"
#include "results/model.h"
#include "server/envelope.h"

namespace pgslow::experiment {

// How a trial's runs are timed and driven: the scenario's `measure:` section with the command
// line over it (make_timing in experiment/run.h), or a command's own options (bench, bisect,
// cliff).
struct Timing {
  double warmup_s = 5;
  // Clients start one by one over this much of the warm-up (0: all at once; bench --ramp).
  double ramp_s = 0;
  double duration_s = 30;
  int repeats = 1;
  int workers = 0;    // driver threads; 0: one per core
  int max_tries = 0;  // attempts per transaction on serialization failures and deadlocks; 0: the
                      // workload's default
  bool allow_partial = false;
  driver::Protocol protocol = driver::Protocol::kPrepared;  // how statements are sent (-M)
  bool check_data = false;  // consistency checks after each run; a failed check fails the stage
  std::uint64_t schedule_seed = 1;  // the fixed-rate arrival schedule (the driver's seed)
  // Sample the backends' wait events during the measured window (StageResult::waits);
  // false: no sampler connection (measure.wait_sampling: off, --no-wait-sampling).
  bool wait_sampling = true;

  bool operator==(const Timing&) const = default;
};

// What is measured: a whole configuration on top of the server's original one.
struct Configuration {
  std::string name;  // the stage name, "good + 3 changes", ...
  std::vector<knobs::Setting> settings;
  std::vector<std::string> presets;  // where the settings came from, for the journal
  // The server's envelope for it (a sweep of server.memory/cpus), set on the live group
  // before the data reset so the page cache is bounded while it is measured; unset: as it is.
  std::optional<server::Envelope> envelope;
};

struct Trial {
  Configuration configuration;
  results::LoadSettings load;  // clients 0: the workload's; workers 0: the timing's
  Timing timing;

  // The same trial with `repeats` runs.
  Trial with_repeats(int repeats) const;
};

// The one place a trial becomes the driver's options: its load over its timing, clients 0
// taking `workload_clients`. The callbacks (evidence snapshots, switchback polls) are the lab's.
driver::DriverOptions driver_options(const Trial& trial, int workload_clients);

// The load a trial's result records: its defaults filled in as driver_options() fills them.
results::LoadSettings recorded_load(const Trial& trial, int workload_clients);

}  // namespace pgslow::experiment
