#include "workload/pgbench/pgbench.h"

#include <fmt/format.h>

#include "common/format.h"
#include "common/random.h"
#include "common/strings.h"
#include "workload/dataset.h"

namespace pgslow::workload {

namespace {

const std::string kBegin = "BEGIN";
const std::string kEnd = "END";
const std::string kUpdateAccount = "tpcb_update_account";
const std::string kSelectAccount = "tpcb_select_account";
const std::string kUpdateTeller = "tpcb_update_teller";
const std::string kUpdateBranch = "tpcb_update_branch";
const std::string kInsertHistory = "tpcb_insert_history";
const std::string kSelectOnly = "select_account";
const std::string kRangeAggregate = "range_aggregate";
// Accounts one range aggregate reads: enough that the server, not the round trip, is the
// bottleneck (the pool lab's second curve).
constexpr std::int64_t kRangeRows = 10000;

// pgbench's sizes per scale unit (naccounts, ntellers, nbranches).
constexpr std::int64_t kAccountsPerScale = 100000;
constexpr std::int64_t kTellersPerScale = 10;
constexpr std::int64_t kBranchesPerScale = 1;
// Bumped when the schema or the loader changes: templates made before are reloaded.
constexpr int kPgbenchSchemaVersion = 1;

// pgbench's initCreateTables (fillfactor 100, its default).
const std::vector<std::string> kDdl = {
    "DROP TABLE IF EXISTS pgbench_accounts, pgbench_branches, pgbench_history, pgbench_tellers",
    "CREATE TABLE pgbench_history (tid int, bid int, aid int, delta int, mtime timestamp, "
    "filler char(22))",
    "CREATE TABLE pgbench_tellers (tid int not null, bid int, tbalance int, filler char(84)) "
    "WITH (fillfactor=100)",
    "CREATE TABLE pgbench_accounts (aid int not null, bid int, abalance int, filler char(84)) "
    "WITH (fillfactor=100)",
    "CREATE TABLE pgbench_branches (bid int not null, bbalance int, filler char(88)) "
    "WITH (fillfactor=100)",
};

// pgbench's initCreatePKeys.
const std::vector<std::string> kKeys = {
    "ALTER TABLE pgbench_branches ADD PRIMARY KEY (bid)",
    "ALTER TABLE pgbench_tellers ADD PRIMARY KEY (tid)",
    "ALTER TABLE pgbench_accounts ADD PRIMARY KEY (aid)",
};

// Client-side generation as `pgbench -i` (-I g): the same rows, COPY ... FREEZE in the
// transaction that truncated the table so the rows need no later freezing.
void copy_table(pg::Connection& conn, LoadMeter& meter, const std::string& table, std::int64_t rows,
                std::int64_t per_parent, bool has_parent) {
  meter.set_label("load " + table);
  conn.exec("BEGIN");
  conn.exec("TRUNCATE " + table);
  CopyWriter copy(conn, fmt::format("COPY {} FROM STDIN WITH (FREEZE ON)", table), &meter);
  for (std::int64_t i = 0; i < rows; ++i) {
    if (has_parent)
      fmt::format_to(std::back_inserter(copy.buffer()), "{}\t{}\t0\t\n", i + 1, i / per_parent + 1);
    else
      fmt::format_to(std::back_inserter(copy.buffer()), "{}\t0\t\n", i + 1);
    copy.row();
  }
  copy.finish();
  conn.exec("COMMIT");
}

void load_pgbench(const std::string& conninfo, int scale, Progress& progress) {
  pg::Connection conn = pg::Connection::open(conninfo);
  conn.exec_all(kDdl);
  LoadMeter meter(progress, "load");
  copy_table(conn, meter, "pgbench_branches", kBranchesPerScale * scale, 1, false);
  copy_table(conn, meter, "pgbench_tellers", kTellersPerScale * scale, kTellersPerScale, true);
  copy_table(conn, meter, "pgbench_accounts", kAccountsPerScale * scale, kAccountsPerScale, true);
  meter.finish();
  progress.update("vacuum analyze");
  conn.exec("VACUUM ANALYZE pgbench_branches, pgbench_tellers, pgbench_accounts, pgbench_history");
  progress.update("primary keys");
  conn.exec_all(kKeys);
}

}  // namespace

std::vector<ConfigError> validate_pgbench_scale(const WorkloadParams& params) {
  std::vector<ConfigError> errors;
  if (params.scale < 1 || params.scale > 20000) {
    ConfigError e;
    e.where.file = "command line";
    e.message = fmt::format("scale must be between 1 and 20000 (got {})", params.scale);
    e.hint = "pgbench's scale: 100,000 accounts (about 15 MB) per unit";
    errors.push_back(std::move(e));
  }
  return errors;
}

namespace {

std::vector<ConfigError> validate_scale(const WorkloadParams& params) {
  std::vector<ConfigError> errors = validate_pgbench_scale(params);
  for (const auto& [key, value] : params.options) {
    ConfigError e;
    e.where.file = "command line";
    e.message = fmt::format("unknown option \"{}\" for a pgbench workload", key);
    e.hint = "tpcb-like, select-only and range-aggregate take only scale";
    errors.push_back(std::move(e));
  }
  return errors;
}

}  // namespace

std::vector<CheckResult> check_pgbench_sizes(pg::Connection& conn, int scale) {
  std::vector<CheckResult> out;
  auto count = [&](const char* table, std::int64_t want) {
    CheckResult c;
    c.clause = std::string("rows.") + table;
    c.description = fmt::format("{} has {} rows (scale {})", table,
                                format_count(static_cast<std::uint64_t>(want)), scale);
    auto v = conn.query_value(fmt::format("SELECT count(*) FROM {}", table));
    std::int64_t got = v ? std::stoll(*v) : -1;
    c.passed = got == want;
    if (!c.passed) c.detail = fmt::format("found {} rows", got);
    out.push_back(std::move(c));
  };
  count("pgbench_branches", kBranchesPerScale * scale);
  count("pgbench_tellers", kTellersPerScale * scale);
  count("pgbench_accounts", kAccountsPerScale * scale);
  return out;
}

std::string PgbenchTables::data_fingerprint(const WorkloadParams& params) const {
  // Every workload on these tables shares one template.
  return fmt::format("pgbench scale={} schema={}", params.scale, kPgbenchSchemaVersion);
}

void PgbenchTables::load(const std::string& conninfo, const WorkloadParams& params,
                         Progress& progress) const {
  load_pgbench(conninfo, params.scale, progress);
}

namespace {

class PgbenchWorkload : public PgbenchTables {
 public:
  std::vector<ConfigError> validate(WorkloadParams& params) const override {
    return validate_scale(params);
  }
};

// ---- tpcb-like: pgbench's built-in "TPC-B (sort of)" ----

class TpcbClient final : public Client {
 public:
  TpcbClient(int scale, std::uint64_t seed) : scale_(scale), rng_(seed) {}
  std::size_t choose() override {
    // \set aid random(1, 100000 * :scale) ... \set delta random(-5000, 5000)
    aid_ = std::to_string(rng_.uniform(1, kAccountsPerScale * scale_));
    bid_ = std::to_string(rng_.uniform(1, kBranchesPerScale * scale_));
    tid_ = std::to_string(rng_.uniform(1, kTellersPerScale * scale_));
    delta_ = std::to_string(rng_.uniform(-5000, 5000));
    return 0;
  }
  Task<TxStatus> execute(Session& s) override {
    // Parameters are a named member, not temporaries inside co_await (GCC 12 can destroy
    // those twice), and reused: a statement reads them before it suspends.
    co_await s.query(kBegin);
    pg::assign_params(params_, delta_, aid_);
    co_await s.execute(kUpdateAccount, params_);
    pg::assign_params(params_, aid_);
    co_await s.execute(kSelectAccount, params_);
    pg::assign_params(params_, delta_, tid_);
    co_await s.execute(kUpdateTeller, params_);
    pg::assign_params(params_, delta_, bid_);
    co_await s.execute(kUpdateBranch, params_);
    pg::assign_params(params_, tid_, bid_, aid_, delta_);
    co_await s.execute(kInsertHistory, params_);
    co_await s.query(kEnd);
    co_return TxStatus::kCommitted;
  }

