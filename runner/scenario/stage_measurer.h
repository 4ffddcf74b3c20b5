#pragma once
// The adapter between attribution's search (bisect::Measurer) and the one measuring seam
// (stage::LabSession): one configuration is the reference stage's settings with some of the
// stage's changes on top, measured with the stage's load, evidence and failure handling.

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
                report::LoadSettings load, Progress& progress);

  // Throws RuntimeError when the server rejects the configuration or a run fails: an
  // attribution needs every configuration it asks for.
  std::vector<double> measure(const std::vector<knobs::Setting>& changes, int repeats) override;

  // Runs made elsewhere (the reference stage, the stage itself) count as this configuration's.
  void seed(const std::vector<knobs::Setting>& changes, const report::StageResult& runs);
  // What the runs of reference + `changes` recorded (transactions, evidence).
  bisect::Observation observe(const std::vector<knobs::Setting>& changes) const;

 private:
  stage::LabSession& lab_;
  std::string stage_;
  std::vector<knobs::Setting> reference_;
  report::LoadSettings load_;
  Progress& progress_;
  std::map<std::string, bisect::Observation> seen_;  // by configuration key
  int calls_ = 0;
};

}  // namespace pgslow::scenario
