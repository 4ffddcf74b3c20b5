#include "workload/patterns/patterns.h"

#include <fmt/format.h>

#include "common/format.h"
#include "common/random.h"
#include "common/strings.h"
#include "workload/dataset.h"

namespace pgslow::workload {

namespace {

constexpr int kPatternsSchemaVersion = 1;
const std::string kInsertRow = "insert_row";
const std::string kUpdateSpread = "update_spread";
const std::string kUpdateHot = "update_hot";
constexpr std::int64_t kSpreadRowsPerScale = 1000;

std::vector<ConfigError> validate_common(const WorkloadParams& params, int max_scale) {
  std::vector<ConfigError> errors;
  auto add = [&](std::string message, std::string hint) {
    ConfigError e;
    e.where.file = "command line";
    e.message = std::move(message);
    e.hint = std::move(hint);
    errors.push_back(std::move(e));
  };
  if (params.scale < 1 || params.scale > max_scale)
    add(fmt::format("scale must be between 1 and {} (got {})", max_scale, params.scale),
        "update-spread: 1,000 rows per scale unit; insert and update-hot-row ignore it");
  for (const auto& [key, value] : params.options)
    add(fmt::format("unknown option \"{}\" for a write-pattern workload", key),
        "the write patterns take only scale");
  return errors;
}

CheckResult count_check(pg::Connection& conn, const std::string& table, std::int64_t want) {
  CheckResult c;
  c.clause = "rows." + table;
  c.description = fmt::format("{} has {} rows, ids 1..{}", table,
                              format_count(static_cast<std::uint64_t>(want)), want);
  pg::Result r = conn.exec(fmt::format(
      "SELECT count(*), count(DISTINCT id), coalesce(min(id), 0), coalesce(max(id), 0), "
      "count(*) FILTER (WHERE counter < 0) FROM {}",
      table));
  std::int64_t n = r.get_int64(0, 0), distinct = r.get_int64(0, 1), lo = r.get_int64(0, 2),
               hi = r.get_int64(0, 3), negative = r.get_int64(0, 4);
  c.passed = n == want && distinct == want && lo == 1 && hi == want && negative == 0;
  if (!c.passed)
    c.detail = fmt::format("{} rows, {} distinct ids, ids {}..{}, {} negative counters", n,
                           distinct, lo, hi, negative);
  return c;
}

// One statement per transaction, autocommitted (the labs' custom scripts had no BEGIN).
class SingleStatementClient final : public Client {
 public:
  enum class Kind { kInsert, kSpread, kHot };
  SingleStatementClient(Kind kind, std::int64_t rows, int client_index, std::uint64_t seed)
      : kind_(kind), rows_(rows), client_(std::to_string(client_index)), rng_(seed) {}
  std::size_t choose() override {
    switch (kind_) {
      case Kind::kInsert:
        arg_ = std::to_string(rng_.uniform(1, 1'000'000));
        break;
      case Kind::kSpread:
        arg_ = std::to_string(rng_.uniform(1, rows_));
        break;
      case Kind::kHot:
        break;
    }
    return 0;
  }
  Task<TxStatus> execute(Session& s) override {
    // Named objects, not temporaries inside co_await: GCC 12 can destroy those twice.
    pg::Params params;
    const std::string* statement = &kUpdateHot;
    switch (kind_) {
      case Kind::kInsert:
        params = pg::make_params(client_, arg_);
        statement = &kInsertRow;
        break;
      case Kind::kSpread:
        params = pg::make_params(arg_);
        statement = &kUpdateSpread;
        break;
      case Kind::kHot:
        break;
    }
    co_await s.execute(*statement, std::move(params));
    co_return TxStatus::kCommitted;
  }

 private:
  Kind kind_;
  std::int64_t rows_;
  std::string client_;
  Random rng_;
  std::string arg_;
};

class PatternWorkload : public Workload {
 public:
  std::vector<ConfigError> validate(WorkloadParams& params) const override {
    return validate_common(params, 100000);
  }
  std::string data_fingerprint(const WorkloadParams& params) const override {
    return fmt::format("{} scale={} rows={} schema={}", name(), params.scale, rows(params),
                       kPatternsSchemaVersion);
  }
  std::unique_ptr<Client> make_client(const WorkloadParams& params,
                                      int client_index) const override {
    return std::make_unique<SingleStatementClient>(
        kind(), rows(params), client_index,
        params.seed * 7919 + static_cast<std::uint64_t>(client_index));
  }

