#include "evidence/evidence.h"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstdlib>
#include <fstream>
#include <limits>
#include <set>
#include <sstream>
#include <utility>

#include "common/clock.h"
#include "common/process.h"
#include "evidence/evidence_sources.h"
#include "evidence/wait_sampler.h"
#include "knobs/evidence_keys.h"
#include "pg/data_dir.h"

namespace pgslow::evidence {

namespace {

std::string text(const pg::Result& r, int col) {
  return r.is_null(0, col) ? std::string() : std::string(r.get(0, col));
}

// Reads the views of stat_views() this major has, one SELECT each, every column by its key.
void read_views(pg::Connection& conn, const std::string& db, bool db_is_current, int major,
                const std::string& start, Snapshot& s) {
  for (const StatView& view : stat_views()) {
    if (view.current_database_only && !db_is_current) continue;
    const std::optional<std::string> sql = stat_select(view, major);
    if (!sql) continue;
    const pg::Result r = view.database_param ? conn.exec_params(*sql, {db}) : conn.exec(*sql);
    if (r.rows() == 0) continue;  // no row for the database (dropped meanwhile)
    for (const StatColumn& c : view.columns) {
      if (!in_version(major, c.since, c.until)) continue;
      const Counter value{r.get_double(0, r.column(c.key)), view.source};
      // Levels (dead_tuples) are the value now; the catalog says which keys are.
      if (knobs::evidence_info(c.key).scale == knobs::EvidenceScale::kLevel)
        s.levels[c.key] = value;
      else
        s.counters[c.key] = value;
    }
    if (view.reset) s.epochs[view.source] = start + "|" + text(r, r.column("stats_reset"));
  }
  // pg_stat_reset() in the database resets its table counters too.
  if (auto it = s.epochs.find(kDatabase); it != s.epochs.end()) s.epochs[kTables] = it->second;
}

// The fields of a /proc stat file (a process's or a thread's) after the command name, which
// may hold spaces and parens.
std::optional<std::vector<std::string>> stat_fields_of(const std::filesystem::path& stat) {
  std::ifstream in(stat);
  std::string line;
  if (!in || !std::getline(in, line)) return std::nullopt;
  const auto close = line.rfind(')');
  if (close == std::string::npos) return std::nullopt;
  std::istringstream rest(line.substr(close + 1));
  std::vector<std::string> fields;
  for (std::string f; rest >> f;) fields.push_back(f);
  return fields;  // fields[0] is the state (field 3), fields[1] the ppid (field 4)
}

std::optional<std::vector<std::string>> stat_fields(int pid) {
  return stat_fields_of("/proc/" + std::to_string(pid) + "/stat");
}

// utime + stime + cutime + cstime (fields 14 to 17) in seconds, from stat_fields' vector;
// without `reaped`, utime + stime only (the process's own time).
double cpu_seconds_of(const std::vector<std::string>& fields, bool reaped = true) {
  static const double ticks = static_cast<double>(::sysconf(_SC_CLK_TCK));
  if (fields.size() < 15) return 0;
  double total = 0;
  for (std::size_t i = 11; i <= (reaped ? 14u : 12u); ++i)
    total += std::strtod(fields[i].c_str(), nullptr);
  return total / ticks;
}

// The user-mode part: utime, and with `reaped` the reaped children's cutime.
double user_seconds_of(const std::vector<std::string>& fields, bool reaped = true) {
  static const double ticks = static_cast<double>(::sysconf(_SC_CLK_TCK));
  if (fields.size() < 15) return 0;
  const double utime = std::strtod(fields[11].c_str(), nullptr);
  return (reaped ? utime + std::strtod(fields[13].c_str(), nullptr) : utime) / ticks;
}

// A process's title (the first element of its cmdline), empty when unreadable.
std::string process_title(int pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/cmdline");
  std::string title;
  std::getline(in, title, '\0');
  return title;
}

// Voluntary + nonvoluntary context switches of a process (/proc/PID/status), 0 when unreadable.
std::uint64_t context_switches_of(int pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/status");
  std::uint64_t total = 0;
  for (std::string line; std::getline(in, line);) {
    if (line.starts_with("voluntary_ctxt_switches:") ||
        line.starts_with("nonvoluntary_ctxt_switches:"))
      total += std::strtoull(line.c_str() + line.find(':') + 1, nullptr, 10);
  }
  return total;
}

// One process's io counters; nullopt when unreadable.
std::optional<ProcIo> read_proc_io(int pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/io");
  if (!in) return std::nullopt;
  ProcIo io;
  std::string key;
  std::uint64_t value = 0;
  bool any = false;
  while (in >> key >> value) {
    any = true;
    if (key == "syscr:") io.syscr = value;
    if (key == "syscw:") io.syscw = value;
    if (key == "read_bytes:") io.read_bytes = value;
    if (key == "write_bytes:") io.write_bytes = value;
  }
  if (!any) return std::nullopt;
  io.processes = 1;
  return io;
}

void read_proc(const SnapshotOptions& options, Snapshot& s) {
  std::optional<int> pid = options.postmaster_pid;
  if (!pid && options.data_dir) pid = postmaster_pid_of(*options.data_dir);
  if (!pid) return;
  const auto io = read_server_proc_io(*pid);
  if (!io) return;
  // The postmaster's start time (field 22) tells a restarted server with a reused pid apart.
  const auto fields = stat_fields(*pid);
  const std::string started = fields && fields->size() > 19 ? (*fields)[19] : "";
  s.epochs[kProc] = std::to_string(*pid) + "|" + started;
  s.counters["read_syscalls"] = Counter{static_cast<double>(io->syscr), kProc};
  s.counters["server_cpu_ms"] = Counter{io->cpu_seconds * 1000.0, kProc};
  s.counters["write_syscalls"] = Counter{static_cast<double>(io->syscw), kProc};
  s.counters["read_bytes"] = Counter{static_cast<double>(io->read_bytes), kProc};
  s.counters["write_bytes"] = Counter{static_cast<double>(io->write_bytes), kProc};
  // I/O workers exist from 18 on; before, the key is absent rather than 0.
  if (s.server_major >= 18)
    s.counters["io_worker_reads"] = Counter{static_cast<double>(io->io_worker_syscr), kProc};
  s.proc = *io;
}

// The server's CPU per kind of process and its context switches between two snapshots, per
// process: one that started in the window counts whole, one that ended counts in "other" (its
// time is in the postmaster's reaped total, which /proc does not split) and its switches are
// lost (docs/evidence.md).
void add_process_keys(const ProcIo& before, const ProcIo& after,
                      std::map<std::string, double>& out) {
  std::map<std::pair<int, std::string>, const ServerProcess*> was;
  for (const auto& p : before.children) was[{p.pid, p.started}] = &p;
  std::map<std::string, double> cpu = {{"backends", 0}, {"checkpointer", 0}, {"walwriter", 0},
                                       {"bgwriter", 0}, {"autovacuum", 0},   {"other", 0}};
  double switches = static_cast<double>(after.postmaster_context_switches) -
                    static_cast<double>(before.postmaster_context_switches);
  double ended_before_s = 0;  // what the ended processes had used before the window
  std::set<std::pair<int, std::string>> live;
  for (const auto& p : after.children) {
    live.insert({p.pid, p.started});
    const auto b = was.find({p.pid, p.started});
    const double cpu_s = p.cpu_seconds - (b == was.end() ? 0 : b->second->cpu_seconds);
    const double cs = static_cast<double>(p.context_switches) -
                      (b == was.end() ? 0 : static_cast<double>(b->second->context_switches));
    cpu[p.kind] += std::max(0.0, cpu_s);
    switches += std::max(0.0, cs);
  }
  for (const auto& p : before.children)
    if (live.count({p.pid, p.started}) == 0) ended_before_s += p.cpu_seconds;
  cpu["other"] +=
      std::max(0.0, after.postmaster_cpu_seconds - before.postmaster_cpu_seconds) +
      std::max(0.0, after.reaped_cpu_seconds - before.reaped_cpu_seconds - ended_before_s);
  for (const auto& [kind, seconds] : cpu) out["cpu_" + kind + "_ms"] = seconds * 1000;
  out["context_switches"] = std::max(0.0, switches);
}

void read_log(const SnapshotOptions& options, Snapshot& s) {
  if (!options.log_file) return;
  struct stat st {};
  if (::stat(options.log_file->c_str(), &st) != 0) return;
  // A rotated log is a new inode: the epoch changes and log_bytes is absent for the stage.
  s.epochs[kLog] = options.log_file->string() + "|" + std::to_string(st.st_ino);
  s.counters["log_bytes"] = Counter{static_cast<double>(st.st_size), kLog};
  s.log_path = options.log_file->string();
}

}  // namespace

std::optional<BackendSleep> read_backend_sleep(int pid) {
  const auto fields = stat_fields(pid);
  if (!fields || fields->size() < 2 || (*fields)[0].empty()) return std::nullopt;
  BackendSleep out{(*fields)[0][0], std::atoi((*fields)[1].c_str()), {}};
  std::ifstream in("/proc/" + std::to_string(pid) + "/wchan");
  std::getline(in, out.wchan);
  return out;
}

std::string process_kind(const std::string& title) {
  // Auxiliary processes are named after "postgres: " (and a cluster_name, when set).
  static const std::pair<const char*, const char*> kinds[] = {{": checkpointer", "checkpointer"},
                                                              {": walwriter", "walwriter"},
                                                              {": background writer", "bgwriter"},
                                                              {": autovacuum", "autovacuum"},
                                                              {": logger", "other"},
                                                              {": io worker", "other"},
                                                              {": walsender", "other"},
                                                              {": walreceiver", "other"},
                                                              {": archiver", "other"},
                                                              {": startup", "other"},
                                                              {": stats collector", "other"},
                                                              {": logical replication", "other"},
                                                              {": walsummarizer", "other"},
                                                              {": slotsync", "other"}};
  for (const auto& [marker, kind] : kinds)
    if (title.find(marker) != std::string::npos) return kind;
  return title.starts_with("postgres") ? "backends" : "other";
}

std::optional<int> postmaster_pid_of(const std::filesystem::path& data_dir) {
  const std::optional<pg::PostmasterPidFile> f = pg::read_postmaster_pid(data_dir);
  if (!f || f->pid <= 0) return std::nullopt;
  return f->pid;
}

std::optional<std::uint64_t> read_pss_bytes(int pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/smaps_rollup");
  std::string key;
  std::uint64_t kb = 0;
  while (in >> key) {
    if (key == "Pss:" && (in >> kb)) return kb * 1024;
    in.ignore(std::numeric_limits<std::streamsize>::max(), '\n');
  }
  return std::nullopt;
}

std::optional<BackendMemory> backend_memory(const std::vector<int>& pids, int postmaster_pid) {
  BackendMemory out;
  for (int pid : pids) {
    // A pid of another machine's server (or reused since) is no child of our postmaster.
    const auto fields = stat_fields(pid);
    if (!fields || fields->size() < 2 || (*fields)[1] != std::to_string(postmaster_pid)) continue;
    const auto pss = read_pss_bytes(pid);
    if (!pss) continue;
    out.pss_bytes += *pss;
    out.backends += 1;
  }
  if (out.backends == 0) return std::nullopt;
  return out;
}

namespace {

// One pass of read_server_proc_io. `consistent` turns false when a child left while it was
// read: its counters then moved to the parent before or after the parent was read, so the sum
// may count it twice or not at all (a run's clients disconnect while its window closes).
std::optional<ProcIo> read_server_proc_io_once(int postmaster_pid, bool& consistent) {
  consistent = true;
  // The postmaster's own counters include those of every child it has reaped (the kernel adds
  // a reaped child's io to its parent's signal struct, which /proc/PID/io reports), so backends
  // that exited during the stage are counted too; the live children are added one by one.
  auto total = read_proc_io(postmaster_pid);
  if (!total) return std::nullopt;
  const std::uint64_t parent_syscr = total->syscr;
  const auto own = stat_fields(postmaster_pid);
  if (own) {
    total->cpu_seconds = cpu_seconds_of(*own);
    total->user_seconds = user_seconds_of(*own);
    total->postmaster_cpu_seconds = cpu_seconds_of(*own, false);
    total->reaped_cpu_seconds = total->cpu_seconds - total->postmaster_cpu_seconds;
    total->postmaster_context_switches = context_switches_of(postmaster_pid);
  }
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator("/proc", ec)) {
    const std::string name = entry.path().filename().string();
    int pid = 0;
    const auto [end, err] = std::from_chars(name.data(), name.data() + name.size(), pid);
    if (err != std::errc() || end != name.data() + name.size() || pid == postmaster_pid) continue;
    const auto fields = stat_fields(pid);
    if (!fields || fields->size() < 2 || (*fields)[1] != std::to_string(postmaster_pid)) continue;
    errno = 0;
    const auto io = read_proc_io(pid);
    if (!io) {
      if (errno == EACCES) return std::nullopt;  // a partial sum would be wrong, not small
      consistent = false;                        // exited while we looked
      continue;
    }
    const std::string title = process_title(pid);
    if (title.find("io worker") != std::string::npos) total->io_worker_syscr += io->syscr;
    const double cpu_s = cpu_seconds_of(*fields);
    total->cpu_seconds += cpu_s;
    total->user_seconds += user_seconds_of(*fields);
    total->children.push_back({pid, fields->size() > 19 ? (*fields)[19] : "", process_kind(title),
                               cpu_s, context_switches_of(pid)});
    total->syscr += io->syscr;
    total->syscw += io->syscw;
    total->read_bytes += io->read_bytes;
    total->write_bytes += io->write_bytes;
    total->processes += 1;
  }
  if (ec) return std::nullopt;
  // A child reaped since the parent was read moved its counters to the parent meanwhile.
  const auto again = read_proc_io(postmaster_pid);
  const auto own_again = stat_fields(postmaster_pid);
  if (!again || !own_again || !own || again->syscr != parent_syscr ||
      cpu_seconds_of(*own_again) != cpu_seconds_of(*own))
    consistent = false;
  return total;
}

}  // namespace

