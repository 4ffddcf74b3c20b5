#pragma once
// The lab without a server (experiment/lab.h): search::SimulatedServer's seeded model of a server,
// with noise, drift, bursts and a CPU neighbour, measuring Trials the way the live lab does.
// The experiment layer's policy is unit-tested on it (tests/unit/experiment), and a workshop can
// rehearse on it. What a live lab does to the server (apply, reset, restore) it only records:
//
//   experiment::SimulatedLab lab(model);
//   lab.reject("shared_buffers");      // a configuration with it fails as the server would
//   lab.interrupt_after(3);            // Ctrl-C during the 4th trial
//   experiment::measure_plan(plan, lab, policy, progress, run);
//   lab.trials();                      // what was asked, in order

#include <optional>
#include <set>
#include <string>
#include <vector>

#include "apply/interrupt.h"
#include "experiment/lab.h"
#include "search/simulated_server.h"

namespace pgslow::experiment {

class SimulatedLab final : public Lab {
 public:
  explicit SimulatedLab(search::SimulatedModel model);

  // A configuration that sets `knob` fails as one the server rejects (it fails to start).
  void reject(std::string knob) { rejected_.insert(std::move(knob)); }
  // SIGINT arrives during the measured runs of trial number `trials` + 1 (counting every
  // measure and measure_switchback call): that trial returns what it measured, as live.
  void interrupt_after(int trials) { interrupt_after_ = trials; }

  void prepare() override { prepared_ = true; }
  results::StageResult measure(const Trial& trial) override;
  results::StageResult measure_switchback(const Trial& reference, const Trial& trial,
                                          const results::SwitchbackDesign& design,
                                          const std::string& why) override;
  void keep(const Configuration& configuration) override { kept_ = configuration; }
  void finish() override { ++finished_; }
  bool restore_after_error() noexcept override {
    ++restored_after_error_;
    return true;
  }
  std::string reset_method() const override { return "simulated"; }
  std::uint64_t data_bytes() override { return 0; }
  const server::Envelope& original_envelope() const override { return envelope_; }

  // Every trial asked for, in order (a switchback trial once, its reference not).
  const std::vector<Trial>& trials() const { return trials_; }
  // How many runs each trial was measured in, in the same order.
  const std::vector<int>& runs() const { return runs_; }
  const std::optional<Configuration>& kept() const { return kept_; }
  int finished() const { return finished_; }
  int restored_after_error() const { return restored_after_error_; }
  search::SimulatedServer& server() { return server_; }

 private:
  // A result named and loaded as the trial's, before any run; throws when interrupted.
  results::StageResult begin(const Trial& trial);
  // The rejected knob `trial` sets, if any.
  std::optional<std::string> rejected_knob(const Configuration& configuration) const;
  // Raises SIGINT when this trial is the one interrupt_after() named.
  bool interrupt_now();

  search::SimulatedServer server_;
  apply::InterruptGuard guard_;  // a raised SIGINT sets the flag, as live
  std::set<std::string> rejected_;
  int interrupt_after_ = -1;
  bool prepared_ = false;
  std::vector<Trial> trials_;
  std::vector<int> runs_;
  std::optional<Configuration> kept_;
  int finished_ = 0;
  int restored_after_error_ = 0;
  server::Envelope envelope_;
};

}  // namespace pgslow::experiment
