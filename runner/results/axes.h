#pragma once
// The axes a stage's effect is measured on (docs/reading-the-report.md "The axes"): throughput,
// the server's CPU per transaction, the work a transaction leaves behind (WAL, full-page
// images, shared-buffer misses, read syscalls, temp files) and the latency's tail. One table:
// a new axis is one row here, and every comparison, verdict and format reads it from here.
//
// Each axis of a stage gets its interval from the stage's own design (switchback blocks, or
// separate runs compared with the baseline runs around them), and the verdicts over a stage's
// axes keep a family-wise error of 5% (Holm's step-down, results/stats.h holm).

#include <array>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "knobs/evidence_keys.h"
#include "results/model.h"
#include "results/stats.h"

namespace pgslow::results {

enum class AxisKind {
  kThroughput,  // transactions per second: higher is better
  kServerCpu,   // the server's CPU seconds per transaction (a local server)
  kPerTx,       // an evidence counter per transaction (Measurement::per_tx)
  kLatency,     // a percentile of the latency, µs
};

struct Axis {
  std::string_view key;    // the name in report.json, the CSV and --metric: "tps", "wal_bytes"
  std::string_view label;  // "TPS", "CPU/tx", "WAL/tx"
  AxisKind kind;
  std::string_view evidence;  // kPerTx: the evidence key (knobs/evidence_keys.h)
  bool bytes = false;         // its values are sizes
  double percentile = 0;      // kLatency: 95 or 99
  // A run that did not measure it had none (the pooler's wait of clients that connect
  // directly): compared as the floor (kCounterFloor) against a stage that measured it.
  bool absent_is_none = false;
};

// In the order every format lists them. PostgreSQL counts full-page images, not their bytes
// (pg_stat_wal.wal_fpi), so that axis is a count. The rows read, the server log and the
// pooler's wait are there because a knob is known to move them (a planner cost, logging,
// a pool too small): its own axis is tested first (results/summary.h).
inline constexpr std::array<Axis, knobs::kAxisKeys.size()> kAxes = {{
    {"tps", "TPS", AxisKind::kThroughput, {}, false, 0},
    {"cpu_per_tx", "CPU/tx", AxisKind::kServerCpu, {}, false, 0},
    {"wal_bytes", "WAL/tx", AxisKind::kPerTx, "wal_bytes", true, 0},
    {"wal_fpi", "full-page images/tx", AxisKind::kPerTx, "wal_fpi", false, 0},
    {"blocks_read", "buffer misses/tx", AxisKind::kPerTx, "blocks_read", false, 0},
    {"read_syscalls", "read syscalls/tx", AxisKind::kPerTx, "read_syscalls", false, 0},
    {"temp_bytes", "temp/tx", AxisKind::kPerTx, "temp_bytes", true, 0},
    {"seq_tup_read", "rows seq-read/tx", AxisKind::kPerTx, "seq_tup_read", false, 0},
    {"log_bytes", "server log/tx", AxisKind::kPerTx, "log_bytes", true, 0},
    {"pooler_wait_ms", "pooler wait ms/tx", AxisKind::kPerTx, "pooler_wait_ms", false, 0, true},
    {"p95", "p95", AxisKind::kLatency, {}, false, 95},
    {"p99", "p99", AxisKind::kLatency, {}, false, 99},
}};

constexpr bool axes_match_their_keys() {
  for (std::size_t i = 0; i < kAxes.size(); ++i)
    if (kAxes[i].key != knobs::kAxisKeys[i]) return false;
  return true;
}
static_assert(axes_match_their_keys(), "kAxes and knobs::kAxisKeys list the same keys in order");

inline constexpr const Axis& kTpsAxis = kAxes[0];
inline constexpr const Axis& kCpuAxis = kAxes[1];

const Axis* find_axis(std::string_view key);
// "tps, cpu_per_tx, wal_bytes, ...": every key, for errors.
std::string axis_names();
// Only throughput is better higher; every other axis is a cost (latency included).
inline bool higher_is_better(const Axis& axis) {
  return axis.kind == AxisKind::kThroughput;
}
// A cost of the work itself (CPU, WAL, reads, temp), not of time: what "costs more" names.
inline bool is_cost(const Axis& axis) {
  return axis.kind == AxisKind::kServerCpu || axis.kind == AxisKind::kPerTx;
}

// The evidence counters a run records per transaction for the axes, from its window's evidence
// (raw counts) and the transactions in that window. Keys the window lacks are left out.
std::map<std::string, double> axis_counters(const std::map<std::string, double>& evidence,
                                            double transactions);

// A counter below this per transaction counts as this (axis_value): intervals work on logs.
inline constexpr double kCounterFloor = 1e-3;
// Whether a per-transaction value reads as none: at the floor (a run that had none is read as
// the floor, axis_value), with room for the rounding of a mean of logs.
inline bool reads_as_none(double value) {
  return value <= kCounterFloor * (1 + 1e-9);
}

// One run's value on an axis, in its own unit (TPS; CPU seconds, a count or bytes per
// transaction; µs); nullopt when the run did not measure it. A counter below a thousandth per
// transaction reads as a thousandth: intervals work on logs, and none is not zero cost.
std::optional<double> axis_value(const Axis& axis, const Measurement& run);
std::optional<double> axis_value(const Axis& axis, const ReferenceRun& run);
std::optional<double> axis_value(const Axis& axis, const SwitchbackBlock& block);

// One axis's comparison of a stage with its reference: ratio stage / reference of the axis's
// own value (above 1: more of it).
struct AxisInterval {
  const Axis* axis = nullptr;
  Interval interval;
};
// Holm's step-down over a stage's axes (stats.h holm), at `confidence` for the family.
void holm_over_axes(std::vector<AxisInterval>& axes, double confidence);

std::vector<AxisEffect> axis_effects(const std::vector<AxisInterval>& axes);
// What --precision watches (`choice`: an axis key, or "auto": TPS or CPU/tx, whichever gets
// there first): the axis whose interval's half-width is at most `precision`; nullptr: none.
const Axis* precision_reached(const std::vector<AxisInterval>& axes, double precision,
                              std::string_view choice);

// The axis --precision watches when the user names a metric (--metric): its own axis (tps,
// cpu_per_tx, p99, wal_bytes_per_tx, an evidence key that is an axis), else "auto".
std::string precision_axis_of(const Metric& metric);

// A value for a reader: "1,234 TPS", "0.41 ms", "2.1 kB", "3.2", "12.3 ms".
std::string format_axis_value(const Axis& axis, double value);

}  // namespace pgslow::results
