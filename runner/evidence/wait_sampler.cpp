#include "evidence/wait_sampler.h"

#include <utility>

namespace pgslow::evidence {

void name_evidence_connection(pg::Connection& conn) {
  conn.exec(std::string("SET application_name = '") + kEvidenceApplicationName + "'");
}

const std::string kWaitsNowSql =
    "SELECT coalesce(wait_event_type || ':' || wait_event, "
    "CASE WHEN state = 'active' THEN 'CPU' ELSE 'Idle' END), count(*) "
    "FROM pg_stat_activity WHERE backend_type = 'client backend' "
    "AND pid <> pg_backend_pid() AND ($1 = '' OR datname = $1) "
    "AND application_name IS DISTINCT FROM '" +
    std::string(kEvidenceApplicationName) + "' GROUP BY 1";

const std::string kLockWaitsNowSql =
    "SELECT count(*) FROM pg_stat_activity "
    "WHERE wait_event_type = 'Lock' AND ($1 = '' OR datname = $1)";

namespace {

std::map<std::string, std::uint64_t> waits_of(const pg::Result& r) {
  std::map<std::string, std::uint64_t> seen;
  for (int i = 0; i < r.rows(); ++i)
    seen[std::string(r.get(i, 0))] = static_cast<std::uint64_t>(r.get_int64(i, 1));
  return seen;
}

}  // namespace

std::map<std::string, std::uint64_t> waits_now(pg::Connection& conn, const std::string& database) {
  return waits_of(conn.exec_params(kWaitsNowSql, {database}));
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
                         std::chrono::milliseconds interval)
    : conninfo_(std::move(conninfo)), database_(std::move(database)), interval_(interval) {}

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
      seen = waits_of(conn_.exec_prepared("pgslow_waits", {database_}));
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