std::optional<ProcIo> read_server_proc_io(int postmaster_pid) {
  std::optional<ProcIo> io;
  for (int attempt = 0; attempt < 5; ++attempt) {
    bool consistent = false;
    io = read_server_proc_io_once(postmaster_pid, consistent);
    if (!io || consistent) break;
  }
  return io;
}

CpuTimes read_cpu_times(std::optional<int> postmaster_pid) {
  static const double ticks = static_cast<double>(::sysconf(_SC_CLK_TCK));
  CpuTimes t;
  // "cpu  user nice system idle iowait irq softirq steal guest guest_nice", in ticks.
  std::ifstream machine("/proc/stat");
  std::string label;
  double v[8] = {};
  if (machine >> label >> v[0] >> v[1] >> v[2] >> v[3] >> v[4] >> v[5] >> v[6] >> v[7] &&
      label == "cpu") {
    t.machine_busy_s = (v[0] + v[1] + v[2] + v[5] + v[6] + v[7]) / ticks;
    t.machine_user_s = (v[0] + v[1]) / ticks;
  }
  t.cores = std::max(1, static_cast<int>(::sysconf(_SC_NPROCESSORS_ONLN)));
  if (postmaster_pid) {
    if (const auto io = read_server_proc_io(*postmaster_pid)) {
      t.server_s = io->cpu_seconds;
      t.server_user_s = io->user_seconds;
    }
  }
  // This process's own time only: a thread's stat also carries the whole process's reaped
  // children (initdb, pg_ctl), which a thread started within the window would otherwise bring
  // in as pgslow's; a child reaped within it counts as another program's.
  if (const auto self = stat_fields(static_cast<int>(::getpid()))) {
    t.self_s = cpu_seconds_of(*self, false);
    t.self_user_s = user_seconds_of(*self, false);
  }
  std::error_code ec;
  for (const auto& task : std::filesystem::directory_iterator("/proc/self/task", ec)) {
    std::ifstream comm(task.path() / "comm");
    std::string name;
    if (!std::getline(comm, name) || name == kClientThreadName) continue;
    if (const auto fields = stat_fields_of(task.path() / "stat"))
      t.beside_clients_s += cpu_seconds_of(*fields, false);
  }
  t.taken_at_us = now_us();
  return t;
}

