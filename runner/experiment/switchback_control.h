#pragma once
// The live lab's switchback run (LabSession::measure_switchback): what the driver's controlling
// thread asks at every poll, and the wait profile of a measured window. Internal to
// runner/experiment/: lab_session.cpp is its one user.

#include <chrono>
#include <exception>
#include <functional>
#include <map>
#include <optional>
#include <string>

#include "common/clock.h"
#include "driver/driver.h"
#include "evidence/evidence.h"
#include "experiment/measured_window.h"
#include "results/axes.h"
#include "results/switchback.h"

namespace pgslow::experiment {

// Drives a switchback run from the driver's controlling thread (DriverOptions::on_poll): which
// block completions count in, when to switch the configuration, the CPU readings and evidence
// snapshots that bound each block's kept part, and when the run is over.
class SwitchbackControl {
 public:
  // `apply` puts one of the two configurations in place (true: the stage's); it throws what
  // the applier throws.
  SwitchbackControl(results::SwitchbackDesign design, std::function<void(bool)> apply)
      : run_(design), apply_(std::move(apply)) {}

  // Set by measure_once: a CPU reading (nullopt without a local server) and an evidence
  // snapshot (nullopt when it cannot be read).
  std::function<std::optional<evidence::CpuTimes>()> read_cpu;
  std::function<std::optional<evidence::Snapshot>()> snapshot;
  // The clock the blocks are timed by (µs); a test's own in the unit tests.
  std::function<std::int64_t()> clock = now_us;
  // Switchback of the client count: each configuration's clients (0: the reference's, 1: the
  // stage's); both 0 when they run the same (DriverOptions::active_clients).
  int clients[2] = {0, 0};
  bool switches_clients() const { return clients[0] != clients[1]; }
  // The clients the configuration in place wants (asked after every poll).
  int active_clients() const { return clients[applied_block_ % 2]; }

  int poll(double elapsed_s, const driver::BlockReader& blocks) {
    try {
      return step(elapsed_s, blocks);
    } catch (...) {
      // A rejected configuration, an interrupt: the run ends; measure_switchback rethrows.
      failure_ = std::current_exception();
      return driver::kEndWindow;
    }
  }

  // After the run: the block whose kept part ended last is complete too, and every block's
  // latency is the merged accounts' (the same as a look read, or later than it could).
  void finish(const driver::BlockTallies& tallies) {
    tallies_ = tallies;
    if (pending_ >= 0) {
      const auto b = static_cast<std::size_t>(pending_);
      if (!counted_) transactions_ = tallies.finished[b];
      close_pending(tallies.block_latency[b]);
    }
    run_.set_latency(tallies.block_latency);
  }
  const driver::BlockTallies& tallies() const { return tallies_; }

  const results::SwitchbackRun& run() const { return run_; }
  const std::exception_ptr& failure() const { return failure_; }
  // The evidence of each configuration's kept parts together (0: reference, 1: stage).
  const std::map<std::string, double>& evidence(int config) const { return evidence_[config]; }
  // The wait samples of each configuration's kept parts (nullopt: not sampled).
  std::optional<results::WaitProfile> waits(int config) const {
    if (!waits_[config]) return std::nullopt;
    return wait_profile(*waits_[config]);
  }

