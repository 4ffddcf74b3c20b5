// The transactions' statement order against a scripted Session (no server): the rolled-back
// New-Order of 2.4.2.3, Delivery's skip accounting (2.7.4.2), the isolation of each BEGIN,
// and the headline figures (5.4.2).

#include "workload/tpcc/transactions.h"

#include <gtest/gtest.h>
#include <libpq-fe.h>

#include <algorithm>
#include <array>
#include <deque>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "common/errors.h"
#include "workload/tpcc/audit.h"
#include "workload/tpcc/constants.h"
#include "workload/tpcc/tpcc.h"

namespace pgslow::workload::tpcc {
namespace {

// A result with the given text rows, as libpq would return it.
pg::Result rows(const std::vector<std::vector<std::string>>& values, int columns = 3) {
  PGresult* r = PQmakeEmptyPGresult(nullptr, PGRES_TUPLES_OK);
  static char name[] = "c";
  std::vector<PGresAttDesc> attrs(static_cast<std::size_t>(columns));
  for (auto& a : attrs) a = PGresAttDesc{name, 0, 0, 0, 25, -1, -1};
  PQsetResultAttrs(r, columns, attrs.data());
  for (std::size_t i = 0; i < values.size(); ++i)
    for (std::size_t j = 0; j < values[i].size(); ++j)
      PQsetvalue(r, static_cast<int>(i), static_cast<int>(j),
                 const_cast<char*>(values[i][j].data()), static_cast<int>(values[i][j].size()));
  return pg::Result(r);
}

// Answers the tpcc statements like a server with every item id up to kItems, and logs what ran.
class ScriptedSession final : public Session {
 public:
  std::vector<std::string> log;
  // Per district: the answers del_take_oldest_new_order and del_has_new_order give, in turn.
  std::map<std::int64_t, std::deque<bool>> oldest_found, has_new_order;
  bool fail_commit = false;
  // Statements that find no row (a row of the load missing), and whether New-Order's customer
  // is missing beside its warehouse (the outer join's NULL C_ID).
  std::set<std::string> missing;
  bool customer_missing = false;

  Task<pg::Result> execute(const std::string& statement, const pg::Params& params) override {
    std::string entry = statement;
    if (statement == "no_update_stock") entry += " " + *params[1];
    log.push_back(entry);
    if (missing.contains(statement)) co_return rows({});
    if (statement == "no_get_customer") {
      pg::Result r = rows({{"0.1000", "BARBARBAR", "GC", "0.1000", "7"}}, 5);
      if (customer_missing) PQsetvalue(r.raw(), 0, 4, nullptr, -1);
      co_return r;
    }
    if (statement == "no_update_district") co_return rows({{"0.1000", "3001"}});
    if (statement == "no_get_items") co_return items(*params[0]);
    if (statement == "no_update_stock") co_return rows({{"50", "data", "dist-info"}});
    if (statement == "del_take_oldest_new_order")
      co_return next(oldest_found, *params[1]) ? rows({{"2101"}}) : rows({});
    if (statement == "del_has_new_order")
      co_return rows({{next(has_new_order, *params[1]) ? "t" : "f"}});
    if (statement == "del_update_order") co_return rows({{"7"}});
    if (statement == "del_update_order_lines") co_return rows({{"123.45"}});
    co_return rows({{"1", "1", "1"}});
  }
  Task<pg::Result> query(const std::string& sql) override {
    log.push_back(sql);
    if (sql == "COMMIT" && fail_commit)
      throw pg::Error(pg::ErrorClass::kSerialization, "40001", "could not serialize", sql);
    co_return pg::Result();
  }

