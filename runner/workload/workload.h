#pragma once
// What runs against the server. A Workload is registered by name (registry.h); it loads its
// data into a template database and makes one Client per simulated user. The driver owns the
// connections, the scheduling, the retries and the clock; a Client only says which
// transaction comes next and runs it through a Session.

#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/errors.h"
#include "common/progress.h"
#include "common/task.h"
#include "pg/connection.h"
#include "results/check_data.h"
#include "results/model.h"

namespace pgslow::workload {

// A workload's parameters, from the scenario or the command line.
struct WorkloadParams {
  int scale = 1;  // warehouses (tpcc-lite), scale factor (tpcb-like, select-only), rows (patterns)
  int clients = 1;          // simulated users; 0: the workload's default (default_clients)
  bool think_time = false;  // TPC-C keying and think times; off by default, as in BenchBase
  std::uint64_t seed = 1;   // same seed, same inputs: runs are comparable
  std::map<std::string, std::string> options;  // workload-specific, checked by validate()
  // Relative paths in options (script files) are relative to this: the scenario file's
  // folder, or the working directory on the command line (empty).
  std::filesystem::path base_dir;
};

// A statement prepared on every connection the driver opens.
struct StatementDef {
  std::string name;
  std::string sql;
  // The simple protocol writes the parameters into the text as they are, unquoted, as pgbench
  // substitutes a script's :variables; otherwise as quoted literals.
  bool text_substitution = false;
};

// How a transaction ended when it did not raise an error.
enum class TxStatus {
  kCommitted,
  kRolledBack,  // by design (TPC-C New-Order's 1% unused item): not a failure
};

// One consistency condition checked after a run: the result's own (results/check_data.h).
using results::CheckResult;

// What a run counted, for Workload::headline(): the measured window only.
struct RunCounts {
  double duration_s = 0;
  int clients = 0;          // that ran (connected)
  int scale = 0;            // WorkloadParams::scale
  bool think_time = false;  // WorkloadParams::think_time
  int max_tries = 1;        // attempts per transaction; 0: until it commits
  // Workload::window_probe_sql() at the window's end minus at its start; nullopt: none.
  std::optional<double> probe_delta;
  // Why there is no probe_delta although the workload has a probe: the error, named.
  std::string probe_error;
  // The exact bound on probe_delta: the commits of window_probe_type() the driver saw between
  // the two reads for certain (started after the first read ended, finished before the second
  // began), and those that may fall between them (in flight at a read).
  std::uint64_t probe_sure = 0;
  std::uint64_t probe_in_flight = 0;
  std::map<std::string, std::string> options;  // WorkloadParams::options
  // Keying and think times (5.2.5.7) the driver waited inside the measured window, by the type
  // of the transaction they went with; waits the window's end cut short are in neither.
  struct TypeWaits {
    std::uint64_t keyings = 0, thinks = 0;
    double keying_s = 0, think_s = 0;
  };
  std::vector<TypeWaits> waits_by_type;
  // Transactions under way when the window closed, per type (in no count above).
  std::vector<std::uint64_t> in_flight_by_type;
  // Completions (committed + rolled back) per whole minute of the window, per type.
  std::vector<std::vector<std::uint64_t>> per_minute;
  std::vector<results::TxTypeResult> by_type;  // in transaction_types() order
  std::vector<std::uint64_t> counters;         // in counter_names() order, summed over clients
};

// One client's connection as its transactions see it. Implemented by the driver over
// non-blocking libpq (suspends while the server works) and by a blocking adapter for loaders
// and tests. Both throw pg::Error on a failed statement; the driver rolls back and decides
// whether to retry.
class Session {
 public:
  virtual ~Session() = default;
  // Runs a statement from Workload::statements() with text parameters. By reference, so a
  // client can reuse its parameters' storage: they must live until the await completes
  // (co_await the call at once; the task starts only when awaited).
  virtual Task<pg::Result> execute(const std::string& statement, const pg::Params& params) = 0;
  // Runs plain SQL without parameters: BEGIN, COMMIT, ROLLBACK.
  virtual Task<pg::Result> query(const std::string& sql) = 0;
  // Waits inside a transaction (a script's \sleep). The driver's session suspends the
  // transaction on its event loop; this default blocks the thread (loaders and tests).
  virtual Task<void> sleep(std::int64_t us);
};

// A blocking Session over a pg::Connection: every await completes at once.
class BlockingSession final : public Session {
 public:
  explicit BlockingSession(pg::Connection& conn) : conn_(conn) {}
  Task<pg::Result> execute(const std::string& statement, const pg::Params& params) override;
  Task<pg::Result> query(const std::string& sql) override;