std::optional<CpuShares> cpu_shares(const CpuTimes& before, const CpuTimes& after) {
  if (!before.server_s || !after.server_s || after.taken_at_us <= before.taken_at_us)
    return std::nullopt;
  CpuShares s;
  s.window_s = static_cast<double>(after.taken_at_us - before.taken_at_us) / 1e6;
  const double capacity = s.window_s * after.cores;
  const double busy = after.machine_busy_s - before.machine_busy_s;
  const double server = *after.server_s - *before.server_s;
  const double self = after.self_s - before.self_s;
  // The clients' share is the rest of pgslow's: client threads that ended before the last
  // reading are no longer listed, but their time stays in the process's.
  const double beside =
      std::clamp(after.beside_clients_s - before.beside_clients_s, 0.0, std::max(0.0, self));
  const double clients = self - beside;
  // A server child that exited since the first reading moves its time from "live child" to
  // "reaped" without a change in the sum; a negative figure is a restart: unknown.
  if (capacity <= 0 || server < 0 || self < 0 || busy < 0) return std::nullopt;
  s.server_s = server;
  s.clients_s = clients;
  s.server = server / capacity;
  s.clients = clients / capacity;
  s.pgslow_other = (self - clients) / capacity;
  s.other_programs = std::max(0.0, (busy - server - self) / capacity);
  if (after.server_user_s && before.server_user_s) {
    const double others_user = (after.machine_user_s - before.machine_user_s) -
                               (*after.server_user_s - *before.server_user_s) -
                               (after.self_user_s - before.self_user_s);
    s.neighbours = std::max(0.0, others_user / capacity);
  }
  return s;
}

