#include "report/metric.h"

#include <fmt/format.h>

#include <array>
#include <cmath>
#include <utility>

#include "report/stats.h"

namespace pgslow::report {
namespace {

constexpr std::array<std::pair<Metric, std::string_view>, 3> kNames{{
    {Metric::kTps, "tps"},
    {Metric::kCpuPerTx, "cpu_per_tx"},
    {Metric::kP99, "p99"},
}};

}  // namespace

std::optional<Metric> parse_metric(std::string_view name) {
  for (const auto& [m, n] : kNames)
    if (n == name) return m;
  return std::nullopt;
}

std::string metric_name(Metric m) {
  for (const auto& [metric, n] : kNames)
    if (metric == m) return std::string(n);
  return "?";
}

std::string metric_names() {
  std::string out;
  for (std::size_t i = 0; i < kNames.size(); ++i) {
    if (i > 0) out += i + 1 == kNames.size() ? " or " : ", ";
    out += kNames[i].second;
  }
  return out;
}

bool higher_is_better(Metric m) {
  return m == Metric::kTps;
}

std::string metric_label(Metric m) {
  switch (m) {
    case Metric::kTps:
      return "TPS";
    case Metric::kCpuPerTx:
      return "CPU/tx";
    case Metric::kP99:
      return "p99";
  }
  return "?";
}

std::optional<double> metric_value(Metric m, const Measurement& run) {
  const auto transactions = static_cast<double>(run.committed + run.rolled_back);
  switch (m) {
    case Metric::kTps:
      return run.tps;
    case Metric::kCpuPerTx:
      if (!(run.server_cpu_s > 0) || transactions <= 0) return std::nullopt;
      return run.server_cpu_s / transactions;
    case Metric::kP99:
      if (!(run.latency.p99_us > 0) || transactions <= 0) return std::nullopt;
      return run.latency.p99_us;
  }
  return std::nullopt;
}

std::string metric_missing(Metric m) {
  switch (m) {
    case Metric::kTps:
      return "the run has no throughput: no transaction finished in the measured window";
    case Metric::kCpuPerTx:
      return "cpu_per_tx needs the CPU time of the server's processes, which pgslow reads from "
             "/proc on the machine that runs them: a server reached by connection only (or one "
             "that restarted during the run, or a run where no transaction finished) has none; "
             "use --metric tps or --metric p99";
    case Metric::kP99:
      return "the run has no latency: no transaction finished in the measured window";
  }
  return "";
}

double search_sample(Metric m, double value) {
  if (higher_is_better(m)) return value;
  return value > 0 ? 1 / value : 0;
}

double metric_ratio(Metric m, double search_ratio) {
  return search_sample(m, search_ratio);
}

EffectInterval in_metric_terms(Metric m, const EffectInterval& e) {
  if (higher_is_better(m)) return e;
  EffectInterval out = e;
  out.ratio = metric_ratio(m, e.ratio);
  out.low = metric_ratio(m, e.high);
  out.high = metric_ratio(m, e.low);
  return out;
}

double metric_in_unit(Metric m, double sample) {
  const double value = search_sample(m, sample);
  switch (m) {
    case Metric::kTps:
      return value;
    case Metric::kCpuPerTx:
      return value * 1e3;
    case Metric::kP99:
      return value / 1e3;
  }
  return value;
}

std::string metric_unit(Metric m) {
  switch (m) {
    case Metric::kTps:
      return "TPS";
    case Metric::kCpuPerTx:
      return "ms CPU/tx";
    case Metric::kP99:
      return "ms p99";
  }
  return "?";
}

std::string format_metric_value(Metric m, double sample) {
  return format_number(metric_in_unit(m, sample)) + " " + metric_unit(m);
}

std::string format_metric_change(Metric m, double search_ratio) {
  if (higher_is_better(m)) return format_change(search_ratio);
  const double r = metric_ratio(m, search_ratio);
  if (!std::isfinite(r) || r <= 0) return metric_label(m) + " n/a";
  // As format_change: percentages near no change, factors from 2x either way.
  if (r >= 2) return fmt::format("{} {}x higher", metric_label(m), format_number(r, 2));
  if (r <= 0.5) return fmt::format("{} {}x lower", metric_label(m), format_number(1 / r, 2));
  return fmt::format("{} {:+.1f}%", metric_label(m), (r - 1) * 100);
}

std::string worse_word(Metric m) {
  return m == Metric::kCpuPerTx ? "costlier" : "slower";
}

std::string better_word(Metric m) {
  return m == Metric::kCpuPerTx ? "cheaper" : "faster";
}

}  // namespace pgslow::report
