#pragma once
// The experiment behind `pgslow cliff KNOB --from A --to B` (docs/cliff.md): the search of
// bisect/cliff.h measured through the one measuring seam (stage::LabSession, by way of
// stage::LabMeasurer), each point given its runs' transactions, TPS, p99 and the evidence
// that says why a value hurts (temp files and bytes per transaction, the buffer hit ratio).
//
//   bisect::CliffSpace space = cliff_space(options, catalog, live);   // before any change
//   stage::LabSession lab(...); lab.prepare();
//   report::CliffResult r = run_cliff(lab, space, options);           // the caller restores

#include <functional>
#include <string>

#include "bisect/cliff.h"
#include "knobs/catalog.h"
#include "knobs/validate.h"
#include "report/cliff.h"
#include "stage/lab_session.h"

namespace pgslow::stage {

struct CliffExperimentOptions {
  std::string knob;
  std::string from;  // as written: "64MB"; empty: the server's current value
  std::string to;    // "64kB"
  bisect::CliffOptions search;
  report::LoadSettings load;  // clients 0: the workload's
};

// Checks the knob and both values against the live server (its range and unit, through
// knobs::validate) before anything changes: InputError naming --from or --to, the value and
// the range allowed, or the knob when the server has no such numeric parameter.
bisect::CliffSpace cliff_space(const CliffExperimentOptions& options, const knobs::Catalog& catalog,
                               const knobs::ServerSettings& live);

// Runs the search on `lab` (prepared). The configuration is the lab's to restore: the caller
// calls lab.finish(), or lab.restore_after_error() when this throws.
report::CliffResult run_cliff(LabSession& lab, const bisect::CliffSpace& space,
                              const CliffExperimentOptions& options);

}  // namespace pgslow::stage
