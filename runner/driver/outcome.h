#pragma once
// How one transaction ended, with retries, and how outcomes add up (pgbench's rule, defined
// once here):
//   started = committed + rolled_back + failed
//   retries count extra attempts of started transactions, not transactions.
// Serialization failures and deadlocks are rolled back and retried (RetryPolicy) after a
// randomized exponential backoff; any other error fails the transaction and is counted by its
// class; a lost connection fails it too and the driver reconnects before the client's next
// transaction.

#include <array>
#include <cstdint>
#include <map>
#include <string>

#include "common/random.h"
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
  // From the first attempt's start to the last one's: the failed attempts and the backoffs,
  // inside the transaction's latency (a terminal's user waits for them too).
  std::int64_t retry_us = 0;
  bool window_closed = false;  // retrying stopped because the window closed: not a failure
};

// How retryable errors are retried. pgbench's --max-tries bounds the attempts; a TPC-C
// terminal retries until its transaction commits (kUntilCommit), which the measured window
// bounds. Each retry waits a random time in [0, min(cap, base * 2^(retry - 1))] ("full
// jitter"): retrying at once makes the transactions that just conflicted conflict again.
struct RetryPolicy {
  static constexpr int kUntilCommit = 0;
  int max_tries = 1;  // attempts, or kUntilCommit
  std::int64_t backoff_base_us = 1'000;
  std::int64_t backoff_cap_us = 100'000;
  // Set by the driver when the window closes: an unlimited retry loop ends there.
  const bool* window_closed = nullptr;
};

// The wait before retry `retry` (1, 2, ...).
std::int64_t backoff_us(const RetryPolicy& policy, int retry, Random& rng);

// Runs the client's chosen transaction; rolls back and retries retryable errors as `policy`
// says, drawing the backoffs from `rng`. Throws only for errors that are not pg::Error (a bug
// in a workload, a data fault), which end the run.
Task<Outcome> run_with_retries(workload::Client& client, workload::Session& session,
                               const RetryPolicy& policy, Random& rng);

constexpr int kErrorClassCount = static_cast<int>(pg::ErrorClass::kOther) + 1;

// Counts of one transaction type on one worker; merged at the end.
struct Tally {
  std::uint64_t committed = 0;
  std::uint64_t rolled_back = 0;
  std::uint64_t failed = 0;
  std::uint64_t retries = 0;
  std::int64_t retry_us = 0;  // Outcome::retry_us summed
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