 private:
  static bool next(std::map<std::int64_t, std::deque<bool>>& script, const std::string& d_id) {
    auto& answers = script[std::stoll(d_id)];
    if (answers.empty()) return true;
    const bool a = answers.front();
    answers.pop_front();
    return a;
  }
  // "{3,17,100001}" -> a row (id, price, name, data) for each id that exists.
  static pg::Result items(const std::string& array) {
    std::vector<std::vector<std::string>> found;
    std::size_t pos = 1;
    while (pos < array.size() - 1) {
      std::size_t end = array.find_first_of(",}", pos);
      const std::string id = array.substr(pos, end - pos);
      if (std::stoll(id) <= kItems) found.push_back({id, "2.50", "name", "data"});
      pos = end + 1;
    }
    return rows(found, 4);
  }
};

Terminal terminal() {
  return Terminal{.warehouses = 1, .w_id = 1, .d_id = 1, .constants = run_constants(1)};
}

NewOrderInput rolled_back_order() {
  Rng rng(21);
  NewOrderInput in;
  do {
    in = draw_new_order(rng, terminal());
  } while (!in.rollback);
  return in;
}

TEST(NewOrder, TheRollbackDrawHasTheUnusedItemLast) {
  Rng rng(5);
  for (int i = 0; i < 20'000; ++i) {
    const NewOrderInput in = draw_new_order(rng, terminal());
    ASSERT_GE(in.lines.size(), static_cast<std::size_t>(kMinOrderLines));
    ASSERT_LE(in.lines.size(), static_cast<std::size_t>(kMaxOrderLines));
    for (std::size_t l = 0; l + 1 < in.lines.size(); ++l) ASSERT_LE(in.lines[l].i_id, kItems);
    ASSERT_EQ(in.lines.back().i_id > kItems, in.rollback);
  }
}

// 2.4.2.3: the valid items are read, their stock updated and their lines inserted first;
// meeting the unused item rolls back.
TEST(NewOrder, RollbackProcessesTheValidItemsFirst) {
  const NewOrderInput in = rolled_back_order();
  ScriptedSession s;
  const std::string begin = begin_sql(Isolation::kReadCommitted);
  EXPECT_EQ(run_synchronously(run_new_order(s, in, begin)), TxStatus::kRolledBack);
  std::vector<std::string> expected = {begin,
                                       "no_get_customer",
                                       "no_update_district",
                                       "no_insert_order",
                                       "no_insert_new_order",
                                       "no_get_items"};
  for (std::size_t l = 0; l + 1 < in.lines.size(); ++l)
    expected.push_back("no_update_stock " + std::to_string(in.lines[l].i_id));
  expected.push_back("no_insert_order_lines");
  expected.push_back("ROLLBACK");
  EXPECT_EQ(s.log, expected);
}

TEST(NewOrder, ACommittedOrderInsertsItsLines) {
  Rng rng(4);
  NewOrderInput in;
  do {
    in = draw_new_order(rng, terminal());
  } while (in.rollback);
  ScriptedSession s;
  EXPECT_EQ(run_synchronously(run_new_order(s, in, "BEGIN")), TxStatus::kCommitted);
  EXPECT_EQ(s.log.size(), 6 + in.lines.size() + 2);
  EXPECT_EQ(s.log[s.log.size() - 2], "no_insert_order_lines");
  EXPECT_EQ(s.log.back(), "COMMIT");
}

// 2.7.4.2: a district is skipped only when it has no undelivered order; a lost race (the
// oldest order taken by a concurrent Delivery) tries the next oldest instead.
TEST(Delivery, SkipsOnlyEmptyDistrictsAndCountsThemOnCommit) {
  ScriptedSession s;
  s.oldest_found[2] = {false, true};  // lost a race, an order is left: the next DELETE takes it
  s.has_new_order[2] = {true};
  s.oldest_found[5] = {false};  // nothing left: skipped
  s.has_new_order[5] = {false};
  DeliveryTally tally;
  EXPECT_EQ(
      run_synchronously(run_delivery(s, DeliveryInput{.w_id = 1, .carrier_id = 4}, "BEGIN", tally)),
      TxStatus::kCommitted);
  EXPECT_EQ(tally.districts, 10u);
  EXPECT_EQ(tally.skipped, 1u);
  EXPECT_EQ(tally.deliveries_with_skip, 1u);
  int customers = 0;
  for (const auto& e : s.log) customers += e == "del_update_customer";
  EXPECT_EQ(customers, 9);

  // A failed COMMIT counts nothing: the driver's retry counts the attempt that commits.
  ScriptedSession failing;
  failing.fail_commit = true;
  failing.oldest_found[1] = {false};
  failing.has_new_order[1] = {false};
  EXPECT_THROW(run_synchronously(run_delivery(failing, DeliveryInput{.w_id = 1, .carrier_id = 4},
                                              "BEGIN", tally)),
               pg::Error);
  EXPECT_EQ(tally.districts, 10u);
  EXPECT_EQ(tally.skipped, 1u);
}

// A row the load wrote that a statement does not find is a fault of the data: the transaction
// rolls back and the run ends with an error naming the row, never a commit read from "" or 0.
TEST(MissingRows, EachRollsBackAndNamesTheRow) {
  struct Case {
    const char* statement;
    const char* row;
  };
  Rng rng(8);
  NewOrderInput order;
  do {
    order = draw_new_order(rng, terminal());
  } while (order.rollback);
  PaymentInput payment = draw_payment(rng, terminal());
  payment.customer = {.c_id = 0, .c_last = "BARBARBAR"};
  OrderStatusInput by_id = draw_order_status(rng, terminal());
  by_id.customer = {.c_id = 42, .c_last = ""};
  OrderStatusInput by_name = by_id;
  by_name.customer = {.c_id = 0, .c_last = "OUGHTABLE"};
  const std::string stock = "STOCK row (warehouse 1, item " + std::to_string(order.lines[0].i_id);
  auto run = [&](const std::string& statement, ScriptedSession& s) {
    const std::string b = "BEGIN";
    DeliveryTally tally;
    if (statement.starts_with("no_")) return run_synchronously(run_new_order(s, order, b));
    if (statement.starts_with("pay_")) return run_synchronously(run_payment(s, payment, b));
    if (statement == "os_get_customers_by_name")
      return run_synchronously(run_order_status(s, by_name, b));
    if (statement.starts_with("os_")) return run_synchronously(run_order_status(s, by_id, b));
    if (statement.starts_with("del_"))
      return run_synchronously(
          run_delivery(s, DeliveryInput{.w_id = 1, .carrier_id = 2}, b, tally));
    return run_synchronously(run_stock_level(s, draw_stock_level(rng, terminal()), b));
  };
  const std::string district = "DISTRICT row (warehouse 1, district " + std::to_string(order.d_id);
  const Case cases[] = {
      {"no_get_customer", "WAREHOUSE row (warehouse 1)"},
      {"no_update_district", district.c_str()},
      {"no_update_stock", stock.c_str()},
      {"pay_update_warehouse", "WAREHOUSE row (warehouse 1)"},
      {"pay_update_district", "DISTRICT row (warehouse 1, district"},
      {"pay_get_customers_by_name", "CUSTOMER rows named BARBARBAR"},
      {"pay_update_customer", "CUSTOMER row (warehouse 1, district"},
      {"os_get_customer", "CUSTOMER row (warehouse 1, district"},
      {"os_get_customers_by_name", "CUSTOMER rows named OUGHTABLE"},
      {"os_get_last_order", "ORDER rows of customer 42"},
      {"del_update_order", "ORDER row (warehouse 1, district 1, order 2101)"},
      {"del_update_customer", "CUSTOMER row (warehouse 1, district 1, customer 7)"},
      {"sl_get_next_order_id", "DISTRICT row (warehouse 1, district 1)"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.statement);
    ScriptedSession s;
    s.missing.insert(c.statement);
    try {
      run(c.statement, s);
      ADD_FAILURE() << "a missing row passed";
    } catch (const RuntimeError& e) {
      EXPECT_NE(std::string(e.what()).find(std::string("the ") + c.row), std::string::npos)
          << e.what();
      EXPECT_NE(std::string(e.what()).find("is missing"), std::string::npos) << e.what();
    }
    ASSERT_FALSE(s.log.empty());
    EXPECT_EQ(s.log.back(), "ROLLBACK");
    EXPECT_EQ(std::count(s.log.begin(), s.log.end(), "COMMIT"), 0);
  }
  // New-Order's customer missing beside its warehouse.
  ScriptedSession s;
  s.customer_missing = true;
  try {
    run_synchronously(run_new_order(s, order, "BEGIN"));
    ADD_FAILURE() << "a missing customer passed";
  } catch (const RuntimeError& e) {
    EXPECT_NE(std::string(e.what()).find("the CUSTOMER row (warehouse 1, district " +
                                         std::to_string(order.d_id) + ", customer " +
                                         std::to_string(order.c_id) + ") is missing"),
              std::string::npos)
        << e.what();
  }
  EXPECT_EQ(s.log.back(), "ROLLBACK");
}

// The accessors refuse a cell the result does not have: libpq reads it as "" or NULL.
TEST(MissingRows, ResultAccessorsRefuseACellThatIsNotThere) {
  const pg::Result r = rows({{"1", "2", "3"}});
  EXPECT_EQ(r.get(0, 2), "3");
  EXPECT_THROW((void)r.get(1, 0), RuntimeError);
  EXPECT_THROW((void)r.get(0, 3), RuntimeError);
  EXPECT_THROW((void)r.get_int64(-1, 0), RuntimeError);
  EXPECT_THROW((void)r.is_null(0, 5), RuntimeError);
  EXPECT_THROW((void)r.get_optional(2, 0), RuntimeError);
  const pg::Result none = rows({});
  try {
    (void)none.get_double(0, 0);
    ADD_FAILURE() << "read a row of an empty result";
  } catch (const RuntimeError& e) {
    EXPECT_EQ(std::string(e.what()), "row 0, column 0 read from a result of 0 rows and 3 columns");
  }
}

TEST(Isolation, ParsesTheOptionAndOrderStatusReadsOneSnapshot) {
  EXPECT_EQ(parse_isolation("read-committed"), Isolation::kReadCommitted);
  EXPECT_EQ(parse_isolation("repeatable-read"), Isolation::kRepeatableRead);
  EXPECT_EQ(parse_isolation("serializable"), Isolation::kSerializable);
  EXPECT_FALSE(parse_isolation("snapshot"));
  EXPECT_EQ(begin_sql(Isolation::kReadCommitted), "BEGIN ISOLATION LEVEL READ COMMITTED");
  EXPECT_EQ(begin_sql(Isolation::kReadCommitted, Access::kReadOnlyOneSnapshot),
            "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY");
  EXPECT_EQ(begin_sql(Isolation::kReadCommitted, Access::kReadOnly),
            "BEGIN ISOLATION LEVEL READ COMMITTED READ ONLY");
  EXPECT_EQ(begin_sql(Isolation::kSerializable), "BEGIN ISOLATION LEVEL SERIALIZABLE");
  // Stock-Level and Order-Status carry no SSI tracking and cannot fail to serialize.
  EXPECT_EQ(begin_sql(Isolation::kSerializable, Access::kReadOnly),
            "BEGIN ISOLATION LEVEL SERIALIZABLE READ ONLY DEFERRABLE");
  EXPECT_EQ(begin_sql(Isolation::kSerializable, Access::kReadOnlyOneSnapshot),
            "BEGIN ISOLATION LEVEL SERIALIZABLE READ ONLY DEFERRABLE");

  const auto w = make_tpcc_lite();
  WorkloadParams p;
  p.options["isolation"] = "serializable";
  EXPECT_TRUE(w->validate(p).empty());
  p.options["isolation"] = "snapshot";
  ASSERT_EQ(w->validate(p).size(), 1u);
  EXPECT_NE(w->validate(p)[0].message.find("workload.isolation"), std::string::npos);
}

RunCounts counts(std::uint64_t no_committed, std::uint64_t no_rolled_back, double seconds,
                 std::uint64_t districts, std::uint64_t skipped,
                 std::uint64_t deliveries_with_skip = 0) {
  RunCounts run;
  run.duration_s = seconds;
  run.clients = 10;
  run.scale = 1;
  run.think_time = true;
  const std::uint64_t n = no_committed + no_rolled_back;
  auto type = [](const char* name, std::uint64_t committed, std::uint64_t rolled_back = 0) {
    results::TxTypeResult t;
    t.name = name;
    t.committed = committed;
    t.rolled_back = rolled_back;
    t.latency.p90_us = 1e6;
    return t;
  };
  run.by_type = {type("new_order", no_committed, no_rolled_back), type("payment", n),
                 type("order_status", n / 10), type("delivery", n / 10),
                 type("stock_level", n / 10)};
  run.counters.assign(kCounters, 0);
  run.counters[kDeliveryDistricts] = districts;
  run.counters[kDeliverySkipped] = skipped;
  run.counters[kDeliveriesWithSkip] = deliveries_with_skip;
  return run;
}

const results::HeadlineFigure* figure(const std::vector<results::HeadlineFigure>& figures,
                                      std::string_view name) {
  for (const auto& f : figures)
    if (f.name == name) return &f;
  return nullptr;
}

// Without the label, the figure is NOPM: committed New-Orders per minute, rolled-back ones left
// out. (tpmC = NOPM + rolled-back New-Orders per minute, 5.4.2: audit_test.cpp.)
TEST(Headline, WithoutTheLabelTheFigureIsNopm) {
  // 100 Deliveries, one of which skipped 5 districts: within 2.7.4.2's threshold.
  const auto figures = headline_figures(counts(990, 10, 30, 1000, 5, 1));
  ASSERT_GE(figures.size(), 3u);
  EXPECT_EQ(figures[0].name, "NOPM (spec-like terminals)");  // ten terminals, think times on
  EXPECT_DOUBLE_EQ(figures[0].value, 990 * 2.0);
  EXPECT_EQ(figure(figures, "tpmC"), nullptr);
  EXPECT_EQ(figure(figures, "NOPM by D_NEXT_O_ID"), nullptr);  // no probe read: no figure, no 0
  const auto* skips = figure(figures, "Delivery skips");
  ASSERT_NE(skips, nullptr);
  EXPECT_DOUBLE_EQ(skips->value, 1.0);  // 1 of 100 Deliveries
  EXPECT_EQ(skips->unit, "% of Deliveries, 0.50% of districts");
  EXPECT_EQ(figures.back().name, "audit");
}

TEST(Headline, FailedNewOrdersAreShownWheneverRetriesAreOn) {
  RunCounts run = counts(990, 10, 30, 0, 0);
  run.max_tries = 0;  // until commit
  EXPECT_NE(figure(headline_figures(run), "failed New-Orders"), nullptr);
  run.max_tries = 10;
  run.by_type[0].failed = 7;
  const auto figures = headline_figures(run);
  ASSERT_NE(figure(figures, "failed New-Orders"), nullptr);
  EXPECT_DOUBLE_EQ(figure(figures, "failed New-Orders")->value, 7);
  EXPECT_NE(figures[0].warning.find("7 failed (after 10 tries)"), std::string::npos)
      << figures[0].warning;
}

// 2.7.4.2: skipped Deliveries over more than 1% or more than one, whichever is greater.
TEST(Headline, DeliverySkipsAtTheThresholdsEdge) {
  // 200 Deliveries: 1% is 2, which is allowed; 3 is not.
  auto at = [](std::uint64_t deliveries, std::uint64_t with_skip) {
    return headline_figures(counts(990, 10, 30, deliveries * 10, with_skip, with_skip));
  };
  EXPECT_TRUE(figure(at(200, 2), "Delivery skips")->warning.empty());
  EXPECT_NE(figure(at(200, 3), "Delivery skips")->warning.find("3 of 200 Deliveries"),
            std::string::npos);
  // 50 Deliveries: 1% is half of one, so one is allowed and two are not.
  EXPECT_TRUE(figure(at(50, 1), "Delivery skips")->warning.empty());
  EXPECT_FALSE(figure(at(50, 2), "Delivery skips")->warning.empty());
  // Counted per Delivery, not per district.
  const auto figures = headline_figures(counts(990, 10, 30, 2000, 11, 2));
  EXPECT_DOUBLE_EQ(figure(figures, "Delivery skips")->value, 1.0);
  EXPECT_TRUE(figure(figures, "Delivery skips")->warning.empty());
}

// 4.2.2: terminal i of W warehouses: the first 10 x W take distinct (warehouse, district).
TEST(Terminals, TenPerWarehouseTakeDistinctPairsSpreadOverWarehouses) {
  std::set<std::pair<int, int>> pairs;
  for (int i = 0; i < 40; ++i) {
    const Terminal t = terminal_of(4, i);
    pairs.insert({t.w_id, t.d_id});
  }
  EXPECT_EQ(pairs.size(), 40u);
  std::array<int, 4> per_warehouse{};
  for (int i = 0; i < 8; ++i) ++per_warehouse[static_cast<std::size_t>(terminal_of(4, i).w_id - 1)];
  EXPECT_EQ(per_warehouse, (std::array<int, 4>{2, 2, 2, 2}));
  const auto w = make_tpcc_lite();
  WorkloadParams p;
  p.scale = 4;
  EXPECT_EQ(w->default_clients(p), 40);
  EXPECT_EQ(w->default_max_tries(p), 1);
  p.options["isolation"] = "serializable";
  EXPECT_EQ(w->default_max_tries(p), 0);  // until commit
}

}  // namespace
}  // namespace pgslow::workload::tpcc