 protected:
  virtual SingleStatementClient::Kind kind() const = 0;
  virtual std::int64_t rows(const WorkloadParams& params) const = 0;
  // A table of `n` counter rows, ids 1..n.
  static void load_counters(const std::string& conninfo, const std::string& table, std::int64_t n,
                            Progress& progress) {
    pg::Connection conn = pg::Connection::open(conninfo);
    conn.exec(
        fmt::format("CREATE TABLE {} (id int PRIMARY KEY, counter bigint NOT NULL DEFAULT 0, "
                    "updated_at timestamptz)",
                    table));
    LoadMeter meter(progress, "load " + table);
    {
      CopyWriter copy(conn, fmt::format("COPY {} (id, counter) FROM STDIN", table), &meter);
      for (std::int64_t i = 1; i <= n; ++i) {
        fmt::format_to(std::back_inserter(copy.buffer()), "{}\t0\n", i);
        copy.row();
      }
      copy.finish();
    }
    meter.finish();
    conn.exec(fmt::format("VACUUM ANALYZE {}", table));
  }
};

class Insert final : public PatternWorkload {
 public:
  std::string_view name() const override { return "insert"; }
  std::string_view description() const override {
    return "INSERT one row per transaction into one table (identity key, one index). "
           "Stresses the append path: WAL volume, commit flushes (synchronous_commit, "
           "wal_buffers, commit_delay) and index insertion at the right edge.";
  }
  std::vector<std::string> transaction_types(const WorkloadParams& /*params*/) const override {
    return {"insert"};
  }
  std::vector<StatementDef> statements(const WorkloadParams& /*params*/) const override {
    return {{kInsertRow, "INSERT INTO pgslow_insert (client, payload) VALUES ($1, $2)"}};
  }
  void load(const std::string& conninfo, const WorkloadParams&, Progress& progress) const override {
    pg::Connection conn = pg::Connection::open(conninfo);
    conn.exec(
        "CREATE TABLE pgslow_insert (id bigint GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY, "
        "client int NOT NULL, payload int NOT NULL, created_at timestamptz NOT NULL DEFAULT "
        "now())");
    progress.note("created pgslow_insert (empty)");
  }
  std::vector<CheckResult> check(pg::Connection& conn, const WorkloadParams&) const override {
    CheckResult c;
    c.clause = "rows.pgslow_insert";
    c.description = "every inserted row has a distinct id handed out by the identity sequence";
    pg::Result r = conn.exec(
        "SELECT count(*), count(DISTINCT id), coalesce(max(id), 0), "
        "count(*) FILTER (WHERE client < 0) FROM pgslow_insert");
    std::int64_t n = r.get_int64(0, 0), distinct = r.get_int64(0, 1), hi = r.get_int64(0, 2),
                 bad = r.get_int64(0, 3);
    c.passed = n == distinct && hi >= n && bad == 0;
    if (!c.passed) c.detail = fmt::format("{} rows, {} distinct ids, max id {}", n, distinct, hi);
    return {c};
  }

 protected:
  SingleStatementClient::Kind kind() const override { return SingleStatementClient::Kind::kInsert; }
  std::int64_t rows(const WorkloadParams&) const override { return 0; }
};

class UpdateSpread final : public PatternWorkload {
 public:
  std::string_view name() const override { return "update-spread"; }
  std::string_view description() const override {
    return "UPDATE a random row of 1,000 x scale per transaction. Row locks rarely collide: "
           "the baseline for update-hot-row; stresses HOT updates, WAL and vacuum.";
  }
  std::vector<std::string> transaction_types(const WorkloadParams& /*params*/) const override {
    return {"update"};
  }
  std::vector<StatementDef> statements(const WorkloadParams& /*params*/) const override {
    return {{kUpdateSpread,
             "UPDATE pgslow_spread SET counter = counter + 1, updated_at = now() WHERE id = $1"}};
  }
  void load(const std::string& conninfo, const WorkloadParams& params,
            Progress& progress) const override {
    load_counters(conninfo, "pgslow_spread", rows(params), progress);
  }
  std::vector<CheckResult> check(pg::Connection& conn,
                                 const WorkloadParams& params) const override {
    return {count_check(conn, "pgslow_spread", rows(params))};
  }

 protected:
  SingleStatementClient::Kind kind() const override { return SingleStatementClient::Kind::kSpread; }
  std::int64_t rows(const WorkloadParams& params) const override {
    return kSpreadRowsPerScale * params.scale;
  }
};

class UpdateHotRow final : public PatternWorkload {
 public:
  std::string_view name() const override { return "update-hot-row"; }
  std::string_view description() const override {
    return "UPDATE the same single row in every transaction. Every client waits for the row "
           "lock of the one before: throughput stays flat as clients grow and lock waits "
           "appear only as latency, never as errors.";
  }
  std::vector<std::string> transaction_types(const WorkloadParams& /*params*/) const override {
    return {"update"};
  }
  std::vector<StatementDef> statements(const WorkloadParams& /*params*/) const override {
    return {{kUpdateHot,
             "UPDATE pgslow_hot SET counter = counter + 1, updated_at = now() WHERE id = 1"}};
  }
  void load(const std::string& conninfo, const WorkloadParams&, Progress& progress) const override {
    load_counters(conninfo, "pgslow_hot", 1, progress);
  }
  std::vector<CheckResult> check(pg::Connection& conn, const WorkloadParams&) const override {
    return {count_check(conn, "pgslow_hot", 1)};
  }

 protected:
  SingleStatementClient::Kind kind() const override { return SingleStatementClient::Kind::kHot; }
  std::int64_t rows(const WorkloadParams&) const override { return 1; }
};

}  // namespace

std::unique_ptr<Workload> make_insert() {
  return std::make_unique<Insert>();
}
std::unique_ptr<Workload> make_update_spread() {
  return std::make_unique<UpdateSpread>();
}
std::unique_ptr<Workload> make_update_hot_row() {
  return std::make_unique<UpdateHotRow>();
}

}  // namespace pgslow::workload
