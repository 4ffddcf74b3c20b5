#include "results/metric.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <utility>
#include <vector>

#include "results/evidence_info.h"
#include "results/stats.h"

namespace pgslow::results {
namespace {

using Kind = Metric::Kind;

constexpr std::array<std::pair<Kind, std::string_view>, 3> kNames{{
    {Kind::kTps, "tps"},
    {Kind::kCpuPerTx, "cpu_per_tx"},
    {Kind::kP99, "p99"},
}};

// The one evidence key with a metric name of its own.
constexpr std::string_view kWalPerTx = "wal_bytes_per_tx";

// Evidence keys the report compares per transaction (evidence_info.h): work a transaction does.
bool per_transaction_key(std::string_view key) {
  for (const auto& e : evidence_catalog())
    if (e.key == key) return e.scale == EvidenceScale::kPerTransaction;
  return false;
}

// A value smaller than this per transaction counts as this (metric_value).
constexpr double kEvidenceFloor = 1e-3;

}  // namespace

std::optional<Metric> parse_metric(std::string_view name) {
  for (const auto& [k, n] : kNames)
    if (n == name) return Metric{k, {}, false};
  if (name == kWalPerTx) return Metric{Kind::kEvidencePerTx, "wal_bytes", false};
  if (per_transaction_key(name)) return Metric{Kind::kEvidencePerTx, std::string(name), false};
  return std::nullopt;
}

std::string metric_name(const Metric& m) {
  if (m.kind == Kind::kEvidencePerTx)
    return m.evidence == "wal_bytes" ? std::string(kWalPerTx) : m.evidence;
  for (const auto& [k, n] : kNames)
    if (k == m.kind) return std::string(n);
  return "?";
}

std::vector<std::string> metric_name_list() {
  std::vector<std::string> out;
  for (const auto& [k, n] : kNames) out.emplace_back(n);
  out.emplace_back(kWalPerTx);
  for (const auto& e : evidence_catalog())
    if (e.scale == EvidenceScale::kPerTransaction) out.emplace_back(e.key);
  return out;
}

std::string metric_names() {
  return "tps, p99, cpu_per_tx, wal_bytes_per_tx or an evidence key counted per transaction "
         "(blocks_read, temp_bytes, wal_fpi, seq_tup_read, ...: docs/bisect.md)";
}

bool higher_is_better(const Metric& m) {
  return m.kind == Kind::kTps;
}

std::string direction_name(const Metric& m) {
  return m.better ? "faster" : "slower";
}

std::string metric_label(const Metric& m) {
  switch (m.kind) {
    case Kind::kTps:
      return "TPS";
    case Kind::kCpuPerTx:
      return "CPU/tx";
    case Kind::kP99:
      return "p99";
    case Kind::kEvidencePerTx:
      return m.evidence == "wal_bytes" ? "WAL/tx" : m.evidence + "/tx";
  }
  return "?";
}

bool needs_evidence(const Metric& m) {
  return m.kind == Kind::kEvidencePerTx;
}

std::optional<double> metric_value(const Metric& m, const Measurement& run,
                                   const std::map<std::string, double>& evidence) {
  const auto transactions = static_cast<double>(run.committed + run.rolled_back);
  switch (m.kind) {
    case Kind::kTps:
      return run.tps;
    case Kind::kCpuPerTx:
      if (!(run.server_cpu_s > 0) || transactions <= 0) return std::nullopt;
      return run.server_cpu_s / transactions;
    case Kind::kP99:
      if (!(run.latency.p99_us > 0) || transactions <= 0) return std::nullopt;
      return run.latency.p99_us;
    case Kind::kEvidencePerTx: {
      auto it = evidence.find(m.evidence);
      if (it == evidence.end() || run.committed == 0 || !std::isfinite(it->second))
        return std::nullopt;
      return std::max(it->second / static_cast<double>(run.committed), kEvidenceFloor);
    }
  }
  return std::nullopt;
}

std::string metric_missing(const Metric& m) {
  switch (m.kind) {
    case Kind::kTps:
      return "the run has no throughput: no transaction finished in the measured window";
    case Kind::kCpuPerTx:
      return "cpu_per_tx needs the CPU time of the server's processes, which pgslow reads from "
             "/proc on the machine that runs them: a server reached by connection only (or one "
             "that restarted during the run, or a run where no transaction finished) has none; "
             "use --metric tps or --metric p99";
    case Kind::kP99:
      return "the run has no latency: no transaction finished in the measured window";
    case Kind::kEvidencePerTx:
      return fmt::format(
          "{} needs the evidence '{}' of each run (read from the server's statistics views) and "
          "a committed transaction: this server version or this run has none; use --metric tps",
          metric_name(m), m.evidence);
  }
  return "";
}

double search_sample(const Metric& m, double value) {
  // Identity when higher values are what the search calls good; else the reciprocal.
  if (higher_is_better(m) != m.better) return value;
  return value > 0 ? 1 / value : 0;
}

double rejected_sample(const Metric& m) {
  // Far outside any real sample, still positive and finite (the search works on logs).
  return m.better ? 1e12 : 1e-12;
}

double metric_ratio(const Metric& m, double search_ratio) {
  return search_sample(m, search_ratio);
}

EffectInterval in_metric_terms(const Metric& m, const EffectInterval& e) {
  if (higher_is_better(m) != m.better) return e;
  EffectInterval out = e;
  out.ratio = metric_ratio(m, e.ratio);
  out.low = metric_ratio(m, e.high);
  out.high = metric_ratio(m, e.low);
  return out;
}

double metric_in_unit(const Metric& m, double sample) {
  const double value = search_sample(m, sample);
  switch (m.kind) {
    case Kind::kTps:
    case Kind::kEvidencePerTx:
      return value;
    case Kind::kCpuPerTx:
      return value * 1e3;
    case Kind::kP99:
      return value / 1e3;
  }
  return value;
}

std::string metric_unit(const Metric& m) {
  // The label, after the unit metric_in_unit scales to where it is not the metric's own.
  switch (m.kind) {
    case Kind::kTps:
      return metric_label(m);
    case Kind::kCpuPerTx:
    case Kind::kP99:
      return "ms " + metric_label(m);
    case Kind::kEvidencePerTx:
      return evidence_info(m.evidence).bytes ? "B " + metric_label(m) : metric_label(m);
  }
  return "?";
}

std::string format_metric_value(const Metric& m, double sample) {
  return format_number(metric_in_unit(m, sample)) + " " + metric_unit(m);
}

std::string format_metric_change(const Metric& m, double search_ratio) {
  const double r = metric_ratio(m, search_ratio);
  if (m.kind == Kind::kTps) return format_change(r);
  if (!std::isfinite(r) || r <= 0) return metric_label(m) + " n/a";
  // As format_change: percentages near no change, factors from 2x either way.
  if (r >= 2) return fmt::format("{} {}x higher", metric_label(m), format_number(r, 2));
  if (r <= 0.5) return fmt::format("{} {}x lower", metric_label(m), format_number(1 / r, 2));
  return metric_label(m) + " " + format_signed_percent(r);
}

std::string worse_word(const Metric& m) {
  const bool cost = m.kind == Kind::kCpuPerTx || m.kind == Kind::kEvidencePerTx;
  if (m.better) return cost ? "cheaper" : "faster";
  return cost ? "costlier" : "slower";
}

std::string better_word(const Metric& m) {
  Metric other = m;
  other.better = !m.better;
  return worse_word(other);
}

}  // namespace pgslow::results
