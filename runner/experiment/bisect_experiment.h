#pragma once
// `pgslow bisect` as one library function (docs/bisect.md): validate everything against the
// live server, then search the difference between a good and a bad configuration through the
// one adapter (experiment/lab_measurer.h) over one lab session, and always restore. The command
// only parses its options into BisectExperiment and renders the result; the integration tests
// call this too.
//
//   experiment::BisectExperiment e;
//   e.good = search::load_configuration("default", catalog);
//   e.bad = search::load_configuration("advisor.conf", catalog);
//   e.metric.better = true;                         // --direction faster
//   search::Result r = experiment::run_bisect(e, server, catalog, progress);

#include <string>
#include <vector>

#include "common/progress.h"
#include "experiment/search_load.h"
#include "knobs/catalog.h"
#include "results/model.h"
#include "search/configuration.h"
#include "search/result.h"
#include "server/server_control.h"

namespace pgslow::experiment {

// The workload and runs (SearchLoad: workload, scale, clients, rate, duration, warm-up, target,
// workdir), and what the search compares and judges by.
struct BisectExperiment : SearchLoad {
  search::Configuration good;
  search::Configuration bad;
  // Settings the sources left out before the comparison (--bad-from's server files, a
  // version's settings the other lacks), each with its reason: reported with the excluded.
  std::vector<search::Excluded> left_out;
  // --good-version/--bad-version (both or neither): good and bad are the built-in defaults that
  // differ between the two majors (search/sources.h), read once the server under test is
  // known; the list is printed before any run. 0: good and bad are as given.
  int good_version = 0;
  int bad_version = 0;
  int repeats = 3;
  int max_repeats = 5;
  double min_effect = 0.10;  // a fraction: bad must differ from good at least this much
  bool isolate = false;      // also each change's part (the attribution of `run --attribute`)
  results::Metric metric = results::Metric::kTps;  // and the direction (Metric::better)
};

class LabMeasurer;

// Bad, each culprit group and each culprit alone against good on every axis (results/axes.h),
// from the runs `measurer` recorded of each configuration: what they cost where the metric the
// search judged by did not move. run_bisect calls it after the search.
void add_bisect_axes(search::Result& result, const std::vector<search::Candidate>& candidates,
                     const LabMeasurer& measurer);

// Throws InputError (every problem of the options and of good, with where it came from)
// before anything changes on the server; RuntimeError when a run fails (the configuration is
// restored first). Progress: the plan line, then one line per measurer call.
search::Result run_bisect(const BisectExperiment& e, server::ServerControl& server,
                          const knobs::Catalog& catalog, Progress& progress);

}  // namespace pgslow::experiment
