#pragma once
// The load generator: N simulated clients over a few worker threads, each worker an epoll
// event loop multiplexing its clients' connections with non-blocking libpq (pgbench's shape;
// a thread per client does not scale to 200 clients on 2 cores). Each transaction is a
// coroutine (workload::Client::execute) that suspends on every statement and is resumed by
// the loop when the result is complete.
//
// Modes: closed loop (the default); fixed rate (`rate` transactions per second in total,
// Poisson arrivals per client, latency from the scheduled start, schedule lag separately,
// like pgbench -R); connect_per_transaction (pgbench -C: connect time counted in latency);
// pool_size N (clients share N connections; pool acquire wait reported beside latency).

#include <atomic>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

#include "common/progress.h"
#include "results/model.h"
#include "workload/workload.h"

namespace pgslow::driver {

// How statements reach the server, like pgbench -M: the query text with the values inlined
// as literals (simple), the text with parameters in the extended protocol (extended, parsed
// every time), or prepared once per connection and executed by name (prepared, the default).
enum class Protocol { kSimple, kExtended, kPrepared };
std::string_view protocol_name(Protocol p);
// "simple" | "extended" | "prepared"; nullopt otherwise.
std::optional<Protocol> parse_protocol(std::string_view text);

// A switchback run's completions and their latency by block (results/switchback.h), and per
// configuration (even blocks run the reference, odd ones the stage) the latency and failures
// of those counted.
struct BlockTallies {
  std::vector<std::uint64_t> finished;                 // committed + rolled back, per block
  std::vector<results::LatencySummary> block_latency;  // per block: each is a sample of p95/p99
  results::LatencySummary latency[2];
  std::uint64_t counted[2] = {0, 0};  // committed + rolled back, per configuration
  std::uint64_t failed[2] = {0, 0};
};

// What on_poll reads of a switchback run's blocks while the run goes on.
struct BlockReader {
  // A block's completions (exact once the next poll came).
  std::function<std::uint64_t(int block)> finished;
  // A block's latency once every worker has published its accounts after `since_us` (now_us()
  // at a poll after the block's end, when no completion counts in it any more); nullopt until
  // then. Workers publish every 0.2 s.
  std::function<std::optional<results::LatencySummary>(int block, std::int64_t since_us)> latency;
  // With DriverOptions::active_clients: whether the clients it wants run (each connected again)
  // and the others stand by. Without it, always true.
  std::function<bool()> clients_settled;
};

// on_poll's answer: end the measured window now.
inline constexpr int kEndWindow = -2;

struct DriverOptions {
  int clients = 1;
  int workers = 0;      // worker threads; 0: one per core (never more than clients)
  double warmup_s = 0;  // excluded from the results
  // Staggered start: client i of N starts its first transaction ramp_s * i / N after the
  // clock starts (terminals arriving one by one, not all at once); within the warm-up.
  double ramp_s = 0;
  double duration_s = 10;  // measured time after the warm-up
  double rate = 0;         // transactions per second in total; 0: closed loop
  int pool_size = 0;       // 0: one connection per client
  bool connect_per_transaction = false;
  Protocol protocol = Protocol::kPrepared;
  // Attempts per transaction for retryable errors (1: no retry; 0: the workload's default,
  // which may be RetryPolicy::kUntilCommit: tpcc-lite under repeatable read and serializable).
  int max_tries = 0;
  bool allow_partial = false;  // go on with the clients that could connect
  std::uint64_t seed = 1;      // arrival schedule; the workload's inputs use params.seed
  // Called from the controlling thread when the warm-up ends and when the measured window
  // ends: the scenario runner snapshots server evidence there, so it covers exactly the
  // measured window. Keep them short; they run outside the workers' hot path.
  std::function<void()> on_measure_start;
  std::function<void()> on_measure_end;
  // Called once every client (or pool connection) has connected, before the clock starts,
  // with the server pids of those connections, idle at that moment (idle-connection memory).
  std::function<void(const std::vector<int>& backend_pids)> on_connected;
  // Switchback runs: called from the controlling thread about every 50 ms of the measured
  // window with the seconds since it began. Returns the block that completions from now on
  // count in (0 .. max_blocks - 1), -1 while none counts (a block's settling time), or
  // kEndWindow. `blocks` reads a block's count and latency as the run goes on.
  std::function<int(double elapsed_s, const BlockReader& blocks)> on_poll;
  int max_blocks = 0;
  BlockTallies* blocks = nullptr;  // filled after the run when on_poll is set
  // Switchback of the client count: how many of the `clients` run transactions now, asked
  // before the clients start and after every on_poll. Clients 0 .. n-1 run (each worker keeps
  // its share); the others stand by between transactions with their own connection closed, and
  // connect again when they are wanted. Closed loop only. Empty: every client runs.
  std::function<int()> active_clients;
};

// Checks the options; problems name the option (--clients, --rate, ...). `think_time`: the
// workload's keying and think times are on (WorkloadParams::think_time), which only a closed
// loop waits: with a fixed rate they are refused, never recorded as on and not waited.
std::vector<ConfigError> validate(const DriverOptions& options, bool think_time = false);

// Runs the workload on the database `conninfo` names (statements are prepared on every new
// connection) and returns the measured window. Reports a progress tick once a second.
// `stop` (set from a signal handler, e.g. Ctrl-C) ends the run promptly with what was
// measured so far. Throws RuntimeError when clients cannot connect (unless allow_partial)
// or a worker fails.
results::Measurement run_workload(const workload::Workload& workload,
                                  const workload::WorkloadParams& params,
                                  const std::string& conninfo, const DriverOptions& options,
                                  Progress& progress, const std::atomic<bool>* stop = nullptr);

}  // namespace pgslow::driver