Snapshot take_snapshot(pg::Connection& conn, const SnapshotOptions& options) {
  Snapshot s;
  s.server_major = options.server_major > 0 ? options.server_major : conn.major_version();
  // A caller's open transaction would otherwise see the statistics cached at its first read.
  conn.exec("SELECT pg_stat_clear_snapshot()");
  const pg::Result who = conn.exec("SELECT current_database(), pg_postmaster_start_time()::text");
  const std::string current(who.get(0, 0));
  const std::string start(who.get(0, 1));
  const std::string db = options.database.empty() ? current : options.database;
  read_views(conn, db, db == current, s.server_major, start, s);
  read_proc(options, s);
  read_log(options, s);
  if (options.lock_waits != nullptr) {
    s.counters["lock_waits"] = Counter{options.lock_waits->backend_seconds(), kSampler};
  }
  if (options.waits != nullptr) s.waits = options.waits->counts();
  s.taken_at_us = now_us();
  return s;
}

namespace {

// buffer_hit_ratio over the window's blocks_hit and blocks_read, when both are there.
void set_hit_ratio(std::map<std::string, double>& evidence) {
  const auto read = evidence.find("blocks_read");
  const auto hit = evidence.find("blocks_hit");
  if (read != evidence.end() && hit != evidence.end() && read->second + hit->second > 0)
    evidence["buffer_hit_ratio"] = hit->second / (read->second + hit->second);
}

}  // namespace

