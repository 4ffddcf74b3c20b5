#include "evidence/wait_sampler.h"

#include <cstdlib>
#include <sstream>
#include <utility>

namespace pgslow::evidence {

void name_evidence_connection(pg::Connection& conn) {
  conn.exec(std::string("SET application_name = '") + kEvidenceApplicationName + "'");
}

const std::string kWaitsNowSql =
    "SELECT coalesce(wait_event_type || ':' || wait_event, "
    "CASE WHEN state = 'active' THEN 'CPU' ELSE 'Idle' END), count(*), "
    "string_agg(pid::text, ',') FILTER (WHERE state = 'active' AND wait_event IS NULL), "
    "current_setting('commit_delay')::int > 0 "
    "AND current_setting('server_version_num')::int < 190000 "
    "FROM pg_stat_activity WHERE backend_type = 'client backend' "
    "AND pid <> pg_backend_pid() AND ($1 = '' OR datname = $1) "
    "AND application_name IS DISTINCT FROM '" +
    std::string(kEvidenceApplicationName) + "' GROUP BY 1";

const std::string kLockWaitsNowSql =
    "SELECT count(*) FROM pg_stat_activity "
    "WHERE wait_event_type = 'Lock' AND ($1 = '' OR datname = $1)";

namespace {

constexpr const char* kCpu = "CPU";

// kWaitsNowSql's rows; with `postmaster_pid`, the CPU row's backends are looked up in /proc
// when the reading says so (commit_delay on, read at each sample: a switchback run turns it on
// and off; a server older than 19).
std::map<std::string, std::uint64_t> waits_of(const pg::Result& r,
                                              std::optional<int> postmaster_pid = std::nullopt) {
  std::map<std::string, std::uint64_t> seen;
  std::string cpu_pids;
  for (int i = 0; i < r.rows(); ++i) {
    const std::string wait(r.get(i, 0));
    seen[wait] = static_cast<std::uint64_t>(r.get_int64(i, 1));
    if (wait == kCpu && !r.is_null(i, 2) && std::string(r.get(i, 3)) == "t")
      cpu_pids = std::string(r.get(i, 2));
  }
  if (postmaster_pid && !cpu_pids.empty())
    count_commit_delay_sleeps(seen, cpu_pids, *postmaster_pid);
  return seen;
}

}  // namespace

bool is_timer_sleep(const std::string& wchan) {
  // hrtimer_nanosleep/do_nanosleep: nanosleep(); poll_schedule_timeout/do_select: select()
  // with a timeout. A latch wait sleeps in ep_poll, and PostgreSQL reports every one of those.
  return wchan.find("nanosleep") != std::string::npos ||
         wchan.starts_with("poll_schedule_timeout") || wchan == "do_select";
}

void count_commit_delay_sleeps(std::map<std::string, std::uint64_t>& seen,
                               const std::string& cpu_pids, int postmaster_pid,
                               BackendSleepReader read) {
  std::istringstream list(cpu_pids);
  for (std::string item; std::getline(list, item, ',');) {
    auto cpu = seen.find(kCpu);
    if (cpu == seen.end() || cpu->second == 0) return;
    const int pid = std::atoi(item.c_str());
    if (pid <= 0) continue;
    const std::optional<BackendSleep> b = read(pid);
    if (!b || b->ppid != postmaster_pid || b->state != 'S' || !is_timer_sleep(b->wchan)) continue;
    if (--cpu->second == 0) seen.erase(cpu);
    ++seen[results::kCommitDelayFromProc];
  }
}

std::map<std::string, std::uint64_t> waits_now(pg::Connection& conn, const std::string& database,
                                               std::optional<int> postmaster_pid) {
  return waits_of(conn.exec_params(kWaitsNowSql, {database}), postmaster_pid);
}

WaitCounts wait_delta(const WaitCounts& before, const WaitCounts& after) {
  WaitCounts out;
  add_waits(out, before, after);
  return out;
}

void add_waits(WaitCounts& total, const WaitCounts& before, const WaitCounts& after) {
  if (after.samples < before.samples) return;  // not two readings of one sampler
  total.samples += after.samples - before.samples;
  for (const auto& [wait, n] : after.backends) {
    const auto b = before.backends.find(wait);
    const std::uint64_t was = b == before.backends.end() ? 0 : b->second;
    if (n > was) total.backends[wait] += n - was;
  }
}

WaitSampler::WaitSampler(std::string conninfo, std::string database,
                         std::chrono::milliseconds interval, std::optional<int> postmaster_pid)
    : conninfo_(std::move(conninfo)),
      database_(std::move(database)),
      interval_(interval),
      postmaster_pid_(postmaster_pid) {}

WaitSampler::~WaitSampler() {
  stop();
}

void WaitSampler::open() {
  conn_ = pg::Connection::open(conninfo_);
  name_evidence_connection(conn_);
  // One statement outside any transaction: each execution sees pg_stat_activity afresh.
  conn_.prepare("pgslow_waits", kWaitsNowSql);
}

void WaitSampler::start() {
  if (!conn_.is_open() || thread_.joinable()) return;
  stop_ = false;
  thread_ = std::thread([this] { loop(); });
}

void WaitSampler::stop() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stop_ = true;
  }
  wake_.notify_all();
  if (thread_.joinable()) thread_.join();
  conn_.close();
}

WaitCounts WaitSampler::counts() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return counts_;
}

void WaitSampler::loop() {
  // A fixed schedule, so a slow reading does not stretch the interval for the next ones.
  auto next = std::chrono::steady_clock::now();
  std::unique_lock<std::mutex> lock(mutex_);
  while (!stop_) {
    lock.unlock();
    std::map<std::string, std::uint64_t> seen;
    bool ok = false;
    try {
      seen = waits_of(conn_.exec_prepared("pgslow_waits", {database_}), postmaster_pid_);
      ok = true;
    } catch (const std::exception&) {
      // The server went away (a restart): the profile has fewer samples; the stage says why.
    }
    lock.lock();
    if (ok) {
      ++counts_.samples;
      for (const auto& [wait, n] : seen) counts_.backends[wait] += n;
    }
    next += interval_;
    const auto now = std::chrono::steady_clock::now();
    if (next < now) next = now;  // behind: skip the missed ticks rather than burst
    wake_.wait_until(lock, next, [this] { return stop_.load(); });
  }
}

}  // namespace pgslow::evidence
