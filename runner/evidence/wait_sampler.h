#pragma once
// Where the backends spent their time: one extra connection reads pg_stat_activity's
// wait_event_type and wait_event for the run's backends every few milliseconds (one prepared
// statement, no transaction held) and counts, per wait, how many backends were in it. A backend
// that is active without a wait event counts as "CPU" (it runs, or waits for a CPU); one that
// waits for its client shows Client:ClientRead. Each wait's share of the backend-samples is its
// share of backend time, to within the sampling (docs/evidence.md "Where the time went").
//
// PostgreSQL 15 to 18 sleep commit_delay without reporting a wait event: on a local server the
// sampler reads that sleep from /proc instead (count_commit_delay_sleeps).
//
// The counts are cumulative; a stage takes two readings (wait_counts) and subtracts them
// (wait_delta), so a switchback run can give each configuration its own blocks' samples.

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <thread>

#include "pg/connection.h"
#include "results/waits.h"

namespace pgslow::evidence {

// The application_name of pgslow's own evidence connections (the probe, the samplers): the
// wait sampler leaves them out of the run's backends.
inline constexpr const char* kEvidenceApplicationName = "pgslow evidence";
// Names `conn` with kEvidenceApplicationName (SET application_name; throws pg::Error).
void name_evidence_connection(pg::Connection& conn);

// Cumulative sample counts: `samples` readings of pg_stat_activity; `backends[wait]` the
// backends found in `wait` ("CPU", "IO:DataFileRead", ...) summed over those readings.
struct WaitCounts {
  std::uint64_t samples = 0;
  std::map<std::string, std::uint64_t> backends;

  bool operator==(const WaitCounts&) const = default;
};

// PostgreSQL 15 to 18 sleep commit_delay (in XLogFlush, holding WALWriteLock) without reporting
// a wait event: pg_stat_activity shows the sleeper active with none, which reads as "CPU". While
// commit_delay is on, a local server's "CPU" backends are looked up in /proc, and one asleep on a
// kernel timer (is_timer_sleep) counts as results::kCommitDelayFromProc: the only sleep those
// versions take unreported in a client backend's path. A server that reports the sleep itself
// (PostgreSQL 19) shows Timeout:CommitDelay, and is not looked up (kWaitsNowSql says when).
//
// Whether /proc/PID/wchan names a sleep on a kernel timer: nanosleep (pg_usleep from
// PostgreSQL 16) or select with a timeout (pg_usleep on 15).
bool is_timer_sleep(const std::string& wchan);

// What /proc says of one backend: its scheduler state ('S' asleep), its parent, its wchan.
struct BackendSleep {
  char state = '?';
  int ppid = 0;
  std::string wchan;
};
using BackendSleepReader = std::optional<BackendSleep> (*)(int pid);
// /proc/PID/stat and /proc/PID/wchan; nullopt when unreadable (evidence.cpp, with the other
// /proc readers).
std::optional<BackendSleep> read_backend_sleep(int pid);
// Moves each backend of `cpu_pids` ("12,34": the "CPU" row's pids) that `read` finds asleep on a
// timer, as a child of `postmaster_pid`, from "CPU" to results::kCommitDelayFromProc in `seen`. A
// pid that is gone, running, or not the postmaster's child stays CPU.
void count_commit_delay_sleeps(std::map<std::string, std::uint64_t>& seen,
                               const std::string& cpu_pids, int postmaster_pid,
                               BackendSleepReader read = read_backend_sleep);

// One reading of pg_stat_activity: how many client backends of `database` ("" every database)
// are in each wait now, pgslow's own connections and `conn` left out. $1 is the database.
// Columns: the wait, the backends in it, the pids of the "CPU" row's backends (NULL on the
// others), whether to look those up in /proc (commit_delay on, a server older than 19).
extern const std::string kWaitsNowSql;
// How many backends of `database` ("" every database) wait on a heavyweight lock now.
extern const std::string kLockWaitsNowSql;
// kWaitsNowSql's rows, read once (throws pg::Error): the dashboard's reading each second.
// `postmaster_pid`: a local server's, to look commit_delay's sleep up in /proc as the sampler
// does.
std::map<std::string, std::uint64_t> waits_now(pg::Connection& conn, const std::string& database,
                                               std::optional<int> postmaster_pid = std::nullopt);

// after - before (counts only grow); `total` += that, for several windows taken together.
WaitCounts wait_delta(const WaitCounts& before, const WaitCounts& after);
void add_waits(WaitCounts& total, const WaitCounts& before, const WaitCounts& after);

class WaitSampler {
 public:
  // `database`: the run's database (the clone); empty samples every database.
  // `postmaster_pid`: a local server's, to read commit_delay's unreported sleep from /proc.
  WaitSampler(std::string conninfo, std::string database,
              std::chrono::milliseconds interval = std::chrono::milliseconds(10),
              std::optional<int> postmaster_pid = std::nullopt);
  ~WaitSampler();
  WaitSampler(const WaitSampler&) = delete;
  WaitSampler& operator=(const WaitSampler&) = delete;

  // Connects and prepares (throws pg::Error). Call it before the workload's clients connect,
  // so they cannot take the last connection slot from it.
  void open();
  // Starts the sampling thread. Without a connection (open() failed or was not called)
  // nothing is sampled and the counts stay empty: the sampler never fails a run.
  void start();
  void stop();  // idempotent; the counts stay readable
  WaitCounts counts() const;

 private:
  void loop();
  std::string conninfo_;
  std::string database_;
  std::chrono::milliseconds interval_;
  std::optional<int> postmaster_pid_;
  pg::Connection conn_;
  std::thread thread_;
  mutable std::mutex mutex_;  // guards counts_ and stop_'s wake-up
  std::condition_variable wake_;
  std::atomic<bool> stop_{false};
  WaitCounts counts_;
};

}  // namespace pgslow::evidence