std::map<std::string, double> delta(const Snapshot& before, const Snapshot& after) {
  std::map<std::string, double> out;
  auto same_epoch = [&](const std::string& source) {
    const auto b = before.epochs.find(source);
    const auto a = after.epochs.find(source);
    const bool b_has = b != before.epochs.end();
    const bool a_has = a != after.epochs.end();
    return b_has == a_has && (!b_has || b->second == a->second);
  };
  for (const auto& [key, a] : after.counters) {
    const auto b = before.counters.find(key);
    if (b == before.counters.end() || b->second.source != a.source) continue;
    if (!same_epoch(a.source)) continue;
    if (a.value < b->second.value) continue;  // went backwards: a reset the epoch missed
    out[key] = a.value - b->second.value;
  }
  for (const auto& [key, a] : after.levels) {
    if (before.levels.count(key) != 0) out[key] = a.value;
  }
  if (before.proc && after.proc && same_epoch(kProc))
    add_process_keys(*before.proc, *after.proc, out);
  set_hit_ratio(out);
  return out;
}

void add_window(std::map<std::string, double>& total, const Snapshot& before,
                const Snapshot& after) {
  for (const auto& [key, value] : delta(before, after)) {
    if (key == "buffer_hit_ratio" || after.levels.count(key) != 0)
      total[key] = value;
    else
      total[key] += value;
  }
  set_hit_ratio(total);
}

double window_seconds(const Snapshot& before, const Snapshot& after) {
  return static_cast<double>(after.taken_at_us - before.taken_at_us) / 1e6;
}

LockWaitSampler::LockWaitSampler(std::string conninfo, std::string database,
                                 std::chrono::milliseconds interval)
    : conninfo_(std::move(conninfo)), database_(std::move(database)), interval_(interval) {}

LockWaitSampler::~LockWaitSampler() {
  stop();
}

void LockWaitSampler::open() {
  conn_ = pg::Connection::open(conninfo_);
  name_evidence_connection(conn_);
  conn_.prepare("pgslow_lock_waits", kLockWaitsNowSql);
}

void LockWaitSampler::start() {
  if (!conn_.is_open()) {
    try {
      open();
    } catch (const pg::Error&) {
      conn_.close();
      return;
    }
  }
  stop_ = false;
  thread_ = std::thread([this] { loop(); });
}

void LockWaitSampler::stop() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stop_ = true;
  }
  wake_.notify_all();
  if (thread_.joinable()) thread_.join();
  conn_.close();
}

double LockWaitSampler::backend_seconds() const {
  return static_cast<double>(waiting_samples_.load()) * static_cast<double>(interval_.count()) /
         1000.0;
}

void LockWaitSampler::loop() {
  std::unique_lock<std::mutex> lock(mutex_);
  while (!stop_) {
    lock.unlock();
    try {
      conn_.exec("SELECT pg_stat_clear_snapshot()");
      const pg::Result r = conn_.exec_prepared("pgslow_lock_waits", {database_});
      waiting_samples_ += static_cast<std::uint64_t>(r.get_int64(0, 0));
      ++samples_;
    } catch (const std::exception&) {
      // The server went away (a restart): lock_waits under-counts; the stage reports the rest.
    }
    lock.lock();
    wake_.wait_for(lock, interval_, [this] { return stop_.load(); });
  }
}

}  // namespace pgslow::evidence
