#include "results/axes.h"

#include <algorithm>
#include <cmath>

#include "common/format.h"

namespace pgslow::results {

namespace {

std::optional<double> per_tx(const Axis& axis, const std::map<std::string, double>& counters) {
  const auto it = counters.find(std::string(axis.evidence));
  if (it == counters.end() || !std::isfinite(it->second)) return std::nullopt;
  return std::max(it->second, kCounterFloor);
}

std::optional<double> cpu_per_tx(double cpu_s, double transactions) {
  if (!(cpu_s > 0) || !(transactions > 0)) return std::nullopt;
  return cpu_s / transactions;
}

std::optional<double> latency(const Axis& axis, const LatencySummary& l) {
  const double v = axis.percentile == 95 ? l.p95_us : l.p99_us;
  if (!(v > 0)) return std::nullopt;
  return v;
}

}  // namespace

const Axis* find_axis(std::string_view key) {
  for (const Axis& a : kAxes)
    if (a.key == key) return &a;
  return nullptr;
}

std::string axis_names() {
  std::string out;
  for (const Axis& a : kAxes) out += (out.empty() ? "" : ", ") + std::string(a.key);
  return out;
}

void holm_over_axes(std::vector<AxisInterval>& axes, double confidence) {
  std::vector<Interval*> family;
  for (auto& a : axes) family.push_back(&a.interval);
  holm(family, confidence);
}

std::vector<AxisEffect> axis_effects(const std::vector<AxisInterval>& axes) {
  std::vector<AxisEffect> out;
  for (const auto& a : axes) out.push_back({std::string(a.axis->key), a.interval});
  return out;
}

const Axis* precision_reached(const std::vector<AxisInterval>& axes, double precision,
                              std::string_view choice) {
  if (!(precision > 0)) return nullptr;
  for (const auto& a : axes) {
    const bool watched =
        choice == "auto" ? a.axis == &kTpsAxis || a.axis == &kCpuAxis : a.axis->key == choice;
    if (watched && a.interval.known && a.interval.half_width() <= precision) return a.axis;
  }
  return nullptr;
}

std::string precision_axis_of(const Metric& metric) {
  switch (metric.kind) {
    case Metric::Kind::kTps:
      return "tps";
    case Metric::Kind::kCpuPerTx:
      return "cpu_per_tx";
    case Metric::Kind::kP99:
      return "p99";
    case Metric::Kind::kEvidencePerTx:
      if (const Axis* a = find_axis(metric.evidence); a != nullptr && a->kind == AxisKind::kPerTx)
        return std::string(a->key);
      break;
  }
  return "auto";
}

std::map<std::string, double> axis_counters(const std::map<std::string, double>& evidence,
                                            double transactions) {
  std::map<std::string, double> out;
  if (!(transactions > 0)) return out;
  for (const Axis& a : kAxes) {
    if (a.kind != AxisKind::kPerTx) continue;
    const auto it = evidence.find(std::string(a.evidence));
    if (it != evidence.end() && std::isfinite(it->second))
      out[std::string(a.evidence)] = it->second / transactions;
  }
  return out;
}

std::optional<double> axis_value(const Axis& axis, const Measurement& run) {
  const auto tx = static_cast<double>(run.committed + run.rolled_back);
  if (tx <= 0) return std::nullopt;
  switch (axis.kind) {
    case AxisKind::kThroughput:
      return run.tps > 0 ? std::optional<double>(run.tps) : std::nullopt;
    case AxisKind::kServerCpu:
      return cpu_per_tx(run.server_cpu_s, tx);
    case AxisKind::kPerTx:
      return per_tx(axis, run.per_tx);
    case AxisKind::kLatency:
      return latency(axis, run.latency);
  }
  return std::nullopt;
}

std::optional<double> axis_value(const Axis& axis, const ReferenceRun& run) {
  if (!run.error.empty() || run.transactions == 0) return std::nullopt;
  switch (axis.kind) {
    case AxisKind::kThroughput:
      return run.tps > 0 ? std::optional<double>(run.tps) : std::nullopt;
    case AxisKind::kServerCpu:
      return cpu_per_tx(run.server_cpu_s, static_cast<double>(run.transactions));
    case AxisKind::kPerTx:
      return per_tx(axis, run.per_tx);
    case AxisKind::kLatency:
      return latency(axis, run.latency);
  }
  return std::nullopt;
}

std::optional<double> axis_value(const Axis& axis, const SwitchbackBlock& block) {
  if (block.seconds <= 0 || block.transactions == 0) return std::nullopt;
  const auto tx = static_cast<double>(block.transactions);
  switch (axis.kind) {
    case AxisKind::kThroughput:
      return tx / block.seconds;
    case AxisKind::kServerCpu:
      return cpu_per_tx(block.server_cpu_s, tx);
    case AxisKind::kPerTx:
      return per_tx(axis, block.per_tx);
    case AxisKind::kLatency: {
      const double v = axis.percentile == 95 ? block.p95_us : block.p99_us;
      return v > 0 ? std::optional<double>(v) : std::nullopt;
    }
  }
  return std::nullopt;
}

std::string format_axis_value(const Axis& axis, double value) {
  switch (axis.kind) {
    case AxisKind::kThroughput:
      return format_number(value) + " TPS";
    case AxisKind::kServerCpu:
      return format_latency_us(value * 1e6);
    case AxisKind::kPerTx:
      // None, read as the floor (axis_value).
      if (reads_as_none(value)) return axis.bytes ? format_size(0) : "0";
      return axis.bytes ? format_size(value) : format_quantity(value);
    case AxisKind::kLatency:
      return format_latency_us(value);
  }
  return format_number(value);
}

}  // namespace pgslow::results
