#pragma once
// What one run of the live lab reads beside the workload, over its measured window
// (docs/evidence.md): pgslow's own connections to the server (the probe, the lock-wait and
// wait-event samplers), opened BEFORE the clients so clients taking every connection slot
// cannot starve them; the evidence snapshots at the window's ends; the server's CPU times
// and the pooler's counters over the same window; the memory of the clients' idle
// connections; and whether the server is still the one that started the run. Evidence that
// cannot be read (the server went away) is left out, never fatal to the run. Internal to
// runner/experiment/: LabSession::measure_once is its one user.

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>

#include "driver/driver.h"
#include "evidence/evidence.h"
#include "evidence/wait_sampler.h"
#include "experiment/pooler_path.h"
#include "pg/connection.h"
#include "results/model.h"
#include "server/server_control.h"

namespace pgslow::experiment {

// How often the wait sampler reads pg_stat_activity (docs/evidence.md: its cost, measured).
inline constexpr std::chrono::milliseconds kWaitInterval(10);

// The wait samples of a window as the results model holds them.
results::WaitProfile wait_profile(const evidence::WaitCounts& counts);

// What one run measured beside its Measurement, all from its measured window: the evidence
// (the snapshots' delta with the client's side), the window's length, who used the machine's
// CPU (evidence::cpu_shares, when it could be measured) and where the backends waited.
struct RunEvidence {
  std::map<std::string, double> evidence;
  double window_s = 0;
  std::optional<evidence::CpuShares> cpu;
  std::optional<results::WaitProfile> waits;
};

class SwitchbackControl;

class MeasuredWindow {
 public:
  // Opens pgslow's own connections to `database` (empty: the conninfo's own) through
  // `conninfo`, and reads when the server started.
  MeasuredWindow(server::ServerControl& server, PoolerPath& pooler, const std::string& conninfo,
                 const std::string& database, bool wait_sampling);
  MeasuredWindow(const MeasuredWindow&) = delete;
  MeasuredWindow& operator=(const MeasuredWindow&) = delete;

  // The window's ends in the driver's options: the CPU times first (reading /proc takes no
  // server time, while the snapshot's queries wait their turn on a saturated server), then
  // the snapshot; the idle connections' memory once the clients are connected. A switchback
  // run's control takes its own CPU readings and snapshots at each block's ends.
  void hook(driver::DriverOptions& driver, SwitchbackControl* switchback);
  // After the workload: the samplers stop.
  void stop();
  // Throws RuntimeError when the server stopped or restarted during the run.
  void require_same_server();
  // The window's figures: the server's and clients' CPU and the idle connections' memory into
  // `m`, the evidence into `out` (with the client's side of it, the pooler's counters and the
  // cost axes' counters per transaction); "evidence incomplete" in `stage` when a snapshot
  // failed.
  void collect(results::Measurement& m, const driver::DriverOptions& driver,
               results::StageResult& stage, RunEvidence& out);

 private:
  void snapshot(std::optional<evidence::Snapshot>& into);

  server::ServerControl& server_;
  PoolerPath& pooler_;
  std::string database_;
  bool wait_sampling_;
  // A local server: its postmaster, for the /proc figures (CPU times, commit_delay's sleep).
  std::optional<std::filesystem::path> data_dir_;
  std::optional<int> server_pid_;
  evidence::LockWaitSampler lock_waits_;
  evidence::WaitSampler wait_sampler_;
  std::optional<pg::Connection> probe_;
  // When the server started, to tell after the run whether it restarted under the workload,
  // and how many of its processes its memory envelope had killed, to tell whether it did.
  std::uint64_t out_of_memory_kills_ = 0;
  std::optional<std::string> started_at_;
  evidence::SnapshotOptions snap_options_;
  std::optional<evidence::Snapshot> before_, after_;
  std::string evidence_error_;
  // Who else used the CPU while the clock ran (a local server only: its /proc figures).
  std::optional<evidence::CpuTimes> cpu_before_, cpu_after_;
  // The pooler's counters over the same window (docs/pooler.md).
  std::optional<server::PoolerStats> pooler_before_, pooler_after_;
  // The server's memory per idle connection, read from /proc while the clients sit connected
  // before the clock starts (a local server only: its postmaster's children).
  std::optional<evidence::BackendMemory> idle_memory_;
};

}  // namespace pgslow::experiment
