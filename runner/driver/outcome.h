#pragma once
// How one transaction ended, with retries, and how outcomes add up (pgbench's rule, defined
// once here):
//   started = committed + rolled_back + failed
//   retries count extra attempts of started transactions, not transactions.
// Serialization failures and deadlocks are rolled back and retried up to max_tries attempts;
// any other error fails the transaction and is counted by its class; a lost connection fails
// it too and the driver reconnects before the client's next transaction.

#include <array>
#include <cstdint>
#include <map>
#include <string>

#include "common/task.h"
#include "driver/histogram.h"
#include "pg/error.h"
#include "results/model.h"
#include "workload/workload.h"

namespace pgslow::driver {

struct Outcome {
  enum class Kind { kCommitted, kRolledBack, kFailed };
  Kind kind = Kind::kCommitted;
  int retries = 0;
  pg::ErrorClass error_class = pg::ErrorClass::kOther;  // kFailed only
  bool connection_lost = false;                         // the session's connection is gone
  std::string message;                                  // kFailed only: the server's message
};

// Runs the client's chosen transaction; rolls back and retries retryable errors. Throws only
// for errors that are not pg::Error (a bug in a workload), which end the run.
Task<Outcome> run_with_retries(workload::Client& client, workload::Session& session, int max_tries);

constexpr int kErrorClassCount = static_cast<int>(pg::ErrorClass::kOther) + 1;

// Counts of one transaction type on one worker; merged at the end.
struct Tally {
  std::uint64_t committed = 0;
  std::uint64_t rolled_back = 0;
  std::uint64_t failed = 0;
  std::uint64_t retries = 0;
  std::array<std::uint64_t, kErrorClassCount> failures_by_class{};
  Histogram latency;  // committed and rolled back transactions only

  std::uint64_t started() const { return committed + rolled_back + failed; }
  void add(const Outcome& o, std::int64_t latency_us);
  void merge(const Tally& other);
  // The type's row of the result table.
  results::TxTypeResult result(const std::string& name) const;
  // failures_by_class keyed by pg::to_string(class), classes with no failure left out.
  void add_failures_to(std::map<std::string, std::uint64_t>& out) const;
};

}  // namespace pgslow::driver
