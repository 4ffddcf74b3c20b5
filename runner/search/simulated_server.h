#pragma once
// A deterministic performance model behind the Measurer seam, for tests and the run-count
// benchmark: it replaces apply + data reset + workload together (no server, no SQL). Each knob
// multiplies throughput by a factor, some pairs multiply it again only when both are present
// (an interaction), every run has seeded log-normal noise, and drift may be injected. Each run
// is a results::Measurement (TPS, the server's CPU seconds, the p99 latency) and measure()
// returns the model's metric of it, as the live measurers do.

#include <cstdint>
#include <map>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "knobs/value.h"
#include "results/model.h"
#include "search/measurer.h"
#include "search/result.h"

namespace pgslow::search {

struct SimulatedKnob {
  std::string name;
  double factor = 1.0;  // throughput multiplier when this knob is changed (0.1: 10x slower)
  bool needs_restart = false;
  double cpu_factor = 1.0;  // multiplier of the server's CPU seconds per transaction
  double p99_factor = 1.0;  // multiplier of the latency's p99 (and p95)
  // Multipliers of the cost axes' counters per transaction (results/axes.h: "wal_bytes" -> 1.3).
  std::map<std::string, double> per_tx_factors = {};
};

// A knob whose effect depends on its value (`pgslow cliff`): flat down to `cliff`, then
// `factor` slower just below it and `per_halving` slower again for each halving beyond
// (work_mem: sorts spill to disk below the size they need, and spill more below that).
// Values are read in `unit` ("2MB" with unit kB: 2048). cliff 0: no cliff anywhere.
struct SimulatedCliff {
  std::string name;
  knobs::BaseUnit unit;
  double cliff = 0;  // base units; values below it are slower
  double factor = 0.7;
  double per_halving = 0.9;
};

struct SimulatedInteraction {
  std::string a;
  std::string b;
  double factor = 1.0;  // applies only when both a and b are changed
};

struct SimulatedModel {
  double base_tps = 1000;
  std::vector<SimulatedKnob> knobs;
  std::vector<SimulatedInteraction> interactions;
  std::vector<SimulatedCliff> cliffs;
  double noise = 0.01;  // standard deviation of log(TPS) per run
  // Drift: log(TPS) of every configuration moves by this much per run (-0.01: the machine gets
  // 1% slower each run), starting after `drift_after_runs` runs (a CPU hog starting partway).
  double drift_per_run = 0;
  int drift_after_runs = 0;
  // From `drift_after_runs` on, the noise per run becomes this (0: unchanged): a CPU hog makes
  // the machine not only slower but less steady.
  double noise_after_drift = 0;
  // Bursts of load: the runs numbered here (counting from 0, over every call) read this much
  // lower in log(TPS), whatever configuration they measure.
  std::vector<int> burst_runs;
  double burst_log = 0;
  std::uint64_t seed = 1;
  // What measure() returns of each run (search::search_sample_of).
  results::Metric metric = results::Metric::kTps;
  // The cost of a transaction: the server's CPU seconds per transaction, with noise of its own
  // (log scale, from a generator of its own, so TPS samples are the same whatever the metric).
  // Noise, drift and bursts of load move TPS and p99 but not this: another program on the
  // machine slows the server down without making a transaction do more work.
  double base_cpu_per_tx_s = 0.001;
  double cpu_noise = 0.01;
  bool server_cpu = true;  // false: runs carry no CPU figures, as for a remote server
  // The latency's p99 at base_tps; it grows as the machine's speed drops (noise, drift, bursts).
  double base_p99_us = 5000;
  // The cost axes' counters per transaction of the good configuration ("wal_bytes" -> 2000),
  // each run's with log-normal noise of its own: run() records them (Measurement::per_tx).
  std::map<std::string, double> base_per_tx;
  double counter_noise = 0.03;
  // A neighbour that steals `neighbour_share` of the machine's CPU for spells of about
  // `neighbour_on_s` seconds, about `neighbour_off_s` apart (exponential, seeded): run() and
  // block() slow down by the share of their time it runs. 0: no neighbour.
  double neighbour_share = 0;
  double neighbour_on_s = 5;
  double neighbour_off_s = 10;
};

class SimulatedServer final : public Measurer {
 public:
  explicit SimulatedServer(SimulatedModel model);
  std::vector<double> measure(const std::vector<Setting>& changes, int repeats) override;

  // One run of `seconds` as a whole measurement (TPS, the server's CPU, p95/p99 and the cost
  // counters per transaction), on the simulated clock: what measure() samples, and the axes'
  // tests read every figure of it.
  results::Measurement run(const std::vector<Setting>& changes, double seconds = 10);
  // The kept part of one switchback block of `seconds` under `changes` (stage: which side).
  results::SwitchbackBlock block(const std::vector<Setting>& changes, double seconds, bool stage);

  // The noise-free throughput of good plus `changes`.
  double expected_tps(const std::set<std::string>& changed) const;
  // The factor the cliff knobs' values in `changes` multiply throughput by.
  double cliff_factor(const std::vector<Setting>& changes) const;
  // The candidates a bisect of this model starts from: every knob, good "a" -> bad "b".
  std::vector<Candidate> candidates() const;

  int calls() const { return calls_; }
  int runs() const { return runs_; }
  // Every run measure() made, in order: what a live search's runs record beside their samples.
  const std::vector<results::Measurement>& measured() const { return measured_; }

 private:
  SimulatedModel model_;
  std::mt19937_64 rng_;
  std::mt19937_64 cost_rng_;  // the CPU cost's own noise
  std::mt19937_64 counter_rng_;
  std::mt19937_64 neighbour_rng_;
  // The simulated clock (run() and block() advance it) and the neighbour's spells so far.
  double clock_s_ = 0;
  std::vector<std::pair<double, double>> spells_;
  // The share of [from, to) the neighbour ran in.
  double stolen(double from, double to);
  using Normal = std::normal_distribution<double>;
  results::Measurement one_run(const std::set<std::string>& changed, double tps, double seconds,
                               Normal& unit, Normal& cost_unit);
  int calls_ = 0;
  int runs_ = 0;
  std::vector<results::Measurement> measured_;
};

// `n` harmless knobs named k00, k01, ... (factors within ±1%), for tests to plant culprits in.
SimulatedModel harmless_model(int n, std::uint64_t seed = 1);

}  // namespace pgslow::search
