#include "workload/tpcc/tpcc.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <variant>

#include "common/strings.h"
#include "workload/tpcc/audit.h"
#include "workload/tpcc/checks.h"
#include "workload/tpcc/constants.h"
#include "workload/tpcc/load.h"
#include "workload/tpcc/mix.h"
#include "workload/tpcc/transactions.h"

namespace pgslow::workload::tpcc {
namespace {

// Loader connections, overridable with the option `load_connections`.
constexpr int kDefaultLoadConnections = 3;

// Attempts per transaction under repeatable-read and serializable when --max-tries is not
// given: serialization failures are the expected outcome there, and a terminal's user retries
// until the order goes through (0: until it commits; the measured window bounds it).
constexpr int kStrictIsolationTries = 0;

// Isolation of the read-write transactions: the option `isolation`, read-committed by default.
Isolation isolation(const WorkloadParams& params) {
  return isolation_option(params.options);
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
        begin_read_only_(begin_sql(isolation(params), Access::kReadOnly)),
        begin_one_snapshot_(begin_sql(isolation(params), Access::kReadOnlyOneSnapshot)) {
    terminal_ = terminal_of(params.scale, client_index);
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
    count_draw();
    keying_us_ = think_time_ ? tpcc::keying_time_us(mix()[chosen_]) : 0;
    think_us_ = think_time_ ? tpcc::think_time_us(rng_, mix()[chosen_]) : 0;
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
        return run_stock_level(s, std::get<StockLevelInput>(input_), begin_read_only_);
    }
    return run_stock_level(s, std::get<StockLevelInput>(input_), begin_read_only_);
  }

  std::int64_t keying_time_us() const override { return keying_us_; }
  std::int64_t think_time_us() const override { return think_us_; }

  void take_counters(std::vector<std::uint64_t>& into) override {
    into.resize(kCounters, 0);
    drawn_[kDeliveryDistricts] = delivery_.districts;
    drawn_[kDeliverySkipped] = delivery_.skipped;
    drawn_[kDeliveriesWithSkip] = delivery_.deliveries_with_skip;
    for (std::size_t i = 0; i < kCounters; ++i) into[i] += drawn_[i];
    delivery_ = {};
    drawn_ = {};
  }

 private:
  Rng rng_;
  Deck deck_;
  Terminal terminal_;
  bool think_time_;
  std::string begin_;               // BEGIN of the read-write transactions
  std::string begin_read_only_;     // BEGIN of Stock-Level
  std::string begin_one_snapshot_;  // BEGIN of Order-Status
  DeliveryTally delivery_;
  std::size_t chosen_ = 0;
  Input input_;
  std::int64_t keying_us_ = 0;
  std::int64_t think_us_ = 0;
  std::array<std::uint64_t, kCounters> drawn_{};  // since take_counters

  // What the terminal drew, for the audit's rates (audit.h).
  void count_draw() {
    const int warehouses = terminal_.warehouses;
    if (const auto* no = std::get_if<NewOrderInput>(&input_)) {
      ++drawn_[kNewOrdersDrawn];
      drawn_[kOrderLines] += no->lines.size();
      ++drawn_[kOrdersWith5Lines + no->lines.size() - static_cast<std::size_t>(kMinOrderLines)];
      for (const auto& line : no->lines) {
        if (line.supply_w_id == no->w_id) continue;
        ++drawn_[kRemoteOrderLines];
        ++drawn_[kRemoteLineBins + spread_bin(no->w_id, line.supply_w_id, warehouses)];
      }
      if (no->rollback) ++drawn_[kRollbacksDrawn];
    } else if (const auto* pay = std::get_if<PaymentInput>(&input_)) {
      ++drawn_[kPaymentsDrawn];
      if (pay->c_w_id != pay->w_id) {
        ++drawn_[kRemotePayments];
        ++drawn_[kRemotePaymentBins + spread_bin(pay->w_id, pay->c_w_id, warehouses)];
      }
      if (pay->customer.c_id == 0) ++drawn_[kPaymentsByName];
    } else if (const auto* os = std::get_if<OrderStatusInput>(&input_)) {
      ++drawn_[kOrderStatusDrawn];
      if (os->customer.c_id == 0) ++drawn_[kOrderStatusByName];
    }
  }
};

class TpccLite final : public Workload {
 public:
  std::string_view name() const override { return "tpcc-lite"; }

