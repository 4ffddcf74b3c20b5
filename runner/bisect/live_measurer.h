#pragma once
// The real Measurer: one configuration on the live server. Behind the seam it applies good's
// settings with the changes on top through the Applier (which starts every apply from the
// original configuration, restarts only when a postmaster-context value differs from what is
// running, and reads every value back), then for each repeat resets the data from the
// template (a fresh FILE_COPY clone) and runs the workload with the driver.
//
// Restoring is the caller's: Applier::restore() at the end (its destructor does it too, also
// after an exception), and Ctrl-C stops the driver through InterruptGuard's flag, after which
// measure() throws apply::Interrupted.

#include <vector>

#include "apply/applier.h"
#include "bisect/measurer.h"
#include "common/progress.h"
#include "driver/driver.h"
#include "report/model.h"
#include "workload/dataset.h"
#include "workload/workload.h"

namespace pgslow::bisect {

class LiveMeasurer final : public Measurer {
 public:
  LiveMeasurer(apply::Applier& applier, workload::Dataset& dataset,
               const workload::Workload& workload, workload::WorkloadParams params,
               driver::DriverOptions options, std::vector<knobs::Setting> good, Progress& progress);

  std::vector<double> measure(const std::vector<knobs::Setting>& changes, int repeats) override;

  int restarts() const { return restarts_; }  // restarts the Applier actually made
  int applies() const { return applies_; }
  // Every measurement, in order (for the evidence a user may want beyond TPS).
  const std::vector<report::Measurement>& measurements() const { return measurements_; }

 private:
  apply::Applier& applier_;
  workload::Dataset& dataset_;
  const workload::Workload& workload_;
  workload::WorkloadParams params_;
  driver::DriverOptions options_;
  std::vector<knobs::Setting> good_;
  Progress& progress_;
  int restarts_ = 0;
  int applies_ = 0;
  std::vector<report::Measurement> measurements_;
};


}  // namespace pgslow::bisect
