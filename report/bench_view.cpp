#include "report/bench_view.h"

#include <fmt/format.h>

#include <ostream>

#include "report/audit.h"
#include "report/json.h"
#include "report/text.h"
#include "results/load_fields.h"
#include "results/stats.h"
#include "results/summary.h"

namespace pgslow::report {

namespace {

std::vector<std::string> tx_row(const std::string& name, std::uint64_t started,
                                std::uint64_t rolled_back, std::uint64_t failed,
                                std::uint64_t retries, const LatencySummary& l) {
  return {name,
          format_count(started),
          format_count(rolled_back),
          format_count(failed),
          format_count(retries),
          format_latency_us(l.p50_us),
          format_latency_us(l.p90_us),
          format_latency_us(l.p95_us),
          format_latency_us(l.p99_us),
          format_latency_us(l.p999_us),
          format_latency_us(l.max_us)};
}

}  // namespace

std::string in_flight_text(const Measurement& m) {
  if (m.in_flight_at_end == 0) return {};
  return fmt::format(
      "{} transaction{} still running when the window closed, the longest for {} (a lower bound "
      "on its latency; not counted)",
      format_count(m.in_flight_at_end), m.in_flight_at_end == 1 ? "" : "s",
      format_latency_us(m.in_flight_longest_us));
}

void render_bench_console(const BenchResult& bench, std::ostream& out) {
  const Measurement& m = bench.measurement;
  TextTable table;
  table.header = {"transaction", "count", "rolled back", "failed", "retries", "p50",
                  "p90",         "p95",   "p99",         "p99.9",  "max"};
  table.right = {false, true, true, true, true, true, true, true, true, true, true};
  for (const auto& t : m.by_type)
    table.rows.push_back(tx_row(t.name, t.committed + t.rolled_back + t.failed, t.rolled_back,
                                t.failed, t.retries, t.latency));
  if (m.by_type.size() > 1)
    table.rows.push_back(tx_row("total", m.committed + m.rolled_back + m.failed, m.rolled_back,
                                m.failed, m.retries, m.latency));
  out << table.render();
  out << fmt::format("\ntps {} ({} committed + rolled back in {}, warm-up excluded)\n",
                     format_number(m.tps, 4), format_count(m.committed + m.rolled_back),
                     format_seconds(m.duration_s));
  // The workload's own figures (tpmC, NOPM, ...), by name.
  for (const auto& f : m.headline) {
    out << results::describe_figure(f, true) << "\n";
    if (!f.warning.empty()) out << fmt::format("  warning: {}\n", f.warning);
  }
  // The workload's audit (TPC-C: what the tpmC label needs), row by row.
  if (!m.audit.empty()) out << "\n" << audit_table(m.audit).render() << "\n";
  if (bench.load.rate > 0)
    out << fmt::format("schedule lag  p50 {}  p99 {}  max {} (rate {}/s; latency includes it)\n",
                       format_latency_us(m.schedule_lag.p50_us),
                       format_latency_us(m.schedule_lag.p99_us),
                       format_latency_us(m.schedule_lag.max_us), format_number(bench.load.rate));
  if (results::pooled(bench.load))
    out << fmt::format("pool wait     p50 {}  p99 {}  max {} ({}; latency includes it)\n",
                       format_latency_us(m.pool_wait.p50_us), format_latency_us(m.pool_wait.p99_us),
                       format_latency_us(m.pool_wait.max_us), results::describe_pool(bench.load));
  if (!bench.pooler.empty()) {
    // What the pooler did (docs/pooler.md): a wait here is the pool's, not the server's.
    auto value = [&](const char* key) {
      auto it = bench.pooler_evidence.find(key);
      return it == bench.pooler_evidence.end() ? 0.0 : it->second;
    };
    const double tx = m.tps * bench.measurement.duration_s;
    out << fmt::format(
        "pooler        {}: clients waited {} ms per transaction for a server connection, "
        "{:.0f} server connections\n",
        bench.pooler, format_number(tx > 0 ? value("pooler_wait_ms") / tx : 0, 3),
        value("pooler_servers"));
  }
  if (bench.load.connect_per_transaction)
    out << fmt::format("connect time  p50 {}  p99 {} (one connection per transaction)\n",
                       format_latency_us(m.connect_time.p50_us),
                       format_latency_us(m.connect_time.p99_us));
  if (m.idle_connections_measured > 0)
    out << fmt::format(
        "server memory {} per idle connection (PSS of {} backends after connecting)\n",
        format_size(m.idle_connection_pss_bytes), m.idle_connections_measured);
  for (const auto& [cls, n] : m.failures_by_class)
    out << fmt::format("failed ({}): {}\n", cls, format_count(n));
  // Failed attempts and backoffs, per type: inside the latencies above.
  if (m.retries > 0)
    out << fmt::format("retry time    {} (retries, and the time they took; latency includes it)\n",
                       results::describe_retries(m));
  if (const std::string text = in_flight_text(m); !text.empty())
    out << fmt::format("in flight     {}\n", text);
  if (m.reconnects > 0) out << fmt::format("reconnects {}\n", format_count(m.reconnects));
  if (m.clients_connected < m.clients_requested)
    out << fmt::format("clients connected {} of {} (the server refused the others)\n",
                       m.clients_connected, m.clients_requested);
  out << fmt::format("data size {}  reset {}{}\n",
                     format_size(static_cast<double>(bench.data_bytes)),
                     format_seconds(bench.reset_seconds),
                     bench.reset_method.empty() ? "" : " by " + bench.reset_method);
}

nlohmann::ordered_json bench_to_json(const BenchResult& bench) {
  nlohmann::ordered_json j = measurement_json(bench.measurement);
  j["workload"] = bench.workload;
  j["scale"] = bench.scale;
  j["reset_seconds"] = bench.reset_seconds;
  if (!bench.reset_method.empty()) j["reset_method"] = bench.reset_method;
  j["interrupted"] = bench.interrupted;
  return j;
}

}  // namespace pgslow::report