 private:
  pg::Connection& conn_;
};

// One simulated user. Not thread-safe: the driver calls it from one worker thread.
class Client {
 public:
  virtual ~Client() = default;
  // Draws the next transaction and its inputs from the mix; returns its index in
  // Workload::transaction_types().
  virtual std::size_t choose() = 0;
  // Runs the chosen transaction, BEGIN to COMMIT. Called again with the same inputs when the
  // driver retries a serialization failure or deadlock.
  virtual Task<TxStatus> execute(Session& session) = 0;
  // Keying time before the chosen transaction and think time after it (TPC-C 5.2.5.7), in
  // microseconds; 0 when off. Neither is part of the response time.
  virtual std::int64_t keying_time_us() const { return 0; }
  virtual std::int64_t think_time_us() const { return 0; }
  // Adds what the client counted since the last call (Workload::counter_names() order) to
  // `into` and starts again from zero. The driver calls it after every transaction and keeps
  // the counts of the transactions it measures.
  virtual void take_counters(std::vector<std::uint64_t>& /*into*/) {}
};

class Workload {
 public:
  virtual ~Workload() = default;
  virtual std::string_view name() const = 0;
  // One paragraph: what it runs and what it stresses (docs/workloads.md has more).
  virtual std::string_view description() const = 0;
  // The user's word for WorkloadParams::scale: the option (--warehouses) messages suggest.
  virtual std::string_view size_name() const { return "scale"; }
  // Checks the parameters and fills derived defaults; problems name the parameter.
  virtual std::vector<ConfigError> validate(WorkloadParams& params) const = 0;
  // Transaction type names, in a fixed order (the per-type result table).
  virtual std::vector<std::string> transaction_types(const WorkloadParams& params) const = 0;
  // Prepared on every connection the driver opens.
  virtual std::vector<StatementDef> statements(const WorkloadParams& params) const = 0;
  // Identity of the loaded data (workload, scale, schema version): a template database is
  // reused only when its fingerprint matches.
  virtual std::string data_fingerprint(const WorkloadParams& params) const = 0;
  // Creates the schema and loads the data into the (empty) database `conninfo` names.
  virtual void load(const std::string& conninfo, const WorkloadParams& params,
                    Progress& progress) const = 0;
  virtual std::unique_ptr<Client> make_client(const WorkloadParams& params,
                                              int client_index) const = 0;
  // Counters the clients keep beside the per-type outcomes (e.g. Delivery's skipped districts);
  // none by default.
  virtual std::vector<std::string> counter_names() const { return {}; }
  // The workload's own headline figures (TPC-C's tpmC and NOPM), from the measured window;
  // none by default: tps and latency are every workload's figures.
  virtual std::vector<results::HeadlineFigure> headline(const RunCounts& /*run*/) const {
    return {};
  }
  // The workload's audit of the measured window (TPC-C's rules for tpmC); none by default.
  virtual std::vector<results::AuditRow> audit(const RunCounts& /*run*/) const { return {}; }
  // Clients when the user set none (0 in WorkloadParams): TPC-C's ten terminals per warehouse;
  // 0: the caller's own default (bench 1, scenarios 8).
  virtual int default_clients(const WorkloadParams& /*params*/) const { return 0; }
  // Attempts per transaction when the user set none (--max-tries 0); 0: retry until it
  // commits (the measured window bounds it; driver/outcome.h's RetryPolicy).
  virtual int default_max_tries(const WorkloadParams& /*params*/) const { return 1; }
  // A query returning one number, run by the driver as the measured window starts and ends on
  // a connection of its own; its change is RunCounts::probe_delta (TPC-C: sum(D_NEXT_O_ID),
  // the New-Orders committed, to cross-check NOPM). Empty: none.
  virtual std::string window_probe_sql() const { return {}; }
  // The transaction type (transaction_types() index) each commit of which advances the probe
  // by one; the driver counts them against the probe's reads. -1: none.
  virtual int window_probe_type() const { return -1; }
  // Consistency checks after a run; an empty list means the workload has none.
  virtual std::vector<CheckResult> check(pg::Connection& conn,
                                         const WorkloadParams& params) const = 0;
};

// Runs the workload's consistency checks on the database `conninfo` names (`--check-data`).
// Returns the results when every check passes; throws RuntimeError naming each failed clause
// and its offenders otherwise, so a measured stage with inconsistent data fails.
std::vector<CheckResult> check_data(const Workload& workload, const std::string& conninfo,
                                    const WorkloadParams& params);

// Fills WorkloadParams::clients when it is 0: the workload's default, else `fallback`.
void resolve_clients(const Workload& workload, WorkloadParams& params, int fallback);

}  // namespace pgslow::workload