 private:
  int scale_;
  Random rng_;
  std::string aid_, bid_, tid_, delta_;
  pg::Params params_;
};

class TpcbLike final : public PgbenchWorkload {
 public:
  std::string_view name() const override { return "tpcb-like"; }
  std::string_view description() const override {
    return "pgbench's default TPC-B-like script: per transaction three single-row updates "
           "(account, teller, branch), one select and one history insert. Stresses row "
           "locks on the few branch rows (contention grows with clients / scale), WAL and "
           "commit latency.";
  }
  std::vector<std::string> transaction_types(const WorkloadParams& /*params*/) const override {
    return {"tpcb"};
  }
  std::vector<StatementDef> statements(const WorkloadParams& /*params*/) const override {
    // The SQL of pgbench's built-in script, parameters in the same order.
    return {
        {kUpdateAccount, "UPDATE pgbench_accounts SET abalance = abalance + $1 WHERE aid = $2"},
        {kSelectAccount, "SELECT abalance FROM pgbench_accounts WHERE aid = $1"},
        {kUpdateTeller, "UPDATE pgbench_tellers SET tbalance = tbalance + $1 WHERE tid = $2"},
        {kUpdateBranch, "UPDATE pgbench_branches SET bbalance = bbalance + $1 WHERE bid = $2"},
        {kInsertHistory,
         "INSERT INTO pgbench_history (tid, bid, aid, delta, mtime) "
         "VALUES ($1, $2, $3, $4, CURRENT_TIMESTAMP)"},
    };
  }
  std::unique_ptr<Client> make_client(const WorkloadParams& params,
                                      int client_index) const override {
    return std::make_unique<TpcbClient>(
        params.scale, params.seed * 7919 + static_cast<std::uint64_t>(client_index));
  }
  std::vector<CheckResult> check(pg::Connection& conn,
                                 const WorkloadParams& params) const override {
    auto out = check_pgbench_sizes(conn, params.scale);
    // Every committed transaction adds the same delta to one account, teller and branch and
    // records it in the history: the four sums stay equal.
    pg::Result r = conn.exec(
        "SELECT (SELECT coalesce(sum(abalance), 0) FROM pgbench_accounts), "
        "(SELECT coalesce(sum(tbalance), 0) FROM pgbench_tellers), "
        "(SELECT coalesce(sum(bbalance), 0) FROM pgbench_branches), "
        "(SELECT coalesce(sum(delta), 0) FROM pgbench_history)");
    CheckResult c;
    c.clause = "balances";
    c.description = "sum(abalance) = sum(tbalance) = sum(bbalance) = sum(history.delta)";
    auto a = r.get_int64(0, 0), t = r.get_int64(0, 1), b = r.get_int64(0, 2), h = r.get_int64(0, 3);
    c.passed = a == t && t == b && b == h;
    if (!c.passed)
      c.detail = fmt::format("accounts {}, tellers {}, branches {}, history {}", a, t, b, h);
    out.push_back(std::move(c));
    return out;
  }
};

// ---- select-only: pgbench -S ----

class SelectClient final : public Client {
 public:
  SelectClient(int scale, std::uint64_t seed) : scale_(scale), rng_(seed) {}
  std::size_t choose() override {
    params_[0] = std::to_string(rng_.uniform(1, kAccountsPerScale * scale_));
    return 0;
  }
  Task<TxStatus> execute(Session& s) override {
    co_await s.execute(kSelectOnly, params_);
    co_return TxStatus::kCommitted;
  }

