#pragma once
// The curve of a sweep (Run::sweep): one point per swept value with TPS, mean and p99
// latency, and pool wait or schedule lag when they apply; with two swept dimensions, one
// curve per value of the second. The values are the points' own (StageResult::sweep_values),
// so a load dimension and a knob ("shared_buffers" at 128MB, 32MB, ...) draw alike, the points
// equally spaced in the order written. Every format tabulates it; HTML also draws it.
//
// The knee is named: the peak TPS and the first value where latency starts to grow faster
// than throughput (mean latency ratio to the previous point above its TPS ratio), which in a
// closed loop is where added clients only queue (Little's law).

#include <optional>
#include <string>
#include <vector>

#include "report/views.h"

namespace pgslow::report {

struct CurvePoint {
  std::size_t stage = 0;  // into Run::stages
  std::string value;      // the swept value as written ("10", "75%", "32MB")
  bool ran = false;
  double tps = 0;  // median over repeats
  double mean_us = 0;
  double p99_us = 0;
  std::optional<double> pool_wait_p99_us;  // pool stages
  std::optional<double> lag_p99_us;        // fixed-rate stages
  // What pgslow's PgBouncer did (docs/pooler.md), points through it: the clients' wait for a
  // server connection per transaction, and the server connections it held.
  std::optional<double> pooler_wait_us_per_tx;
  std::optional<double> pooler_servers;
};

struct Curve {
  std::string dimension;  // "clients", "shared_buffers"
  std::string series;     // "clients 200" for a family of curves, else empty
  std::vector<CurvePoint> points;
  std::optional<std::size_t> peak;  // index into points: the highest TPS
  std::optional<std::size_t> knee;  // where latency starts to grow faster than throughput
};

std::vector<Curve> sweep_curves(const Run& run);

// "peak 3,943 TPS at clients 100; from clients 25 latency grows faster than throughput".
std::string describe_knee(const Curve& curve);
// "connect_per_transaction" -> "connect per transaction".
std::string dimension_label(const std::string& dimension);
// The curve as a table: header and rows of cells, for the text formats.
struct CurveTable {
  std::vector<std::string> header;
  std::vector<std::vector<std::string>> rows;
};
CurveTable curve_table(const Curve& curve);
// The curve drawn as inline SVG: TPS (left) and latency on a log scale (right: mean, p99,
// and pool wait p99 or schedule lag p99 when they apply) against the swept value.
std::string curve_svg(const Curve& curve);

}  // namespace pgslow::report
