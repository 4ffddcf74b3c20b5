#pragma once
// The real Measurer: a thin adapter over the one measuring seam, stage::LabSession. Each call
// measures good's settings with the changes on top through the session (apply with the
// journal, restart only when needed, values read back; a fresh template clone per run;
// evidence of the measured window), so bisect gets the evidence, the log excerpts, the crash
// points and the handling of a rejected configuration that `pgslow run` has.
//
// Each run's sample is the metric the search judges by (search_sample_of). A configuration the
// server rejects (fails to start, values differ after apply) counts as slow: its samples are
// kRejectedTps, and the StageResult with the error is kept. Restoring is
// the session's (LabSession::finish, or its destructor after an exception); Ctrl-C stops the
// driver and measure() throws apply::Interrupted.

#include <vector>

#include "bisect/measurer.h"
#include "report/model.h"
#include "stage/lab_session.h"

namespace pgslow::bisect {

// The sample a rejected configuration is given: far below any real one (a thousandth of a
// transaction per second, or a cost of a thousand), still positive (the search works on logs).
inline constexpr double kRejectedTps = 1e-3;

class LabMeasurer final : public Measurer {
 public:
  LabMeasurer(stage::LabSession& lab, std::vector<knobs::Setting> good,
              report::Metric metric = report::Metric::kTps, report::LoadSettings load = {});

  std::vector<double> measure(const std::vector<knobs::Setting>& changes, int repeats) override;

  // Every configuration measured, in order, with its evidence, log excerpt and error.
  const std::vector<report::StageResult>& results() const { return results_; }

 private:
  stage::LabSession& lab_;
  std::vector<knobs::Setting> good_;
  report::Metric metric_;
  report::LoadSettings load_;
  std::vector<report::StageResult> results_;
};

}  // namespace pgslow::bisect