  std::string_view description() const override {
    return "TPC-C's nine tables and five transactions, dealt from a deck of 23 (New-Order and "
           "Payment 10 each, Order-Status, Delivery, Stock-Level 1 each), warehouses = scale, "
           "ten clients per warehouse by default, keying and think times off unless --think-time. "
           "Stresses row locks on hot warehouse and district rows, index inserts, WAL and the "
           "buffer cache; reports tpmC and NOPM.";
  }
  std::string_view size_name() const override { return "warehouses"; }

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
    if (params.clients == 0 && params.scale >= 1) params.clients = default_clients(params);
    for (const auto& [key, value] : params.options) {
      if (key == "isolation") {
        if (!parse_isolation(value))
          problems.push_back(
              problem("workload.isolation must be read-committed, repeatable-read or serializable, "
                      "got '" +
                          value + "'",
                      "read-committed is the default; the stricter levels retry serialization "
                      "failures until the transaction commits unless --max-tries says otherwise"));
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

  std::vector<std::string> counter_names() const override { return tpcc::counter_names(); }

  // 4.2.2: ten terminals per warehouse.
  int default_clients(const WorkloadParams& params) const override {
    return std::max(1, params.scale) * kTerminalsPerWarehouse;
  }

  int default_max_tries(const WorkloadParams& params) const override {
    return isolation(params) == Isolation::kReadCommitted ? 1 : kStrictIsolationTries;
  }

  // Every committed New-Order takes one D_NEXT_O_ID: the cross-check of NOPM.
  std::string window_probe_sql() const override { return "SELECT sum(d_next_o_id) FROM district"; }
  int window_probe_type() const override { return 0; }  // new_order, first in mix()

  std::vector<results::HeadlineFigure> headline(const RunCounts& run) const override {
    return headline_figures(run);
  }

  std::vector<results::AuditRow> audit(const RunCounts& run) const override {
    return audit_run(run);
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

// "1 try", "10 tries"; 0 tries: until commit.
std::string tries_text(int max_tries) {
  if (max_tries == 0) return "retrying until the window closed";
  return fmt::format("{} tr{}", max_tries, max_tries == 1 ? "y" : "ies");
}

}  // namespace

std::vector<results::HeadlineFigure> headline_figures(const RunCounts& run) {
  const std::vector<results::AuditRow> rows = audit_run(run);
  const std::vector<std::string> broken = failed_rules(rows);
  std::vector<results::HeadlineFigure> out;
  const double minutes = run.duration_s / 60;
  auto per_minute = [&](double n) { return minutes > 0 ? n / minutes : 0.0; };
  if (!run.by_type.empty()) {
    const results::TxTypeResult& no = run.by_type[0];  // new_order, first in mix()
    const results::HeadlineFigure nopm{.name = "NOPM",
                                       .value = per_minute(static_cast<double>(no.committed)),
                                       .unit = "committed New-Orders per minute",
                                       .warning = ""};
    if (broken.empty()) {
      // 5.4.2: tpmC counts every New-Order, the 1% rolled back by design included.
      out.push_back({.name = "tpmC",
                     .value = per_minute(static_cast<double>(no.committed + no.rolled_back)),
                     .unit = "New-Orders per minute, rolled back included",
                     .warning = ""});
      out.push_back(nopm);
    } else {
      // No label: the audit's last figure says how many of its rows passed, the warning which
      // failed. Terminals as the spec's (ten per warehouse, keying and think times) are named.
      const bool spec_like =
          run.think_time && run.clients == std::max(1, run.scale) * kTerminalsPerWarehouse;
      results::HeadlineFigure f = nopm;
      if (spec_like) f.name = "NOPM (spec-like terminals)";
      f.unit += ", not tpmC";
      f.warning = "not tpmC: " + join(broken, "; ");
      out.push_back(std::move(f));
    }
    // Beside the figure whenever failures can happen (retries on) or did.
    if (no.failed > 0 || run.max_tries != 1)
      out.push_back(
          {.name = "failed New-Orders",
           .value = static_cast<double>(no.failed),
           .unit = fmt::format("after {}, in neither figure above", tries_text(run.max_tries)),
           .warning = no.failed > 0 && run.max_tries == 1
                          ? "serialization failures and deadlocks were not retried: --max-tries"
                          : ""});
    // HammerDB's cross-check, exact: the audit's row says whether it held. Without its reads
    // (a window ended early) there is no figure, never a 0.
    if (run.probe_delta) {
      const auto row = std::find_if(rows.begin(), rows.end(), [](const results::AuditRow& r) {
        return r.rule.starts_with("sum(D_NEXT_O_ID)");
      });
      out.push_back({.name = "NOPM by D_NEXT_O_ID",
                     .value = per_minute(*run.probe_delta),
                     .unit = row->measured,
                     .warning = row->passed ? "" : "the cross-check failed: " + row->measured});
    }
  }
  // 2.7.4.2 asks for both percentages: the Deliveries with a skip, and the districts skipped.
  if (run.counters.size() > kDeliveriesWithSkip && run.counters[kDeliveryDistricts] > 0) {
    const double districts = static_cast<double>(run.counters[kDeliveryDistricts]);
    const double deliveries = districts / kDistrictsPerWarehouse;
    const double with_skip = static_cast<double>(run.counters[kDeliveriesWithSkip]);
    const bool within = with_skip <= std::max(0.01 * deliveries, 1.0);
    out.push_back(
        {.name = "Delivery skips",
         .value = 100.0 * with_skip / deliveries,
         .unit =
             fmt::format("% of Deliveries, {:.2f}% of districts",
                         100.0 * static_cast<double>(run.counters[kDeliverySkipped]) / districts),
         .warning = within ? ""
                           : fmt::format("{:.0f} of {:.0f} Deliveries skipped a district, more "
                                         "than 2.7.4.2 allows",
                                         with_skip, deliveries)});
  }
  const auto passed = static_cast<double>(
      std::count_if(rows.begin(), rows.end(), [](const results::AuditRow& r) { return r.passed; }));
  out.push_back({.name = "audit",
                 .value = passed,
                 .unit = fmt::format("of {} rules passed", rows.size()),
                 .warning = ""});
  return out;
}

std::unique_ptr<workload::Workload> make_tpcc_lite() {
  return std::make_unique<TpccLite>();
}

}  // namespace pgslow::workload::tpcc
