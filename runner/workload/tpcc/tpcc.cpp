#include "workload/tpcc/tpcc.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <variant>

#include "common/strings.h"
#include "workload/tpcc/checks.h"
#include "workload/tpcc/constants.h"
#include "workload/tpcc/load.h"
#include "workload/tpcc/mix.h"
#include "workload/tpcc/transactions.h"

namespace pgslow::workload::tpcc {
namespace {

// Loader connections, overridable with the option `load_connections`.
constexpr int kDefaultLoadConnections = 3;

// Client counters (Workload::counter_names()).
enum Counter : std::size_t { kDeliveryDistricts, kDeliverySkipped, kDeliveriesWithSkip, kCounters };

// Attempts per transaction under repeatable-read and serializable when --max-tries is not
// given: serialization failures are the expected outcome there, retried as BenchBase does.
constexpr int kStrictIsolationTries = 10;

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
    into[kDeliveryDistricts] += delivery_.districts;
    into[kDeliverySkipped] += delivery_.skipped;
    into[kDeliveriesWithSkip] += delivery_.deliveries_with_skip;
    delivery_ = {};
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
                      "failures up to 10 tries unless --max-tries says otherwise"));
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
    return {"delivery_districts", "delivery_skipped", "deliveries_with_skip"};
  }

  // 4.2.2: ten terminals per warehouse.
  int default_clients(const WorkloadParams& params) const override {
    return std::max(1, params.scale) * kTerminalsPerWarehouse;
  }

  int default_max_tries(const WorkloadParams& params) const override {
    return isolation(params) == Isolation::kReadCommitted ? 1 : kStrictIsolationTries;
  }

  // Every committed New-Order takes one D_NEXT_O_ID: the cross-check of NOPM.
  std::string window_probe_sql() const override { return "SELECT sum(d_next_o_id) FROM district"; }

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

// The rules a run breaks, each worded for "not tpmC: ...", and the figures that explain them,
// shown after tpmC and NOPM. "tpmC" is the New-Order rate's name only when `broken` is empty.
struct Rules {
  std::vector<std::string> broken;
  std::vector<results::HeadlineFigure> notes;
};

// "1 try", "10 tries".
std::string tries_text(int max_tries) {
  return fmt::format("{} tr{}", max_tries, max_tries == 1 ? "y" : "ies");
}

// How many of the run's transaction types have their row of the mix table (both in mix() order).
std::size_t typed(const RunCounts& run) {
  return std::min(run.by_type.size(), mix().size());
}

// 4.2.2: ten terminals per warehouse, one per (warehouse, district).
void check_terminals(const RunCounts& run, Rules& rules) {
  const int terminals = std::max(1, run.scale) * kTerminalsPerWarehouse;
  if (run.scale <= 0 || run.clients <= 0 || run.clients == terminals) return;
  rules.broken.push_back(fmt::format("{} terminals, not 10 per warehouse (4.2.2)", run.clients));
  rules.notes.push_back(
      {.name = "terminals",
       .value = static_cast<double>(run.clients),
       .unit = fmt::format("for {} warehouses", run.scale),
       .warning = run.clients < terminals
                      ? fmt::format("fewer than the {} of 4.2.2: {} of the {} (warehouse, "
                                    "district) pairs have no terminal, so Stock-Level never "
                                    "reads them and fewer New-Orders wait on each district row",
                                    terminals, terminals - run.clients, terminals)
                      : fmt::format("more than the {} of 4.2.2: terminals share (warehouse, "
                                    "district) pairs, so the district and warehouse rows see "
                                    "more contention than the spec's terminals cause",
                                    terminals)});
}

// 5.2.5.3: the 90th percentile response time of each type within its limit.
void check_response_times(const RunCounts& run, Rules& rules) {
  for (std::size_t i = 0; i < typed(run); ++i) {
    const results::TxTypeResult& t = run.by_type[i];
    const double limit_s = mix()[i].p90_limit_seconds;
    if (t.committed + t.rolled_back > 0 && t.latency.p90_us > limit_s * 1e6)
      rules.broken.push_back(fmt::format("{} p90 {:.1f} s above {:.0f} s (5.2.5.3)", t.name,
                                         t.latency.p90_us / 1e6, limit_s));
  }
}

// Failures (after retries), which are in neither tpmC, NOPM nor the latencies; then 5.2.3's
// minimum mix over the measured transactions.
void check_failures_and_mix(const RunCounts& run, Rules& rules) {
  std::uint64_t failed = 0, all = 0;
  for (const auto& t : run.by_type) {
    failed += t.failed;
    all += t.committed + t.rolled_back;
  }
  if (failed > 0)
    rules.broken.push_back(
        fmt::format("{} transactions failed after {}", failed, tries_text(run.max_tries)));
  if (all == 0) return;
  const std::uint64_t all_with_failed = all + failed;
  for (std::size_t i = 0; i < typed(run); ++i) {
    const results::TxTypeResult& t = run.by_type[i];
    const double share =
        100.0 * static_cast<double>(t.committed + t.rolled_back) / static_cast<double>(all);
    const double minimum = mix()[i].min_share_percent;
    if (share >= minimum) continue;
    // The deck deals the minimums; short of them, either failures took the shortfall out of
    // the counts or too few whole decks were dealt.
    const double with_failed = 100.0 * static_cast<double>(t.committed + t.rolled_back + t.failed) /
                               static_cast<double>(all_with_failed);
    const std::string cause =
        t.failed > 0 && with_failed >= minimum
            ? fmt::format("{} failed {} transactions are left out of the counts", t.failed, t.name)
            : "a run this short deals too few whole decks of 23";
    rules.broken.push_back(
        fmt::format("{} share {:.1f}% below {:.0f}% (5.2.3)", t.name, share, minimum));
    rules.notes.push_back(
        {.name = std::string(t.name) + " share",
         .value = share,
         .unit = "%",
         .warning = fmt::format("below the minimum of {:.0f}% (5.2.3): {}", minimum, cause)});
  }
}

