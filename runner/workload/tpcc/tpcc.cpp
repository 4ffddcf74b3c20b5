#include "workload/tpcc/tpcc.h"

#include <fmt/format.h>

#include <variant>

#include "workload/tpcc/checks.h"
#include "workload/tpcc/load.h"
#include "workload/tpcc/mix.h"
#include "workload/tpcc/transactions.h"

namespace pgslow::workload::tpcc {
namespace {

// Loader connections, overridable with the option `load_connections`.
constexpr int kDefaultLoadConnections = 3;

// Client counters (Workload::counter_names()).
enum Counter : std::size_t { kDeliveryDistricts, kDeliverySkipped, kCounters };

// Isolation of the read-write transactions: the option `isolation`, read-committed by default.
Isolation isolation(const WorkloadParams& params) {
  auto it = params.options.find("isolation");
  if (it == params.options.end()) return Isolation::kReadCommitted;
  return parse_isolation(it->second).value_or(Isolation::kReadCommitted);
}

ConfigError problem(std::string message, std::string hint) {
  ConfigError e;
  e.message = std::move(message);
  e.hint = std::move(hint);
  return e;
}

using Input =
    std::variant<NewOrderInput, PaymentInput, OrderStatusInput, DeliveryInput, StockLevelInput>;

// One terminal (clause 2.1.4): a home warehouse, its own district for Stock-Level, and a
// random stream of its own.
class TpccClient final : public Client {
 public:
  TpccClient(const WorkloadParams& params, int client_index)
      : rng_(params.seed * 0x9e3779b97f4a7c15ULL + static_cast<std::uint64_t>(client_index) + 1),
        think_time_(params.think_time),
        begin_(begin_sql(isolation(params))),
        begin_one_snapshot_(begin_sql(isolation(params), true)) {
    terminal_.warehouses = params.scale;
    terminal_.w_id = client_index % params.scale + 1;
    terminal_.d_id = client_index / params.scale % 10 + 1;
    terminal_.constants = run_constants(params.seed);
  }

  std::size_t choose() override {
    chosen_ = deck_.deal(rng_);
    switch (mix()[chosen_].kind) {
      case TxKind::kNewOrder:
        input_ = draw_new_order(rng_, terminal_);
        break;
      case TxKind::kPayment:
        input_ = draw_payment(rng_, terminal_);
        break;
      case TxKind::kOrderStatus:
        input_ = draw_order_status(rng_, terminal_);
        break;
      case TxKind::kDelivery:
        input_ = draw_delivery(rng_, terminal_);
        break;
      case TxKind::kStockLevel:
        input_ = draw_stock_level(rng_, terminal_);
        break;
    }
    wait_us_ = think_time_ ? wait_time_us(rng_, mix()[chosen_]) : 0;
    return chosen_;
  }

  // The inputs stay as drawn, so a retry runs the same transaction again.
  Task<TxStatus> execute(Session& s) override {
    switch (mix()[chosen_].kind) {
      case TxKind::kNewOrder:
        return run_new_order(s, std::get<NewOrderInput>(input_), begin_);
      case TxKind::kPayment:
        return run_payment(s, std::get<PaymentInput>(input_), begin_);
      case TxKind::kOrderStatus:
        // 2.6 / 3.4: Order-Status reads the customer, the order and its lines in one snapshot.
        return run_order_status(s, std::get<OrderStatusInput>(input_), begin_one_snapshot_);
      case TxKind::kDelivery:
        return run_delivery(s, std::get<DeliveryInput>(input_), begin_, delivery_);
      case TxKind::kStockLevel:
        return run_stock_level(s, std::get<StockLevelInput>(input_), begin_);
    }
    return run_stock_level(s, std::get<StockLevelInput>(input_), begin_);
  }

  std::int64_t think_time_us() const override { return wait_us_; }

  void take_counters(std::vector<std::uint64_t>& into) override {
    into.resize(kCounters, 0);
    into[kDeliveryDistricts] += delivery_.districts;
    into[kDeliverySkipped] += delivery_.skipped;
    delivery_ = {};
  }

 private:
  Rng rng_;
  Deck deck_;
  Terminal terminal_;
  bool think_time_;
  std::string begin_;               // BEGIN of the read-write transactions
  std::string begin_one_snapshot_;  // BEGIN of Order-Status
  DeliveryTally delivery_;
  std::size_t chosen_ = 0;
  Input input_;
  std::int64_t wait_us_ = 0;
};

class TpccLite final : public Workload {
 public:
  std::string_view name() const override { return "tpcc-lite"; }

  std::string_view description() const override {
    return "TPC-C's nine tables and five transactions, dealt from a deck of 23 (New-Order and "
           "Payment 10 each, Order-Status, Delivery, Stock-Level 1 each), warehouses = scale, "
           "ten clients per warehouse by default, no think time. Stresses row locks on hot "
           "warehouse and district rows, index inserts, WAL and the buffer cache; reports tpmC "
           "and NOPM.";
  }

