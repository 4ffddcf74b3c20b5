#include "experiment/simulated_lab.h"

#include <fmt/format.h>

#include <csignal>

#include "common/errors.h"

namespace pgslow::experiment {

SimulatedLab::SimulatedLab(search::SimulatedModel model) : server_(std::move(model)) {}

results::StageResult SimulatedLab::begin(const Trial& trial) {
  if (!prepared_) throw RuntimeError("internal: the simulated lab was not prepared");
  apply::InterruptGuard::throw_if_interrupted();
  trials_.push_back(trial);
  runs_.push_back(0);
  results::StageResult stage;
  stage.name = trial.configuration.name;
  // The model's workload has one client unless the load says otherwise.
  stage.load = recorded_load(trial, 1);
  return stage;
}

std::optional<std::string> SimulatedLab::rejected_knob(const Configuration& configuration) const {
  for (const auto& s : configuration.settings)
    if (rejected_.count(s.name) != 0) return s.name;
  return std::nullopt;
}

bool SimulatedLab::interrupt_now() {
  if (interrupt_after_ < 0 || static_cast<int>(trials_.size()) != interrupt_after_ + 1)
    return false;
  interrupt_after_ = -1;
  std::raise(SIGINT);
  return true;
}

results::StageResult SimulatedLab::measure(const Trial& trial) {
  results::StageResult stage = begin(trial);
  if (auto knob = rejected_knob(trial.configuration)) {
    fail_stage(stage, results::StageFailure::kRejected,
               fmt::format("the server did not start with {}", *knob));
    return stage;
  }
  for (int i = 0; i < trial.timing.repeats; ++i) {
    if (interrupt_now()) {
      mark_interrupted(stage);
      break;
    }
    results::Measurement m = server_.run(trial.configuration.settings, trial.timing.duration_s);
    // A fixed rate the server keeps up with: TPS is the rate.
    if (trial.load.rate > 0 && m.tps > trial.load.rate) {
      m.tps = trial.load.rate;
      m.committed = static_cast<std::uint64_t>(trial.load.rate * m.duration_s);
    }
    m.clients_requested = m.clients_connected = stage.load.clients;
    stage.repeats.push_back(std::move(m));
    ++runs_.back();
  }
  stage.evidence_seconds = trial.timing.duration_s;
  return stage;
}

results::StageResult SimulatedLab::measure_switchback(const Trial& reference, const Trial& trial,
                                                      const results::SwitchbackDesign& design,
                                                      const std::string& why) {
  results::StageResult stage = begin(trial);
  for (const Configuration* c : {&trial.configuration, &reference.configuration}) {
    if (auto knob = rejected_knob(*c)) {
      fail_stage(stage, results::StageFailure::kRejected,
                 fmt::format("the server did not start with {}", *knob));
      return stage;
    }
  }
  results::SwitchbackRun run(design);
  const double kept_s = design.block_s - design.settle_s;
  bool done = false;
  while (!done) {
    if (interrupt_now()) {
      mark_interrupted(stage);
      break;
    }
    const bool stage_block = run.block() % 2 == 1;
    const Configuration& c = stage_block ? trial.configuration : reference.configuration;
    done = run.add(server_.block(c.settings, kept_s, stage_block));
    ++runs_.back();
  }
  results::Switchback result = run.result();
  result.why = why;
  results::Measurement m = results::blocks_measurement(result.blocks, true);
  results::set_switchback_result(stage, std::move(result), std::move(m));
  return stage;
}

}  // namespace pgslow::experiment
