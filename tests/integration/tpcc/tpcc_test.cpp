// TPC-C-lite against a real server: one warehouse is loaded once into a template. Tests that
// only read use the template; tests that write share one clone of it (a clone copies 120 MB,
// and every test leaves the clone consistent, so sharing it keeps the binary fast).

#include "workload/tpcc/tpcc.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <array>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <iostream>
#include <nlohmann/json.hpp>
#include <thread>

#include "common/clock.h"
#include "common/errors.h"
#include "common/paths.h"
#include "common/process.h"
#include "common/progress.h"
#include "driver/driver.h"
#include "tests/support/cluster_fixture.h"
#include "workload/tpcc/checks.h"
#include "workload/tpcc/constants.h"
#include "workload/tpcc/generate.h"
#include "workload/tpcc/mix.h"
#include "workload/tpcc/transactions.h"

namespace pgslow::workload::tpcc {
namespace {

constexpr const char* kTemplate = "tpcc_template";
const std::string kBegin = begin_sql(Isolation::kReadCommitted);

class TpccTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    if (loaded_) return;
    pg::Connection admin = pg::Connection::open(pgslow::testing::conninfo());
    admin.exec(std::string("CREATE DATABASE ") + kTemplate);
    const auto start = now_us();
    SilentProgress progress;
    WorkloadParams params;
    workload().load(pgslow::testing::conninfo(kTemplate), params, progress);
    std::cout << "loaded 1 warehouse in " << static_cast<double>(now_us() - start) / 1e6 << " s\n";
    loaded_ = true;
  }

  static const Workload& workload() {
    static const auto w = make_tpcc_lite();
    return *w;
  }

  // A connection to the template itself, for tests that only read. Closed before any clone.
  static pg::Connection template_db() {
    return pg::Connection::open(pgslow::testing::conninfo(kTemplate));
  }

  // A connection to the shared clone, with every statement prepared.
  static pg::Connection clone() {
    static const std::string conninfo = pgslow::testing::clone_database(kTemplate);
    pg::Connection conn = pg::Connection::open(conninfo);
    for (const auto& st : workload().statements({})) conn.prepare(st.name, st.sql);
    return conn;
  }

  static void expect_checks_pass(pg::Connection& conn) {
    const auto results = run_checks(conn);
    EXPECT_EQ(results.size(), checks().size());
    for (const auto& r : results) EXPECT_TRUE(r.passed) << r.clause << " " << r.detail;
  }

  static std::int64_t count(pg::Connection& conn, const std::string& sql) {
    return std::stoll(conn.query_value(sql).value_or("-1"));
  }

  static inline bool loaded_ = false;
};

