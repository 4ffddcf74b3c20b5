#pragma once
// The lab every experiment schedules its trials against (docs/architecture.md "The experiment
// layer"). Two labs implement it: the live one, experiment::LabSession (apply with the journal,
// data reset from the template, evidence, the workload on a real server, the one restore policy),
// and experiment::SimulatedLab (experiment/simulated_lab.h: a seeded model of a server with noise
// and drift), on which the policy of `run` (interleaving, switchback, precision, attribution,
// relative rates, failures, interrupts) is unit-tested in seconds.
//
//   lab.prepare();                                   // the data, once
//   results::StageResult r = lab.measure(trial);     // `trial.timing.repeats` runs
//   ...
//   lab.finish();                                    // the original configuration, verified

#include <cstdint>
#include <string>
#include <string_view>

#include "experiment/trial.h"
#include "results/model.h"
#include "results/switchback.h"
#include "server/envelope.h"

namespace pgslow::experiment {

// Marks `stage` failed, of `kind`, for `why`: its error is `why` after the words that name the
// kind for a reader ("the server rejected this configuration: ", "stopped early: ",
// "interrupted: ").
void fail_stage(results::StageResult& stage, results::StageFailure kind, std::string_view why);
// The same for a stage whose runs Ctrl-C ended: what was measured stands.
void mark_interrupted(results::StageResult& stage);
// Whether `stage` failed because the server rejected its configuration.
inline bool rejected(const results::StageResult& stage) {
  return stage.failure == results::StageFailure::kRejected;
}
// A switchback stage is refused when an apply takes more than this share of a block.
inline constexpr double kSlowApplyShare = 0.25;

class Lab {
 public:
  virtual ~Lab() = default;

  // The data every trial starts from (a template, loaded once; a matching one is reused).
  virtual void prepare() = 0;

  // Measures `trial`: its configuration on top of the server's original one, then its runs,
  // each from identical data. Never throws for a rejected configuration or a failed run: the
  // StageResult says why in `error`. An interrupt during the runs returns what was measured
  // (`error` says so); one before them throws apply::Interrupted.
  virtual results::StageResult measure(const Trial& trial) = 0;

  // Measures `trial` against `reference` (the baseline's configuration and load; its timing is
  // the trial's) in one continuous run that switches between the two every design.block_s
  // seconds (results/switchback.h): their configurations, and the PgBouncer settings their
  // loads differ in (scenario::load_switch_refusal allows no other difference). The
  // StageResult holds the trial's blocks together as its one repeat and `switchback` with
  // every block; `why` says why the stage got this design.
  virtual results::StageResult measure_switchback(const Trial& reference, const Trial& trial,
                                                  const results::SwitchbackDesign& design,
                                                  const std::string& why) = 0;

  // Leaves `configuration` applied on purpose (a kept degradation: only a restore undoes it).
  virtual void keep(const Configuration& configuration) = 0;
  // The one restore policy: the original configuration back, verified; throws when it fails.
  virtual void finish() = 0;
  // The same on the way out of an error: never throws; whether the original is back.
  virtual bool restore_after_error() noexcept = 0;

  // How prepare() resets the data between runs ("template copy (FILE_COPY)", ...).
  virtual std::string reset_method() const = 0;
  // The size of the data a run starts from (0: not known yet).
  virtual std::uint64_t data_bytes() = 0;
  // The server's envelope when the lab began: a configuration's own envelope starts from it.
  virtual const server::Envelope& original_envelope() const = 0;
};

}  // namespace pgslow::experiment
