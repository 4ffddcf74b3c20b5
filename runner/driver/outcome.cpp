#include "driver/outcome.h"

#include <algorithm>
#include <optional>

#include "common/clock.h"

namespace pgslow::driver {

namespace {
// Not a temporary inside co_await: GCC 12 can destroy such temporaries twice.
const std::string kRollback = "ROLLBACK";
}  // namespace

std::int64_t backoff_us(const RetryPolicy& policy, int retry, Random& rng) {
  const int doublings = std::clamp(retry - 1, 0, 30);
  const std::int64_t ceiling = std::min(policy.backoff_cap_us, policy.backoff_base_us << doublings);
  return ceiling > 0 ? rng.uniform(0, ceiling) : 0;
}

Task<Outcome> run_with_retries(workload::Client& client, workload::Session& session,
                               const RetryPolicy& policy, Random& rng) {
  Outcome out;
  const std::int64_t first = now_us();
  auto closed = [&policy] { return policy.window_closed != nullptr && *policy.window_closed; };
  for (int attempt = 1;; ++attempt) {
    if (attempt > 1) out.retry_us = now_us() - first;
    // C++ forbids co_await inside a catch block: keep the error, roll back after it.
    std::optional<pg::Error> error;
    try {
      workload::TxStatus status = co_await client.execute(session);
      out.kind = status == workload::TxStatus::kCommitted ? Outcome::Kind::kCommitted
                                                          : Outcome::Kind::kRolledBack;
      co_return out;
    } catch (const pg::Error& e) {
      error = e;
    }
    pg::ErrorClass cls = error->error_class();
    if (cls == pg::ErrorClass::kConnectionLost) {
      out.kind = Outcome::Kind::kFailed;
      out.error_class = cls;
      out.connection_lost = true;
      out.message = error->server_message();
      co_return out;
    }
    bool rollback_failed = false;
    try {
      co_await session.query(kRollback);
    } catch (const pg::Error&) {
      rollback_failed = true;  // the connection is gone: report the first error
    }
    const bool tries_left =
        policy.max_tries == RetryPolicy::kUntilCommit || attempt < policy.max_tries;
    if (!rollback_failed && pg::is_retryable(cls) && tries_left && !closed()) {
      ++out.retries;
      co_await session.sleep(backoff_us(policy, out.retries, rng));
      if (!closed()) continue;
    }
    out.window_closed = !rollback_failed && pg::is_retryable(cls) && tries_left && closed();
    out.kind = Outcome::Kind::kFailed;
    out.error_class = cls;
    out.connection_lost = rollback_failed;
    out.message = error->server_message();
    co_return out;
  }
}

void Tally::add(const Outcome& o, std::int64_t latency_us) {
  retries += static_cast<std::uint64_t>(o.retries);
  retry_us += o.retry_us;
  switch (o.kind) {
    case Outcome::Kind::kCommitted:
      ++committed;
      latency.record(latency_us);
      break;
    case Outcome::Kind::kRolledBack:
      ++rolled_back;
      latency.record(latency_us);
      break;
    case Outcome::Kind::kFailed:
      ++failed;
      ++failures_by_class[static_cast<std::size_t>(o.error_class)];
      break;
  }
}

void Tally::merge(const Tally& other) {
  committed += other.committed;
  rolled_back += other.rolled_back;
  failed += other.failed;
  retries += other.retries;
  retry_us += other.retry_us;
  for (std::size_t i = 0; i < failures_by_class.size(); ++i)
    failures_by_class[i] += other.failures_by_class[i];
  latency.merge(other.latency);
}

results::TxTypeResult Tally::result(const std::string& name) const {
  results::TxTypeResult r;
  r.name = name;
  r.committed = committed;
  r.rolled_back = rolled_back;
  r.failed = failed;
  r.retries = retries;
  r.retry_time_us = static_cast<double>(retry_us);
  r.latency = latency.summary();
  return r;
}

void Tally::add_failures_to(std::map<std::string, std::uint64_t>& out) const {
  for (std::size_t i = 0; i < failures_by_class.size(); ++i) {
    if (failures_by_class[i] == 0) continue;
    out[std::string(pg::to_string(static_cast<pg::ErrorClass>(i)))] += failures_by_class[i];
  }
}

}  // namespace pgslow::driver