TEST_F(TpccTest, RowCountsFollowTheSpecAndChecksPassAfterLoad) {
  pg::Connection conn = template_db();
  for (const auto& info : table_infos()) {
    const std::int64_t n = count(conn, "SELECT count(*) FROM " + std::string(info.name));
    const std::int64_t expected = expected_rows(info.table, 1);
    if (expected >= 0) {
      EXPECT_EQ(n, expected) << info.name;
    } else {  // ORDER-LINE: 5 to 15 lines for each of 30,000 orders, 10 on average
      EXPECT_GE(n, 30'000 * kMinOrderLines);
      EXPECT_LE(n, 30'000 * kMaxOrderLines);
      EXPECT_NEAR(static_cast<double>(n), 300'000, 10'000);
    }
  }
  EXPECT_NEAR(static_cast<double>(count(conn,
                                        "SELECT count(*) FROM item WHERE i_data LIKE "
                                        "'%ORIGINAL%'")),
              10'000, 500);
  // Keys and indexes exist.
  EXPECT_EQ(
      count(conn,
            "SELECT count(*) FROM pg_constraint WHERE contype = 'p' AND conrelid::regclass::text "
            "IN ('warehouse','district','customer','new_order','orders','order_line',"
            "'item','stock')"),
      8);
  EXPECT_EQ(count(conn,
                  "SELECT count(*) FROM pg_indexes WHERE indexname IN "
                  "('customer_by_name', 'orders_by_customer')"),
            2);
  expect_checks_pass(conn);
}

TEST_F(TpccTest, ChecksReportTheOffendingDistrict) {
  pg::Connection conn = clone();
  conn.exec("UPDATE district SET d_ytd = d_ytd + 1 WHERE d_w_id = 1 AND d_id = 7");
  const auto results = run_checks(conn);
  conn.exec("UPDATE district SET d_ytd = d_ytd - 1 WHERE d_w_id = 1 AND d_id = 7");
  for (const auto& r : results) {
    if (r.clause == "3.3.2.1" || r.clause == "3.3.2.9") {
      EXPECT_FALSE(r.passed) << r.clause;
      EXPECT_NE(r.detail.find("warehouse 1"), std::string::npos) << r.detail;
    } else {
      EXPECT_TRUE(r.passed) << r.clause << " " << r.detail;
    }
  }
  const auto& r9 = results[8];
  ASSERT_EQ(r9.clause, "3.3.2.9");
  EXPECT_NE(r9.detail.find("district 7: D_YTD "), std::string::npos) << r9.detail;
  EXPECT_NE(r9.detail.find("1 offending"), std::string::npos) << r9.detail;
}

TEST_F(TpccTest, EachTransactionTypeKeepsTheDatabaseConsistent) {
  pg::Connection conn = clone();
  BlockingSession session(conn);
  const Terminal t{.warehouses = 1, .w_id = 1, .d_id = 3, .constants = run_constants(7)};
  Rng rng(7);
  constexpr int kEach = 25;
  int committed = 0, rolled_back = 0;
  auto tally = [&](TxStatus s) { (s == TxStatus::kCommitted ? committed : rolled_back)++; };
  const std::int64_t orders_before = count(conn, "SELECT count(*) FROM orders");
  const std::int64_t new_orders_before = count(conn, "SELECT count(*) FROM new_order");
  const std::int64_t history_before = count(conn, "SELECT count(*) FROM history");
  const std::int64_t undelivered_before =
      count(conn, "SELECT count(*) FROM orders WHERE o_carrier_id IS NULL");
  for (int i = 0; i < kEach; ++i) {
    NewOrderInput no = draw_new_order(rng, t);
    no.rollback = false;
    if (no.lines.back().i_id > kItems) no.lines.back().i_id = 1;  // keep it committing
    tally(run_synchronously(run_new_order(session, no, kBegin)));
    tally(run_synchronously(run_payment(session, draw_payment(rng, t), kBegin)));
    tally(run_synchronously(run_order_status(session, draw_order_status(rng, t), kBegin)));
    tally(run_synchronously(run_stock_level(session, draw_stock_level(rng, t), kBegin)));
  }
  DeliveryTally deliveries;
  for (int i = 0; i < 3; ++i)
    tally(run_synchronously(run_delivery(session, draw_delivery(rng, t), kBegin, deliveries)));
  EXPECT_EQ(deliveries.districts, 30u);
  EXPECT_EQ(deliveries.skipped, 0u);
  EXPECT_EQ(committed, 4 * kEach + 3);
  EXPECT_EQ(rolled_back, 0);
  EXPECT_EQ(count(conn, "SELECT count(*) FROM orders"), orders_before + kEach);
  // Each delivery takes one new order from each of the ten districts.
  EXPECT_EQ(count(conn, "SELECT count(*) FROM new_order"), new_orders_before + kEach - 30);
  EXPECT_EQ(count(conn, "SELECT count(*) FROM history"), history_before + kEach);
  EXPECT_EQ(count(conn, "SELECT count(*) FROM orders WHERE o_carrier_id IS NULL"),
            undelivered_before + kEach - 30);
  expect_checks_pass(conn);
}

TEST_F(TpccTest, NewOrderRollbackLeavesNoTrace) {
  pg::Connection conn = clone();
  BlockingSession session(conn);
  const Terminal t{.warehouses = 1, .w_id = 1, .d_id = 1, .constants = run_constants(3)};
  Rng rng(3);
  NewOrderInput in;
  do {
    in = draw_new_order(rng, t);
  } while (!in.rollback);
  const std::string snapshot =
      "SELECT (SELECT count(*) FROM orders) || '/' || (SELECT count(*) FROM new_order) || '/' || "
      "(SELECT count(*) FROM order_line) || '/' || (SELECT sum(d_next_o_id) FROM district) || "
      "'/' || (SELECT sum(s_quantity) + sum(s_order_cnt) FROM stock)";
  const auto before = conn.query_value(snapshot);
  EXPECT_EQ(run_synchronously(run_new_order(session, in, kBegin)), TxStatus::kRolledBack);
  EXPECT_EQ(conn.query_value("SELECT 1"), "1");  // the connection is usable, not in a failed tx
  EXPECT_EQ(conn.query_value(snapshot), before);
}

// A missing item that is not the designed rollback's is a data fault: it fails loudly (the
// driver ends the run on it), never counted as a rollback in tpmC.
TEST_F(TpccTest, APlantedMissingItemFailsLoudly) {
  pg::Connection conn = clone();
  BlockingSession session(conn);
  const Terminal t{.warehouses = 1, .w_id = 1, .d_id = 1, .constants = run_constants(5)};
  Rng rng(5);
  NewOrderInput in;
  do {
    in = draw_new_order(rng, t);
  } while (in.rollback);
  in.lines.front().i_id = kItems + 7;  // planted: no such item, and not the order's last line
  const std::string next_o_id = "SELECT sum(d_next_o_id) FROM district";
  const auto before = conn.query_value(next_o_id);
  try {
    run_synchronously(run_new_order(session, in, kBegin));
    ADD_FAILURE() << "a missing item passed as a rollback or a commit";
  } catch (const RuntimeError& e) {
    EXPECT_NE(std::string(e.what()).find("item 100007 is not found, and this order is not the "
                                         "designed 1% rollback"),
              std::string::npos)
        << e.what();
  }
  conn.exec("ROLLBACK");
  EXPECT_EQ(conn.query_value(next_o_id), before);

  // In the designed rollback, a missing item before its last line is a fault too.
  do {
    in = draw_new_order(rng, t);
  } while (!in.rollback);
  in.lines.front().i_id = kItems + 9;
  EXPECT_THROW(run_synchronously(run_new_order(session, in, kBegin)), RuntimeError);
  conn.exec("ROLLBACK");
  expect_checks_pass(conn);
}

// A row the load wrote, deleted: a short run through the driver ends with an error naming the
// row, and nothing of the work that met it is committed or counted (the driver throws: no
// figures at all). One clone per fault; the run stops at the first one it meets.
TEST_F(TpccTest, AMissingRowEndsTheRunNamingItAndNothingOfItCounts) {
  struct Fault {
    const char* what;
    const char* damage;
    const char* named;
    const char* bad_work;  // rows committed work would have left, had it counted: must be 0
  };
  const Fault faults[] = {
      {"1% of STOCK", "DELETE FROM stock WHERE s_i_id % 100 = 0",
       "the STOCK row (warehouse 1, item ",
       "SELECT count(*) FROM order_line WHERE ol_o_id > 3000 AND (ol_dist_info = '' OR NOT EXISTS "
       "(SELECT 1 FROM stock WHERE s_w_id = ol_supply_w_id AND s_i_id = ol_i_id))"},
      {"1% of CUSTOMER", "DELETE FROM customer WHERE c_id % 100 = 0", "the CUSTOMER row",
       "SELECT (SELECT count(*) FROM orders WHERE o_id > 3000 AND o_c_id % 100 = 0) + "
       "(SELECT count(*) FROM history WHERE h_c_id % 100 = 0) - 300"},
      {"one DISTRICT row", "DELETE FROM district WHERE d_w_id = 1 AND d_id = 4",
       "the DISTRICT row (warehouse 1, district 4) is missing",
       "SELECT (SELECT count(*) FROM orders WHERE o_d_id = 4 AND o_id > 3000) + "
       "(SELECT count(*) FROM history WHERE h_d_id = 4) - 3000"},
  };
  for (const Fault& f : faults) {
    SCOPED_TRACE(f.what);
    const std::string conninfo = pgslow::testing::clone_database(kTemplate);
    pg::Connection conn = pg::Connection::open(conninfo);
    conn.exec(f.damage);
    WorkloadParams params;
    params.clients = 0;
    params.seed = 13;
    ASSERT_TRUE(workload().validate(params).empty());
    driver::DriverOptions o;
    o.clients = params.clients;
    o.workers = 1;
    o.duration_s = 30;  // a bound: the first fault ends the window
    SilentProgress progress;
    const auto start = now_us();
    try {
      driver::run_workload(workload(), params, conninfo, o, progress);
      ADD_FAILURE() << "the run passed over a missing row";
    } catch (const RuntimeError& e) {
      std::cout << f.what << ": " << e.what() << "\n";
      EXPECT_NE(std::string(e.what()).find(f.named), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find("is missing"), std::string::npos) << e.what();
    }
    EXPECT_LT(now_us() - start, 20'000'000) << "the fault did not end the run at once";
    EXPECT_EQ(count(conn, f.bad_work), 0);
  }
}

// A short serializable run's reports show each type's retries and the time they took.
TEST_F(TpccTest, ASerializableRunsReportsShowRetriesPerType) {
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() / ("tpcc-retries-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const std::filesystem::path scenario = dir / "serializable.yaml";
  write_file_durably(scenario, R"(name: serializable-retries
workload:
  name: tpcc-lite
  warehouses: 1
  options:
    isolation: serializable
measure:
  warmup: 0s
  duration: 2s
stages:
  - name: no-fsync-wait
    settings:
      synchronous_commit: "off"
)");
  ProcessOptions po;
  po.timeout = std::chrono::minutes(5);
  const ProcessResult r = run_process({pgslow::testing::pgslow_binary().string(), "--workdir",
                                       pgslow::testing::cluster_workdir().string(), "run",
                                       scenario.string(), "--out", (dir / "out").string()},
                                      po);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const std::string md = read_file(dir / "out" / "report.md");
  const std::string csv = read_file(dir / "out" / "report.csv");
  const std::string html = read_file(dir / "out" / "report.html");
  std::filesystem::remove_all(dir);
  // Ten terminals on one warehouse under SSI: New-Order and Payment conflict on its rows.
  for (const std::string& text : {md, html})
    EXPECT_NE(text.find("retries: new_order "), std::string::npos) << text.substr(0, 4000);
  EXPECT_NE(csv.find("retries_by_type"), std::string::npos) << csv;
  const std::size_t at = csv.find("\nbaseline,");
  ASSERT_NE(at, std::string::npos) << csv;
  const std::string baseline = csv.substr(at, csv.find('\n', at + 1) - at);
  EXPECT_NE(baseline.find("payment "), std::string::npos) << baseline;
  EXPECT_NE(baseline.find(" s"), std::string::npos) << baseline;  // the retries' time
}

TEST_F(TpccTest, ClientsRunTheMixAndCanRetryTheSameInputs) {
  pg::Connection conn = clone();
  BlockingSession session(conn);
  WorkloadParams params;
  params.seed = 5;
  ASSERT_TRUE(workload().validate(params).empty());
  auto client = workload().make_client(params, 0);
  std::array<int, 5> started{}, committed{}, rolled_back{};
  for (int i = 0; i < 300; ++i) {
    const std::size_t type = client->choose();
    ++started[type];
    const TxStatus s = run_synchronously(client->execute(session));
    (s == TxStatus::kCommitted ? committed : rolled_back)[type]++;
  }
  // Running the last choice again (a driver retry) works on the same inputs.
  const TxStatus first = run_synchronously(client->execute(session));
  EXPECT_EQ(run_synchronously(client->execute(session)), first);
  const auto types = workload().transaction_types({});
  for (std::size_t i = 0; i < types.size(); ++i) {
    std::cout << types[i] << ": " << started[i] << " started, " << committed[i] << " committed, "
              << rolled_back[i] << " rolled back\n";
    EXPECT_EQ(started[i], committed[i] + rolled_back[i]);
    if (i != 0) {
      EXPECT_EQ(rolled_back[i], 0) << types[i];
    }
  }
  EXPECT_GT(started[0], 100);
  EXPECT_GT(started[1], 100);
  expect_checks_pass(conn);
}

// A district without undelivered orders is skipped and counted; the others are delivered.
TEST_F(TpccTest, DeliverySkipsOnlyEmptyDistrictsAndCountsThem) {
  pg::Connection conn = pg::Connection::open(pgslow::testing::clone_database(kTemplate));
  for (const auto& st : workload().statements({})) conn.prepare(st.name, st.sql);
  BlockingSession session(conn);
  // District 4 delivered completely, as if by earlier Deliveries.
  conn.exec(
      "UPDATE orders SET o_carrier_id = 1 WHERE o_w_id = 1 AND o_d_id = 4 AND o_carrier_id IS "
      "NULL");
  conn.exec("UPDATE order_line SET ol_delivery_d = now() WHERE ol_w_id = 1 AND ol_d_id = 4");
  conn.exec("DELETE FROM new_order WHERE no_w_id = 1 AND no_d_id = 4");
  DeliveryTally tally;
  EXPECT_EQ(run_synchronously(
                run_delivery(session, DeliveryInput{.w_id = 1, .carrier_id = 3}, kBegin, tally)),
            TxStatus::kCommitted);
  EXPECT_EQ(tally.districts, 10u);
  EXPECT_EQ(tally.skipped, 1u);
  EXPECT_EQ(tally.deliveries_with_skip, 1u);
  EXPECT_EQ(count(conn, "SELECT count(*) FROM new_order"), 9 * 900 - 9);

  // 2.7.4.2's threshold at its edge: of fewer than 200 Deliveries, one with a skip is allowed
  // ("more than one"), a second is not.
  auto skips = [&] {
    RunCounts run;
    run.duration_s = 60;
    run.counters = {tally.districts, tally.skipped, tally.deliveries_with_skip};
    for (const auto& f : headline_figures(run))
      if (f.name == "Delivery skips") return f;
    ADD_FAILURE() << "no Delivery skips figure";
    return results::HeadlineFigure{};
  };
  EXPECT_TRUE(skips().warning.empty()) << skips().warning;
  EXPECT_EQ(run_synchronously(
                run_delivery(session, DeliveryInput{.w_id = 1, .carrier_id = 5}, kBegin, tally)),
            TxStatus::kCommitted);
  EXPECT_EQ(tally.deliveries_with_skip, 2u);
  EXPECT_DOUBLE_EQ(skips().value, 100.0);  // 2 of 2 Deliveries
  EXPECT_NE(skips().unit.find("10.00% of districts"), std::string::npos) << skips().unit;
  EXPECT_NE(skips().warning.find("2 of 2 Deliveries"), std::string::npos) << skips().warning;
}

// A real run through the driver, then every consistency check; then one orphan row of each
// kind the ORDER-side checks cannot see, each caught by its clause.
TEST_F(TpccTest, RunThenEveryCheckAndOrphansAreCaught) {
  const std::string conninfo = pgslow::testing::clone_database(kTemplate);
  WorkloadParams params;
  params.clients = 0;  // the default: ten terminals for the one warehouse
  params.seed = 9;
  ASSERT_TRUE(workload().validate(params).empty());
  ASSERT_EQ(params.clients, 10);
  driver::DriverOptions o;
  o.clients = params.clients;
  o.workers = 1;
  o.duration_s = 2;
  SilentProgress progress;
  const results::Measurement m = driver::run_workload(workload(), params, conninfo, o, progress);
  ASSERT_GT(m.committed, 20u);
  ASSERT_EQ(m.failed, 0u);  // read committed: no serialization failures
  ASSERT_GT(m.by_type[0].latency.p90_us, 0);
  // Each type over time: 1 s intervals over the 2 s window, adding up to the type's totals.
  EXPECT_EQ(m.type_series_interval_s, 1);
  ASSERT_EQ(m.type_series.size(), m.by_type.size());
  for (std::size_t i = 0; i < m.by_type.size(); ++i) {
    const results::TypeSeries& t = m.type_series[i];
    EXPECT_EQ(t.name, m.by_type[i].name);
    ASSERT_EQ(t.finished.size(), 2u) << t.name;
    EXPECT_EQ(t.finished[0] + t.finished[1], m.by_type[i].committed + m.by_type[i].rolled_back)
        << t.name;
    EXPECT_EQ(t.failed[0] + t.failed[1], m.by_type[i].failed) << t.name;
  }
  // A p90 wherever a New-Order finished, and none where none did (a busy machine may leave a
  // second without one).
  const results::TypeSeries& new_orders = m.type_series[0];
  bool any_p90 = false;
  for (std::size_t k = 0; k < new_orders.finished.size(); ++k) {
    EXPECT_EQ(new_orders.finished[k] > 0, new_orders.p90_us[k] > 0) << "interval " << k;
    any_p90 = any_p90 || new_orders.p90_us[k] > 0;
  }
  EXPECT_TRUE(any_p90);
  // Think times are off, so the figure is not tpmC but NOPM (committed New-Orders only), and
  // its warning says why.
  auto figure = [](const results::Measurement& r, std::string_view name) {
    for (const auto& f : r.headline)
      if (f.name == name) return f;
    ADD_FAILURE() << "no figure " << name;
    return results::HeadlineFigure{};
  };
  ASSERT_GE(m.headline.size(), 3u);
  EXPECT_EQ(m.headline[0].name, "NOPM");
  EXPECT_NE(m.headline[0].warning.find("(5.2.5.7): off (--think-time)"), std::string::npos)
      << m.headline[0].warning;
  EXPECT_EQ(m.headline[0].warning.find("terminals"), std::string::npos) << m.headline[0].warning;
  EXPECT_DOUBLE_EQ(m.headline[0].value,
                   static_cast<double>(m.by_type[0].committed) * 60 / m.duration_s);
  EXPECT_EQ(m.headline.back().name, "audit");
  ASSERT_FALSE(m.audit.empty());
  // HammerDB's cross-check, exact: sum(D_NEXT_O_ID) rose by the New-Orders the driver saw
  // commit between its two reads, give or take those in flight at a read.
  const results::HeadlineFigure cross = figure(m, "NOPM by D_NEXT_O_ID");
  EXPECT_TRUE(cross.warning.empty()) << cross.warning;
  std::cout << "cross-check: " << cross.unit << "\n";
  EXPECT_GT(cross.value, 0);
  for (const auto& r : m.audit)
    if (r.rule.starts_with("sum(D_NEXT_O_ID)")) {
      EXPECT_TRUE(r.passed) << r.measured;
    }

  // Serializable on the same data: four clients on one warehouse conflict on the district
  // rows; the conflicts are retried until they commit, and the data stays consistent.
  params.options["isolation"] = "serializable";
  ASSERT_TRUE(workload().validate(params).empty());
  o.duration_s = 1;
  o.max_tries = 0;  // the default: until commit at serializable
  const results::Measurement s = driver::run_workload(workload(), params, conninfo, o, progress);
  EXPECT_GT(s.committed, 0u);
  EXPECT_GT(s.retries + s.failed, 0u) << "no serialization conflict in a serializable run";
  for (const auto& [cls, n] : s.failures_by_class) EXPECT_EQ(cls, "serialization failure") << n;
  EXPECT_EQ(s.failed, 0u);
  EXPECT_NE(figure(s, "failed New-Orders").unit.find("retrying until the window closed"),
            std::string::npos);

  pg::Connection conn = pg::Connection::open(conninfo);
  expect_checks_pass(conn);

  auto failing = [&] {
    std::vector<std::string> out;
    for (const auto& r : run_checks(conn))
      if (!r.passed) out.push_back(r.clause);
    return out;
  };
  // 3.3.2.5 from the NEW-ORDER side: a NEW-ORDER row without its order.
  conn.exec("INSERT INTO new_order VALUES (1, 2, 99999)");
  EXPECT_EQ(failing(), (std::vector<std::string>{"3.3.2.2", "3.3.2.3", "3.3.2.5"}));
  conn.exec("DELETE FROM new_order WHERE no_o_id = 99999");
  // 3.3.2.6 from the ORDER-LINE side: lines without their order.
  conn.exec(
      "INSERT INTO order_line (ol_w_id, ol_d_id, ol_o_id, ol_number, ol_i_id, ol_supply_w_id, "
      "ol_quantity, ol_amount, ol_dist_info) VALUES (1, 2, 99999, 1, 1, 1, 1, 0, 'x')");
  EXPECT_EQ(failing(), (std::vector<std::string>{"3.3.2.4", "3.3.2.6"}));
  conn.exec("DELETE FROM order_line WHERE ol_o_id = 99999");
  expect_checks_pass(conn);
}

// Serializable with the default tries (until commit): a transaction holding the warehouse row
// makes every Payment that waits for it fail to serialize once it commits; each is retried
// after a backoff and counted, and none fails.
TEST_F(TpccTest, SerializationFailuresAreRetriedAndCountedByDefault) {
  const std::string conninfo = pgslow::testing::clone_database(kTemplate);
  WorkloadParams params;
  params.clients = 0;
  params.seed = 11;
  params.options["isolation"] = "serializable";
  ASSERT_TRUE(workload().validate(params).empty());
  driver::DriverOptions o;
  o.clients = params.clients;
  o.workers = 1;
  o.duration_s = 2;
  pg::Connection blocker = pg::Connection::open(conninfo);
  blocker.exec("BEGIN");
  blocker.exec("UPDATE warehouse SET w_ytd = w_ytd WHERE w_id = 1");
  // Releases the row once at least two Payments wait for it (a condition, not a delay).
  std::thread release([&] {
    pg::Connection watch = pg::Connection::open(conninfo);
    const auto deadline = now_us() + 20'000'000;
    while (now_us() < deadline) {
      const auto waiting = watch.query_value(
          "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND "
          "wait_event_type = 'Lock' AND query LIKE '%UPDATE warehouse%'");
      if (waiting && std::stoi(*waiting) >= 2) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    blocker.exec("COMMIT");
  });
  SilentProgress progress;
  const results::Measurement m = driver::run_workload(workload(), params, conninfo, o, progress);
  release.join();
  const results::TxTypeResult& payment = m.by_type[1];
  ASSERT_EQ(payment.name, "payment");
  std::cout << "payment: " << payment.committed << " committed, " << payment.retries << " retries, "
            << payment.failed << " failed\n";
  EXPECT_GE(payment.retries, 2u);
  EXPECT_GT(payment.retry_time_us, 0);
  EXPECT_GE(m.retries, payment.retries);
  EXPECT_EQ(m.failed, 0u);  // retried until they committed
  EXPECT_TRUE(m.failures_by_class.empty());
  for (const auto& r : m.audit)
    if (r.rule.starts_with("no transaction failed") || r.rule.starts_with("sum(D_NEXT_O_ID)")) {
      EXPECT_TRUE(r.passed) << r.rule << ": " << r.measured;
    }
  pg::Connection conn = pg::Connection::open(conninfo);
  expect_checks_pass(conn);
}

// `pgslow bench -w tpcc-lite --warehouses 4` runs 40 terminals, one per (warehouse, district),
// so the report carries no terminals warning.
TEST_F(TpccTest, BenchRunsTenTerminalsPerWarehouseByDefault) {
  const std::filesystem::path json = std::filesystem::temp_directory_path() /
                                     ("tpcc-bench-" + std::to_string(::getpid()) + ".json");
  ProcessOptions po;
  po.timeout = std::chrono::minutes(5);
  const ProcessResult r =
      run_process({pgslow::testing::pgslow_binary().string(), "--workdir",
                   pgslow::testing::cluster_workdir().string(), "bench", "-w", "tpcc-lite",
                   "--warehouses", "4", "--duration", "1", "--json", json.string()},
                  po);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  std::cout << r.output;
  const auto j = nlohmann::json::parse(read_file(json));
  std::filesystem::remove(json);
  EXPECT_EQ(j["clients_requested"], 40);
  EXPECT_EQ(j["clients_connected"], 40);
  bool terminals_row = false;
  for (const auto& row : j["audit"]) {
    if (row["rule"] != "10 terminals per warehouse") continue;
    terminals_row = true;
    EXPECT_TRUE(row["passed"].get<bool>()) << row.dump();
  }
  EXPECT_TRUE(terminals_row) << j["audit"].dump();
}

// tpcc-lite's size is --warehouses on every command: check-data, finding two clones, asks for
// it by that name, and refuses it given twice under both names.
TEST_F(TpccTest, CheckDataAsksForWarehousesByTheirName) {
  pg::Connection admin = pg::Connection::open(pgslow::testing::conninfo());
  for (const char* db : {"pgslow_tpcc_lite_901", "pgslow_tpcc_lite_902"})
    admin.exec(std::string("CREATE DATABASE ") + db);
  const std::vector<std::string> check = {pgslow::testing::pgslow_binary().string(),
                                          "--workdir",
                                          pgslow::testing::cluster_workdir().string(),
                                          "check-data",
                                          "-w",
                                          "tpcc-lite"};
  const ProcessResult several = run_process(check);
  std::vector<std::string> both = check;
  both.insert(both.end(), {"--scale", "901", "--warehouses", "902"});
  const ProcessResult twice = run_process(both);
  for (const char* db : {"pgslow_tpcc_lite_901", "pgslow_tpcc_lite_902"})
    admin.exec(std::string("DROP DATABASE ") + db);

  EXPECT_EQ(several.exit_code, 2) << several.output;
  EXPECT_NE(several.output.find("pgslow_tpcc_lite_901, pgslow_tpcc_lite_902"), std::string::npos)
      << several.output;
  EXPECT_NE(several.output.find("pass --warehouses to pick one"), std::string::npos)
      << several.output;
  EXPECT_EQ(twice.exit_code, 2) << twice.output;
  EXPECT_NE(twice.output.find("excludes"), std::string::npos) << twice.output;
}

TEST_F(TpccTest, LoadCheckHoldsOnTheTemplateOnly) {
  {
    pg::Connection conn = template_db();
    const CheckResult r = run_load_check(conn);
    EXPECT_EQ(r.clause, "3.3.2.11");
    EXPECT_TRUE(r.passed) << r.detail;
  }
  // One delivered order more than loaded breaks it (a run changes the counts).
  pg::Connection conn = pg::Connection::open(pgslow::testing::clone_database(kTemplate));
  conn.exec("DELETE FROM new_order WHERE no_w_id = 1 AND no_d_id = 5 AND no_o_id = 2101");
  const CheckResult r = run_load_check(conn);
  EXPECT_FALSE(r.passed);
  EXPECT_NE(r.detail.find("district 5: count(ORDER) - count(NEW-ORDER) = 2101"), std::string::npos)
      << r.detail;
}

}  // namespace
}  // namespace pgslow::workload::tpcc