 private:
  int step(double elapsed_s, const driver::BlockReader& blocks) {
    const results::SwitchbackRun::Position at = run_.at(elapsed_s);
    if (counting_ && at.block != counting_block_) {
      // The kept part ends at this reading; nothing more counts in it from the next store on.
      end_cpu_ = read_cpu ? read_cpu() : std::nullopt;
      end_at_ = clock();
      counting_ = false;
      pending_ = counting_block_;
      return -1;
    }
    if (pending_ >= 0 && !counted_) {
      // One poll later every completion of the block has been counted.
      // The first block follows the data reset: its full-page images and cold pages belong to
      // no configuration, so the baseline's evidence starts with its second block.
      if (kept_before_ && pending_ > 0) {
        if (auto after = snapshot ? snapshot() : std::nullopt) {
          evidence::add_window(evidence_[pending_ % 2], *kept_before_, *after);
          block_evidence_ = evidence::delta(*kept_before_, *after);
          if (kept_before_->waits && after->waits) {
            waits_[pending_ % 2] = waits_[pending_ % 2].value_or(evidence::WaitCounts{});
            evidence::add_waits(*waits_[pending_ % 2], *kept_before_->waits, *after->waits);
          }
        }
      }
      transactions_ = blocks.finished(pending_);
      counted_at_ = clock();
      counted_ = true;
    }
    if (counted_) {
      // Its latency once every worker has published after that poll (0.2 s at most): a look
      // sees p95/p99 as it sees TPS. A worker that never publishes leaves it to the end.
      auto latency = blocks.latency(pending_, counted_at_);
      if (latency || clock() - counted_at_ > kLatencyWaitUs) {
        close_pending(latency.value_or(results::LatencySummary{}));
        if (run_.done()) return driver::kEndWindow;
      } else if (run_.looks_next()) {
        return -1;  // the look may end the run: no switch to the next block's configuration first
      }
    }
    if (at.block != applied_block_) {
      apply_(at.stage);
      applied_block_ = at.block;
      applied_at_ = clock();
      return -1;
    }
    // A block's kept part begins settle_s after its switch, also when the switch came late, and
    // once the clients the configuration wants all run.
    const auto settle_us = static_cast<std::int64_t>(run_.design().settle_s * 1e6);
    if (!counting_ && at.counting && at.block == run_.block() &&
        clock() - applied_at_ >= settle_us &&
        (!blocks.clients_settled || blocks.clients_settled())) {
      kept_before_ = snapshot ? snapshot() : std::nullopt;
      start_cpu_ = read_cpu ? read_cpu() : std::nullopt;
      start_at_ = clock();
      counting_ = true;
      counting_block_ = at.block;
    }
    return counting_ ? counting_block_ : -1;
  }

  void close_pending(const results::LatencySummary& latency) {
    results::SwitchbackBlock b;
    b.seconds = static_cast<double>(end_at_ - start_at_) / 1e6;
    b.transactions = transactions_;
    // Each block's tail is one sample of the latency axes, as its count is of TPS.
    b.p95_us = latency.p95_us;
    b.p99_us = latency.p99_us;
    if (start_cpu_ && end_cpu_) {
      if (const auto shares = evidence::cpu_shares(*start_cpu_, *end_cpu_)) {
        b.server_cpu_s = shares->server_s;
        b.client_cpu_s = shares->clients_s;
        b.neighbour_cpu = shares->neighbours;
      }
    }
    // The block's own counters per transaction: each block is one sample of the cost axes.
    b.per_tx = results::axis_counters(block_evidence_, static_cast<double>(transactions_));
    block_evidence_.clear();
    pending_ = -1;
    counted_ = false;
    run_.add(b);
  }

  static constexpr std::int64_t kLatencyWaitUs = 1'000'000;

  results::SwitchbackRun run_;
  std::function<void(bool)> apply_;
  std::exception_ptr failure_;
  int applied_block_ = 0;        // the reference is in place when the run starts
  std::int64_t applied_at_ = 0;  // when the last switch was made (clock())
  bool counting_ = false;
  int counting_block_ = -1;
  int pending_ = -1;      // a block whose kept part ended and that is not added to the run yet
  bool counted_ = false;  // its count and evidence are read, its latency awaited
  std::uint64_t transactions_ = 0;
  std::int64_t counted_at_ = 0;
  std::optional<evidence::CpuTimes> start_cpu_, end_cpu_;
  std::int64_t start_at_ = 0, end_at_ = 0;
  std::optional<evidence::Snapshot> kept_before_;
  std::map<std::string, double> evidence_[2];
  std::map<std::string, double> block_evidence_;  // the pending block's kept part
  std::optional<evidence::WaitCounts> waits_[2];
  driver::BlockTallies tallies_;
};

}  // namespace pgslow::experiment
