#pragma once
// The adapter between attribution's search (bisect::Measurer) and the one measuring seam
// (stage::LabSession): one configuration is the reference stage's settings with some of the
// stage's changes on top, measured with the stage's load, evidence and failure handling. Its
// samples are of the metric the attribution judges by (bisect::search_sample_of).

#include <map>
#include <string>
#include <vector>

#include "bisect/attribution.h"
#include "bisect/measurer.h"
#include "common/progress.h"
#include "report/model.h"
#include "stage/lab_session.h"

namespace pgslow::scenario {

class StageMeasurer final : public bisect::Measurer {
 public:
  StageMeasurer(stage::LabSession& lab, std::string stage, std::vector<knobs::Setting> reference,
                report::LoadSettings load, report::Metric metric, Progress& progress);

  // Throws RuntimeError when the server rejects the configuration or a run fails: an
  // attribution needs every configuration it asks for.
  std::vector<double> measure(const std::vector<knobs::Setting>& changes, int repeats) override;

  // Runs made elsewhere (the reference stage, the stage itself) count as this configuration's.
  void seed(const std::vector<knobs::Setting>& changes, const report::StageResult& runs);
  // What the runs of reference + `changes` recorded (transactions, evidence).
  bisect::Observation observe(const std::vector<knobs::Setting>& changes) const;
  // The reference's own runs this measurer made (no changes), in time order: they measure the
  // baseline configuration like the run's interleaved reference runs, and count as such.
  const std::vector<report::Measurement>& reference_runs() const { return reference_runs_; }
  // True when the latest run this measurer made was the reference's.
  bool last_was_reference() const { return last_was_reference_; }
  // The runs of the whole stage this measurer made (the search's level topped up), each with
  // its evidence: repeats of the stage, measured like its own.
  const std::vector<report::StageResult>& stage_runs() const { return stage_runs_; }

 private:
  stage::LabSession& lab_;
  std::string stage_;
  std::vector<knobs::Setting> reference_;
  report::LoadSettings load_;
  report::Metric metric_;
  Progress& progress_;
  std::map<std::string, bisect::Observation> seen_;  // by configuration key
  std::vector<report::Measurement> reference_runs_;
  bool last_was_reference_ = false;
  std::string stage_key_;  // the whole stage's configuration (seed)
  std::vector<report::StageResult> stage_runs_;
  int calls_ = 0;
};

}  // namespace pgslow::scenario
