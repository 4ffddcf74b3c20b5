#include "driver/outcome.h"

#include <optional>

namespace pgslow::driver {

namespace {
// Not a temporary inside co_await: GCC 12 can destroy such temporaries twice.
const std::string kRollback = "ROLLBACK";
}  // namespace

Task<Outcome> run_with_retries(workload::Client& client, workload::Session& session,
                               int max_tries) {
  Outcome out;
  for (int attempt = 1;; ++attempt) {
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
    if (!rollback_failed && pg::is_retryable(cls) && attempt < max_tries) {
      ++out.retries;
      continue;
    }
    out.kind = Outcome::Kind::kFailed;
    out.error_class = cls;
    out.connection_lost = rollback_failed;
    out.message = error->server_message();
    co_return out;
  }
}

void Tally::add(const Outcome& o, std::int64_t latency_us) {
  retries += static_cast<std::uint64_t>(o.retries);
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