  std::vector<ConfigError> validate(WorkloadParams& params) const override {
    std::vector<ConfigError> problems;
    if (params.scale < 1)
      problems.push_back(problem(
          "workload.scale (warehouses) must be at least 1, got " + std::to_string(params.scale),
          "tpcc-lite loads about 100 MB per warehouse"));
    if (params.clients < 0)
      problems.push_back(
          problem("workload.clients must be at least 1, got " + std::to_string(params.clients),
                  "leave it out for ten clients per warehouse"));
    if (params.clients == 0 && params.scale >= 1) params.clients = params.scale * 10;
    for (const auto& [key, value] : params.options) {
      if (key == "isolation") {
        if (!parse_isolation(value))
          problems.push_back(
              problem("workload.isolation must be read-committed, repeatable-read or serializable, "
                      "got '" +
                          value + "'",
                      "read-committed is the default; the stricter levels need --max-tries > 1 to "
                      "retry serialization failures"));
        continue;
      }
      if (key != "load_connections") {
        problems.push_back(problem("workload option '" + key + "' is not a tpcc-lite option",
                                   "tpcc-lite takes: isolation, load_connections"));
        continue;
      }
      if (load_connections(params) < 1 || load_connections(params) > 16)
        problems.push_back(
            problem("workload.load_connections must be within 1 .. 16, got '" + value + "'",
                    "the default is 3"));
    }
    return problems;
  }

  std::vector<std::string> transaction_types(const WorkloadParams& /*params*/) const override {
    std::vector<std::string> names;
    for (const auto& e : mix()) names.emplace_back(e.name);
    return names;
  }

  std::vector<StatementDef> statements(const WorkloadParams& /*params*/) const override {
    std::vector<StatementDef> all;
    for (auto list : {new_order_statements(), payment_statements(), order_status_statements(),
                      delivery_statements(), stock_level_statements()})
      all.insert(all.end(), list.begin(), list.end());
    return all;
  }

  std::string data_fingerprint(const WorkloadParams& params) const override {
    return "tpcc-lite:v1:warehouses=" + std::to_string(params.scale);
  }

  void load(const std::string& conninfo, const WorkloadParams& params,
            Progress& progress) const override {
    load_database(conninfo,
                  LoadOptions{.warehouses = params.scale, .connections = load_connections(params)},
                  progress);
  }

  std::unique_ptr<Client> make_client(const WorkloadParams& params,
                                      int client_index) const override {
    return std::make_unique<TpccClient>(params, client_index);
  }

  std::vector<std::string> counter_names() const override {
    return {"delivery_districts", "delivery_skipped"};
  }

  std::vector<results::HeadlineFigure> headline(const RunCounts& run) const override {
    return headline_figures(run);
  }

  std::vector<CheckResult> check(pg::Connection& conn, const WorkloadParams&) const override {
    return run_checks(conn);
  }

 private:
  static int load_connections(const WorkloadParams& params) {
    auto it = params.options.find("load_connections");
    if (it == params.options.end()) return kDefaultLoadConnections;
    try {
      std::size_t used = 0;
      const int n = std::stoi(it->second, &used);
      return used == it->second.size() ? n : -1;
    } catch (const std::exception&) {
      return -1;
    }
  }
};

}  // namespace

std::vector<results::HeadlineFigure> headline_figures(const RunCounts& run) {
  std::vector<results::HeadlineFigure> out;
  const double minutes = run.duration_s / 60;
  auto per_minute = [&](std::uint64_t n) {
    return minutes > 0 ? static_cast<double>(n) / minutes : 0.0;
  };
  std::uint64_t all = 0;
  for (const auto& t : run.by_type) all += t.committed + t.rolled_back;
  for (std::size_t i = 0; i < run.by_type.size() && i < mix().size(); ++i) {
    const results::TxTypeResult& t = run.by_type[i];
    if (mix()[i].kind == TxKind::kNewOrder) {
      // 5.4.2: tpmC counts every New-Order, the 1% rolled back by design included.
      out.push_back({.name = "tpmC",
                     .value = per_minute(t.committed + t.rolled_back),
                     .unit = "New-Orders per minute, rolled back included",
                     .warning = ""});
      out.push_back({.name = "NOPM",
                     .value = per_minute(t.committed),
                     .unit = "committed New-Orders per minute",
                     .warning = ""});
    }
  }
  // 5.2.3: the minimum mix over the measured transactions.
  if (all > 0) {
    for (std::size_t i = 0; i < run.by_type.size() && i < mix().size(); ++i) {
      const double share =
          100.0 * static_cast<double>(run.by_type[i].committed + run.by_type[i].rolled_back) /
          static_cast<double>(all);
      const double minimum = mix()[i].kind == TxKind::kPayment    ? 43.0
                             : mix()[i].kind == TxKind::kNewOrder ? 0.0
                                                                  : 4.0;
      if (share < minimum)
        out.push_back({.name = std::string(mix()[i].name) + " share",
                       .value = share,
                       .unit = "%",
                       .warning = fmt::format("below the minimum of {:.0f}% (5.2.3): a run this "
                                              "short deals too few whole decks of 23",
                                              minimum)});
    }
  }
  // 2.7.4.2 / 5.4.5: districts skipped for want of an undelivered order, reported always,
  // flagged above 1%.
  if (run.counters.size() >= kCounters && run.counters[kDeliveryDistricts] > 0) {
    const double skipped = 100.0 * static_cast<double>(run.counters[kDeliverySkipped]) /
                           static_cast<double>(run.counters[kDeliveryDistricts]);
    results::HeadlineFigure f{
        .name = "Delivery skips", .value = skipped, .unit = "% of districts", .warning = ""};
    if (skipped > 1.0)
      f.warning = fmt::format("{} of {} districts had no undelivered order (5.4.5 allows 1%)",
                              run.counters[kDeliverySkipped], run.counters[kDeliveryDistricts]);
    out.push_back(std::move(f));
  }
  return out;
}

std::unique_ptr<workload::Workload> make_tpcc_lite() {
  return std::make_unique<TpccLite>();
}

}  // namespace pgslow::workload::tpcc
