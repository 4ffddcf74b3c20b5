#pragma once
// Server-side evidence of one measured stage: counters snapshotted before and after the
// stage and subtracted, so a figure always belongs to the stage (never a cumulative counter
// since the server started). Version-aware: pg_stat_bgwriter up to 16, pg_stat_checkpointer
// and pg_stat_io from 17, pg_stat_wal from 14 (its write/sync counters moved to pg_stat_io
// in 18). docs/evidence.md describes each key, its source per version, and its limits.

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <filesystem>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "evidence/wait_sampler.h"
#include "pg/connection.h"

namespace pgslow::evidence {

class LockWaitSampler;

struct SnapshotOptions {
  // The stage's database (the clone). Database-wide and table counters are read for it;
  // empty: the connection's current database. Table counters (pg_stat_user_tables) need the
  // connection to be connected to this database, else those keys are absent.
  std::string database;
  // A local server: its data directory (postmaster.pid names the postmaster) or the
  // postmaster's pid directly. Neither: a remote server, and the /proc keys are absent.
  std::optional<std::filesystem::path> data_dir;
  std::optional<int> postmaster_pid;
  // The server log file, when pgslow can read it (log_bytes); absent otherwise.
  std::optional<std::filesystem::path> log_file;
  // 0: ask the connection.
  int server_major = 0;
  // Lock waits sampled during the stage (lock_waits); nullptr: the key is absent.
  const LockWaitSampler* lock_waits = nullptr;
  // The wait sampler running during the stage (Snapshot::waits); nullptr: no wait profile.
  const WaitSampler* waits = nullptr;
};

// One counter as read, with the source it came from (a view or /proc).
struct Counter {
  double value = 0;
  std::string source;  // "pg_stat_database", "pg_stat_bgwriter", "/proc", ...
};

// One live child of the postmaster, as /proc shows it.
struct ServerProcess {
  int pid = 0;
  std::string started;  // its start time (/proc/PID/stat field 22): a reused pid differs
  std::string kind;     // process_kind of its title
  double cpu_seconds = 0;
  std::uint64_t context_switches = 0;  // voluntary + nonvoluntary
};
// What a server process is, from its title ("postgres: checkpointer"): "backends" (client
// backends and their parallel workers), "checkpointer", "walwriter", "bgwriter",
// "autovacuum" (launcher and workers) or "other" (logger, I/O workers, walsenders, ...).
std::string process_kind(const std::string& title);

// What /proc says of the server: see read_server_proc_io.
struct ProcIo {
  std::uint64_t syscr = 0, syscw = 0, read_bytes = 0, write_bytes = 0;
  // Read syscalls of PostgreSQL 18's I/O worker processes (io_method = worker), which read on
  // behalf of the backends; pg_stat_io counts those reads under the issuing backend, so only
  // /proc tells the worker's share (0 with io_method = sync or io_uring).
  std::uint64_t io_worker_syscr = 0;
  int processes = 0;
  // CPU seconds (user + system) of the postmaster, its live children and every child it
  // reaped: the server's whole CPU time.
  double cpu_seconds = 0;
  double user_seconds = 0;  // the user-mode part of it
  // The same split by process: the live children one by one (their kind from the process
  // title, their context switches from /proc/PID/status), and the postmaster's own time and
  // that of the children it reaped (cutime + cstime), which /proc cannot split further.
  std::vector<ServerProcess> children;
  double postmaster_cpu_seconds = 0;
  double reaped_cpu_seconds = 0;
  std::uint64_t postmaster_context_switches = 0;
};
struct Snapshot {
  int server_major = 0;
  std::int64_t taken_at_us = 0;  // monotonic, for the window's length
  // When a source was last reset (stats_reset, postmaster start): a different epoch after the
  // stage means the counters of that source restarted and cannot be subtracted.
  std::map<std::string, std::string> epochs;  // source -> epoch text
  std::map<std::string, Counter> counters;    // evidence key -> cumulative value
  std::map<std::string, Counter> levels;      // evidence key -> value now (dead_tuples)
  std::string log_path;                       // the log file measured for log_bytes
  // The server's processes (a local server): the per-kind CPU and context-switch keys are
  // computed per process across two snapshots, so a process that started or ended between
  // them is counted for its part only (delta()).
  std::optional<ProcIo> proc;
  std::optional<WaitCounts> waits;  // the wait sampler's counts so far
};

// The statistics views as tables: each evidence key a view offers, the SQL expression that reads
// it, its unit and the majors that have it. take_snapshot generates one SELECT per view from
// them and reads each column by its key; docs/evidence.md lists the same per version.
struct StatColumn {
  const char* key;   // the evidence key (knobs/evidence_keys.h), also the column's name
  const char* sql;   // the expression that reads it, e.g. "coalesce(sum(seq_scan), 0)"
  const char* unit;  // "blocks", "bytes", "files", ...
  int since = 0;     // the first major that has it (0: every supported one)
  int until = 0;     // the last major that has it (0: still there)
};
// One view (or one part of pg_stat_io): a source whose counters restart together.
struct StatView {
  const char* source;  // the counters' source and epoch name: "pg_stat_wal", "pg_stat_io wal"
  const char* from;    // the FROM clause (with a WHERE), e.g. "pg_stat_io WHERE object = 'wal'"
  const char* reset;   // the expression of its last reset, or nullptr (another view's epoch)
  int since = 0;
  int until = 0;
  // `from` takes the snapshot's database name as $1 (pg_stat_database's row of it).
  bool database_param = false;
  // A view of the connection's database only (the user tables): read when the snapshot's
  // database is the connection's.
  bool current_database_only = false;
  std::vector<StatColumn> columns;
};
const std::vector<StatView>& stat_views();
// Whether a view or column of [since, until] exists in `major`.
bool in_version(int major, int since, int until);
// The SELECT that reads `view` on `major` (nullopt when the view or all its columns are not
// there): each column named after its key, the reset expression last as stats_reset.
std::optional<std::string> stat_select(const StatView& view, int major);

// Reads every counter this server and this machine offer. Throws pg::Error when the server
// fails; a source that is merely missing (remote /proc, no log file) leaves its keys absent.
Snapshot take_snapshot(pg::Connection& conn, const SnapshotOptions& options);

// The stage's values, keyed by the evidence keys (runner/knobs/evidence_keys.h): counter
// deltas, buffer_hit_ratio over the delta window, levels at the end. A key is absent when
// either snapshot lacks it, when its source was reset between the snapshots, or when it went
// backwards (a reset the epochs did not show): never 0 for "unknown".
std::map<std::string, double> delta(const Snapshot& before, const Snapshot& after);

// Adds the window from `before` to `after` to `total`, the evidence of several windows taken
// together (a switchback run's blocks of one configuration): counters add up, levels are the
// latest, buffer_hit_ratio is over the sums.
void add_window(std::map<std::string, double>& total, const Snapshot& before,
                const Snapshot& after);

// Seconds between the two snapshots (the window the evidence covers).
double window_seconds(const Snapshot& before, const Snapshot& after);

// The sum of /proc/PID/io over the postmaster and its children, or nullopt when any part
// cannot be read (no such process, permission). Exposed for tests.
std::optional<ProcIo> read_server_proc_io(int postmaster_pid);

// Who used this machine's CPU, from /proc: the whole machine's busy time (/proc/stat, every
// core), the server's (read_server_proc_io; absent for a remote server), this process's, and
// that of its threads other than the clients (kClientThreadName, common/process.h): those live
// across a measured window, while the clients may end before its last reading.
struct CpuTimes {
  double machine_busy_s = 0;
  double machine_user_s = 0;  // user and nice
  std::optional<double> server_s;
  std::optional<double> server_user_s;
  double self_s = 0;
  double self_user_s = 0;
  double beside_clients_s = 0;
  int cores = 1;
  std::int64_t taken_at_us = 0;
};
CpuTimes read_cpu_times(std::optional<int> postmaster_pid);

// Between two readings, as fractions of the machine's capacity (cores x wall time): the
// server's, pgslow's clients', the rest of pgslow's (its dashboard answering a room, the
// evidence sampler) and other programs'. `disturbance()` is what a stage's figures did not ask
// for: another program, a CPU hog, a flood of dashboard requests. nullopt when the server's
// share is unknown or the window is empty.
struct CpuShares {
  double window_s = 0;
  double server = 0, clients = 0, pgslow_other = 0, other_programs = 0;
  double server_s = 0, clients_s = 0;  // CPU seconds, not shares
  // Other programs' user-mode time alone: what a neighbour (a build, a CPU hog) takes, and
  // not the kernel's work on the server's behalf (its I/O, its sockets' interrupts), which
  // the stage itself changes. The covariate a comparison subtracts (Measurement::
  // neighbour_cpu).
  double neighbours = 0;
  double disturbance() const { return pgslow_other + other_programs; }
};
std::optional<CpuShares> cpu_shares(const CpuTimes& before, const CpuTimes& after);

// The share of the machine other programs may take during a stage before its report says
// the machine was disturbed (docs/reading-the-report.md).
inline constexpr double kDisturbedShare = 0.15;

// The postmaster's pid from <data_dir>/postmaster.pid, nullopt when absent or unreadable.
std::optional<int> postmaster_pid_of(const std::filesystem::path& data_dir);

// The server's memory held by a set of backends: the proportional set size of each
// (/proc/PID/smaps_rollup "Pss:": private pages plus each shared page divided among the
// processes that map it, so the sum over processes does not count shared memory twice).
// Only children of `postmaster_pid` count; nullopt when none can be read (a remote server,
// no permission).
struct BackendMemory {
  int backends = 0;
  std::uint64_t pss_bytes = 0;  // summed over the backends
};
std::optional<BackendMemory> backend_memory(const std::vector<int>& pids, int postmaster_pid);
// Pss of one process in bytes, nullopt when unreadable. Exposed for tests.
std::optional<std::uint64_t> read_pss_bytes(int pid);

// Samples, in its own connection, how many backends of the database wait on a heavyweight
// lock (pg_stat_activity.wait_event_type = 'Lock'), every `interval`. The running total is
// backend-seconds of lock waiting, estimated: a wait shorter than the interval may be missed,
// one longer is counted to within an interval. Honest but coarse; docs/evidence.md.
class LockWaitSampler {
 public:
  LockWaitSampler(std::string conninfo, std::string database,
                  std::chrono::milliseconds interval = std::chrono::milliseconds(100));
  ~LockWaitSampler();
  LockWaitSampler(const LockWaitSampler&) = delete;
  LockWaitSampler& operator=(const LockWaitSampler&) = delete;

  // Connects (throws pg::Error). Call it before the workload's clients connect, so they cannot
  // take the last connection slot from it.
  void open();
  // Starts the sampling thread; connects first when open() was not called. Without a
  // connection (the server refused it) nothing is sampled and the key stays absent: the
  // sampler never fails a run.
  void start();
  void stop();                     // idempotent; the total stays readable
  double backend_seconds() const;  // so far, cumulative
  std::uint64_t samples() const { return samples_.load(); }

 private:
  void loop();
  std::string conninfo_;
  std::string database_;
  std::chrono::milliseconds interval_;
  pg::Connection conn_;
  std::thread thread_;
  std::mutex mutex_;
  std::condition_variable wake_;  // stop() wakes the sampler at once instead of after a tick
  std::atomic<bool> stop_{false};
  std::atomic<std::uint64_t> waiting_samples_{0};  // sum over samples of waiting backends
  std::atomic<std::uint64_t> samples_{0};
};

}  // namespace pgslow::evidence