 private:
  int scale_;
  Random rng_;
  pg::Params params_{1};  // aid
};

class SelectOnly final : public PgbenchWorkload {
 public:
  std::string_view name() const override { return "select-only"; }
  std::string_view description() const override {
    return "pgbench -S: one primary-key lookup of a random account per transaction. "
           "Stresses the client/server round trip, connection handling and the buffer "
           "cache (scale 100+ no longer fits a small shared_buffers).";
  }
  std::vector<std::string> transaction_types(const WorkloadParams& /*params*/) const override {
    return {"select"};
  }
  std::vector<StatementDef> statements(const WorkloadParams& /*params*/) const override {
    return {{kSelectOnly, "SELECT abalance FROM pgbench_accounts WHERE aid = $1"}};
  }
  std::unique_ptr<Client> make_client(const WorkloadParams& params,
                                      int client_index) const override {
    return std::make_unique<SelectClient>(
        params.scale, params.seed * 7919 + static_cast<std::uint64_t>(client_index));
  }
  std::vector<CheckResult> check(pg::Connection& conn,
                                 const WorkloadParams& params) const override {
    return check_pgbench_sizes(conn, params.scale);
  }
};

// ---- range-aggregate: the pool lesson's heavy query ----

class RangeClient final : public Client {
 public:
  RangeClient(int scale, std::uint64_t seed) : scale_(scale), rng_(seed) {}
  std::size_t choose() override {
    const std::int64_t last =
        std::max<std::int64_t>(1, kAccountsPerScale * scale_ - kRangeRows + 1);
    from_ = rng_.uniform(1, last);
    return 0;
  }
  Task<TxStatus> execute(Session& s) override {
    pg::assign_params(params_, std::to_string(from_), std::to_string(from_ + kRangeRows - 1));
    co_await s.execute(kRangeAggregate, params_);
    co_return TxStatus::kCommitted;
  }

 private:
  int scale_;
  Random rng_;
  std::int64_t from_ = 1;
  pg::Params params_;
};

class RangeAggregate final : public PgbenchWorkload {
 public:
  std::string_view name() const override { return "range-aggregate"; }
  std::string_view description() const override {
    return "A range aggregate over 10,000 consecutive accounts per transaction (pgbench's "
           "tables): the server's CPU, not the round trip, is the bottleneck. The pool "
           "lesson's second curve.";
  }
  std::vector<std::string> transaction_types(const WorkloadParams& /*params*/) const override {
    return {"range"};
  }
  std::vector<StatementDef> statements(const WorkloadParams& /*params*/) const override {
    return {{kRangeAggregate,
             "SELECT count(*), sum(abalance), avg(abalance) FROM pgbench_accounts "
             "WHERE aid BETWEEN $1 AND $2"}};
  }
  std::unique_ptr<Client> make_client(const WorkloadParams& params,
                                      int client_index) const override {
    return std::make_unique<RangeClient>(
        params.scale, params.seed * 7919 + static_cast<std::uint64_t>(client_index));
  }
  std::vector<CheckResult> check(pg::Connection& conn,
                                 const WorkloadParams& params) const override {
    return check_pgbench_sizes(conn, params.scale);
  }
};

}  // namespace

std::unique_ptr<Workload> make_range_aggregate() {
  return std::make_unique<RangeAggregate>();
}

std::unique_ptr<Workload> make_tpcb_like() {
  return std::make_unique<TpcbLike>();
}
std::unique_ptr<Workload> make_select_only() {
  return std::make_unique<SelectOnly>();
}

}  // namespace pgslow::workload
