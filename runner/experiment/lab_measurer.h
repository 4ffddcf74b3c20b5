#pragma once
// The one adapter between a search (search::Measurer: bisect, `bisect --isolate`, cliff and a
// scenario's attribution) and a Lab (experiment/lab.h): live, apply with the journal, restart only
// when needed, values read back, a fresh template clone per run, evidence of the measured
// window; or simulated. A configuration is the `base` trial's (good's settings, or the
// reference stage's) with some candidate changes on top, under the base's load and timing.
// Its samples are of the metric and direction the search judges by (results/metric.h).
//
// The failure rule (docs/bisect.md "When a configuration fails"), one for every search:
// - a configuration the SERVER REJECTS (it fails to start, a value differs after the apply)
//   is a measured outcome: its runs are recorded "rejected" with the server's error (results())
//   and its samples are results::rejected_sample, worst for the user on the chosen metric: a
//   cause when the search looks for what made it worse, never a helper when it looks for what
//   made it better;
// - a run that fails for any other reason (the server restarted or stopped under it, clients
//   refused, no value of the metric) throws RuntimeError: the search cannot go on without it;
// - Ctrl-C throws apply::Interrupted. Restoring is the lab's (Lab::finish, or the live
//   session's destructor after an exception).

#include <map>
#include <string>
#include <vector>

#include "common/progress.h"
#include "experiment/lab.h"
#include "experiment/trial.h"
#include "results/metric.h"
#include "results/model.h"
#include "search/attribution.h"
#include "search/measurer.h"

namespace pgslow::experiment {

class LabMeasurer final : public search::Measurer {
 public:
  // `name`: how the configurations are named in the journal and the progress ("bisect",
  // "wal-hell (attribution)"); `progress`: a line per call when set (attribution's).
  LabMeasurer(Lab& lab, Trial base, results::Metric metric, std::string name = "bisect",
              Progress* progress = nullptr);

  std::vector<double> measure(const std::vector<knobs::Setting>& changes, int repeats) override;

  // Every configuration measured, in order, with its evidence, log excerpt and error (a
  // rejected one's is the server's).
  const std::vector<results::StageResult>& results() const { return results_; }
  // How many configurations the server rejected.
  int rejected() const { return rejected_; }

  // Runs made elsewhere (the reference stage, the stage itself) count as this configuration's.
  void seed(const std::vector<knobs::Setting>& changes, const results::StageResult& runs);
  // What the runs of base + `changes` recorded (transactions, evidence).
  search::Observation observe(const std::vector<knobs::Setting>& changes) const;
  // The base's own runs this measurer made (no changes), in time order: they measure the
  // reference configuration like a run's interleaved reference runs, and count as such.
  const std::vector<results::Measurement>& reference_runs() const { return reference_runs_; }
  // True when the latest run this measurer made was the base's.
  bool last_was_reference() const { return last_was_reference_; }
  // The runs of the seeded whole stage this measurer made (the search's level topped up).
  const std::vector<results::StageResult>& stage_runs() const { return stage_runs_; }

 private:
  // One configuration's runs: one call of the session, or one per run when the metric needs
  // each run's own evidence (the session keeps only the median run's).
  results::StageResult measure_runs(const Trial& trial, int repeats, std::vector<double>& samples);

  Lab& lab_;
  Trial base_;
  results::Metric metric_;
  std::string name_;
  Progress* progress_;
  std::vector<results::StageResult> results_;
  int rejected_ = 0;
  std::map<std::string, search::Observation> seen_;  // by configuration key
  std::vector<results::Measurement> reference_runs_;
  bool last_was_reference_ = false;
  std::string stage_key_;  // the whole stage's configuration (seed)
  std::vector<results::StageResult> stage_runs_;
  int calls_ = 0;
};

}  // namespace pgslow::experiment