// 2.7.4.2: Deliveries with a skipped district, and the districts skipped. The threshold is on
// the Deliveries: more than 1%, or more than one, whichever is greater.
void check_delivery_skips(const RunCounts& run, Rules& rules) {
  if (run.counters.size() < kCounters || run.counters[kDeliveryDistricts] == 0) return;
  const double districts = static_cast<double>(run.counters[kDeliveryDistricts]);
  const double deliveries = districts / kDistrictsPerWarehouse;
  const auto with_skip = run.counters[kDeliveriesWithSkip];
  const double share = 100.0 * static_cast<double>(with_skip) / deliveries;
  results::HeadlineFigure f{
      .name = "Delivery skips",
      .value = share,
      .unit = fmt::format("% of Deliveries, {:.2f}% of districts",
                          100.0 * static_cast<double>(run.counters[kDeliverySkipped]) / districts),
      .warning = ""};
  const double allowed = std::max(0.01 * deliveries, 1.0);
  if (static_cast<double>(with_skip) > allowed) {
    f.warning = fmt::format("{} of {:.0f} Deliveries skipped a district, more than 2.7.4.2 allows",
                            with_skip, deliveries);
    rules.broken.push_back(
        fmt::format("{} Deliveries with a skipped district (2.7.4.2)", with_skip));
  }
  rules.notes.push_back(std::move(f));
}

}  // namespace

std::vector<results::HeadlineFigure> headline_figures(const RunCounts& run) {
  Rules rules;
  check_terminals(run, rules);
  // 5.2.5.7: keying and think times.
  if (!run.think_time) rules.broken.push_back("keying and think times off (5.2.5.7)");
  check_response_times(run, rules);
  check_failures_and_mix(run, rules);
  check_delivery_skips(run, rules);

  std::vector<results::HeadlineFigure> out;
  const double minutes = run.duration_s / 60;
  auto per_minute = [&](double n) { return minutes > 0 ? n / minutes : 0.0; };
  const results::TxTypeResult* no = nullptr;
  for (std::size_t i = 0; i < typed(run) && no == nullptr; ++i)
    if (mix()[i].kind == TxKind::kNewOrder) no = &run.by_type[i];
  if (no != nullptr) {
    const bool qualifies = rules.broken.empty();
    // 5.4.2: tpmC counts every New-Order, the 1% rolled back by design included.
    out.push_back({.name = qualifies ? "tpmC" : "New-Orders/min (not tpmC)",
                   .value = per_minute(static_cast<double>(no->committed + no->rolled_back)),
                   .unit = "New-Orders per minute, rolled back included",
                   .warning = qualifies ? "" : "not tpmC: " + join(rules.broken, "; ")});
    out.push_back({.name = "NOPM",
                   .value = per_minute(static_cast<double>(no->committed)),
                   .unit = "committed New-Orders per minute",
                   .warning = ""});
    // Beside the figure whenever failures can happen (retries on) or did.
    if (no->failed > 0 || run.max_tries > 1)
      out.push_back(
          {.name = "failed New-Orders",
           .value = static_cast<double>(no->failed),
           .unit = fmt::format("after {}, in neither figure above", tries_text(run.max_tries)),
           .warning = no->failed > 0 && run.max_tries == 1
                          ? "serialization failures and deadlocks were not retried: --max-tries"
                          : ""});
    // HammerDB's cross-check: every committed New-Order took one D_NEXT_O_ID. The counts may
    // differ by the New-Orders in flight as the window opened and closed: at most one per
    // terminal at each end.
    if (run.probe_delta) {
      const double counted = static_cast<double>(no->committed);
      const double explained = 2.0 * std::max(1, run.clients);
      const double gap = *run.probe_delta - counted;
      out.push_back(
          {.name = "NOPM by D_NEXT_O_ID",
           .value = per_minute(*run.probe_delta),
           .unit = fmt::format("sum(D_NEXT_O_ID) rose by {:.0f} in the window; NOPM counted {:.0f}",
                               *run.probe_delta, counted),
           .warning = std::abs(gap) > explained
                          ? fmt::format("they differ by {:.0f}, more than the {:.0f} New-Orders "
                                        "in flight as the window opened and closed explain",
                                        gap, explained)
                          : ""});
    }
  }
  out.insert(out.end(), rules.notes.begin(), rules.notes.end());
  return out;
}

std::unique_ptr<workload::Workload> make_tpcc_lite() {
  return std::make_unique<TpccLite>();
}

}  // namespace pgslow::workload::tpcc
