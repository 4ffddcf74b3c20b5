#pragma once
// The experiment behind `pgslow cliff KNOB --from A --to B` (docs/cliff.md): the search of
// search/cliff_search.h measured through the one measuring seam (experiment::LabSession, by way of
// experiment::LabMeasurer), each point given its runs' transactions, TPS, p99 and the evidence
// that says why a value hurts (temp files and bytes per transaction, the buffer hit ratio).

#include <string>

#include "common/progress.h"
#include "experiment/search_load.h"
#include "knobs/catalog.h"
#include "knobs/validate.h"
#include "results/cliff.h"
#include "search/cliff_search.h"
#include "server/server_control.h"

namespace pgslow::experiment {

struct CliffExperimentOptions {
  // A numeric parameter (work_mem), or the machine's size: server.memory or server.cpus, the
  // managed cluster's envelope (docs/envelope.md), set between runs.
  std::string knob;
  std::string from;  // as written: "64MB"; empty: the server's current value (or envelope)
  std::string to;    // "64kB"
  // Settings every run has, the baseline's too (a cliff lesson's `settings:`): shared_buffers
  // fixed while the server's memory is searched.
  std::vector<knobs::Setting> settings;
  // Evidence keys each point keeps beyond the cliff's own (a cliff lesson's reveal keys).
  std::vector<std::string> evidence;
  search::CliffOptions search;
};

// Checks the knob and both values against the live server (its range and unit, through
// knobs::validate) before anything changes: InputError naming --from or --to, the value and
// the range allowed, or the knob when the server has no such numeric parameter. For
// server.memory/cpus, `envelope` is the server's (the search needs one: its group). A fixed
// setting (options.settings) of the searched knob is refused: every point would replace it.
search::CliffSpace cliff_space(const CliffExperimentOptions& options, const knobs::Catalog& catalog,
                               const knobs::ServerSettings& live,
                               const server::Envelope& envelope = {});

// `pgslow cliff` whole: the workload, the runs and the server, as the command line gives them.
// The workload and runs (SearchLoad: workload or scripts, scale, clients, duration, warm-up,
// target, workdir) and the search's options.
struct CliffExperiment : SearchLoad {
  CliffExperimentOptions options;
};

// Checks the options, the workload and the knob's range on the live server before anything
// changes (InputError naming every problem), prints the plan line, runs the search in one lab
// session and always restores (also when a run fails or Ctrl-C comes: the error propagates
// after the restore). Progress: the plan line, then a line per point (options.search.on_point).
results::CliffResult run_cliff_experiment(const CliffExperiment& e, server::ServerControl& server,
                                          const knobs::Catalog& catalog, Progress& progress);

}  // namespace pgslow::experiment
