#include "report/curve.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>

#include "report/load_columns.h"
#include "report/text.h"
#include "results/load_fields.h"
#include "results/stats.h"
#include "results/summary.h"

namespace pgslow::report {

namespace {

// A point's value of `dimension` as written ("10", "75%", "32MB").
std::string value_of(const StageResult& s, const std::string& dimension) {
  auto it = s.sweep_values.find(dimension);
  return it == s.sweep_values.end() ? "?" : it->second;
}

void find_knee(Curve& c) {
  for (std::size_t i = 0; i < c.points.size(); ++i) {
    const CurvePoint& p = c.points[i];
    if (!p.ran) continue;
    if (!c.peak || p.tps > c.points[*c.peak].tps) c.peak = i;
  }
  const CurvePoint* prev = nullptr;
  for (std::size_t i = 0; i < c.points.size(); ++i) {
    const CurvePoint& p = c.points[i];
    if (!p.ran) continue;
    if (prev != nullptr && prev->tps > 0 && prev->mean_us > 0 && p.tps > 0) {
      const double latency_growth = p.mean_us / prev->mean_us;
      const double tps_growth = p.tps / prev->tps;
      if (latency_growth > tps_growth) {
        c.knee = i;
        return;
      }
    }
    prev = &p;
  }
}

}  // namespace

std::string dimension_label(const std::string& dimension) {
  std::string out = dimension;
  for (char& ch : out)
    if (ch == '_') ch = ' ';
  return out;
}

std::vector<Curve> sweep_curves(const Run& run) {
  std::vector<Curve> curves;
  if (run.sweep.empty()) return curves;
  const std::string& dim = run.sweep.front();
  std::map<std::string, std::size_t> by_series;
  for (std::size_t i = 0; i < run.stages.size(); ++i) {
    const StageResult& s = run.stages[i];
    if (!s.sweep_point) continue;
    std::string series;
    if (run.sweep.size() > 1)
      series = dimension_label(run.sweep[1]) + " " + value_of(s, run.sweep[1]);
    auto [it, added] = by_series.try_emplace(series, curves.size());
    if (added) curves.push_back(Curve{dim, series, {}, {}, {}});
    CurvePoint p;
    p.stage = i;
    p.value = value_of(s, dim);
    const Measurement* m = median_repeat(s);
    p.ran = m != nullptr && s.error.empty();
    if (p.ran) {
      std::vector<double> tps;
      for (const auto& r : s.repeats) tps.push_back(r.tps);
      p.tps = median(tps);
      p.mean_us = m->latency.mean_us;
      p.p99_us = m->latency.p99_us;
      if (results::driver_pooled(s.load)) p.pool_wait_p99_us = m->pool_wait.p99_us;
      if (s.load.rate > 0) p.lag_p99_us = m->schedule_lag.p99_us;
      const auto wait = s.evidence.find("pooler_wait_ms");
      const auto servers = s.evidence.find("pooler_servers");
      const double window = s.evidence_seconds > 0 ? s.evidence_seconds : m->duration_s;
      if (wait != s.evidence.end() && p.tps * window > 0)
        p.pooler_wait_us_per_tx = wait->second * 1000 / (p.tps * window);
      if (servers != s.evidence.end()) p.pooler_servers = servers->second;
    }
    curves[it->second].points.push_back(p);
  }
  for (auto& c : curves) find_knee(c);
  return curves;
}

std::string describe_knee(const Curve& c) {
  if (!c.peak) return "no point of the sweep ran";
  const std::string dim = dimension_label(c.dimension);
  const CurvePoint& peak = c.points[*c.peak];
  std::string text = fmt::format("peak {} TPS at {} {}", format_number(peak.tps), dim, peak.value);
  if (c.knee) {
    text += fmt::format("; from {} {} latency grows faster than throughput", dim,
                        c.points[*c.knee].value);
  } else {
    text += "; latency never grows faster than throughput in this range";
  }
  return text;
}

CurveTable curve_table(const Curve& c) {
  CurveTable t;
  bool pool = false, lag = false, pooler = false;
  for (const auto& p : c.points) {
    pool = pool || p.pool_wait_p99_us.has_value();
    lag = lag || p.lag_p99_us.has_value();
    pooler = pooler || p.pooler_wait_us_per_tx.has_value();
  }
  t.header = {dimension_label(c.dimension), "TPS", "mean", "p99"};
  if (pool) t.header.push_back("pool wait p99");
  if (lag) t.header.push_back("lag p99");
  if (pooler) {
    t.header.push_back("PgBouncer wait/tx");
    t.header.push_back("server conns");
  }
  t.header.push_back("");
  for (std::size_t i = 0; i < c.points.size(); ++i) {
    const CurvePoint& p = c.points[i];
    std::vector<std::string> row = {p.value};
    if (!p.ran) {
      row.insert(row.end(), {"failed", "—", "—"});
      if (pool) row.push_back("—");
      if (lag) row.push_back("—");
      if (pooler) row.insert(row.end(), {"—", "—"});
    } else {
      row.insert(row.end(),
                 {format_number(p.tps), format_latency_us(p.mean_us), format_latency_us(p.p99_us)});
      if (pool) row.push_back(p.pool_wait_p99_us ? format_latency_us(*p.pool_wait_p99_us) : "—");
      if (lag) row.push_back(p.lag_p99_us ? format_latency_us(*p.lag_p99_us) : "—");
      if (pooler) {
        row.push_back(p.pooler_wait_us_per_tx ? format_latency_us(*p.pooler_wait_us_per_tx) : "—");
        row.push_back(p.pooler_servers ? fmt::format("{:.0f}", *p.pooler_servers) : "—");
      }
    }
    std::string mark;
    if (c.peak && *c.peak == i) mark = "peak";
    if (c.knee && *c.knee == i) mark += std::string(mark.empty() ? "" : ", ") + "knee";
    row.push_back(mark);
    t.rows.push_back(std::move(row));
  }
  return t;
}

namespace {

struct Series {
  std::string label;
  std::string color;
  std::vector<std::optional<double>> y;
};

// One panel: the points at equal spacing (the swept values are rarely evenly spaced), a
// polyline per series, y linear from 0 or logarithmic.
std::string panel(const Curve& c, const std::string& title, const std::vector<Series>& series,
                  bool log_scale, std::string (*label)(double)) {
  constexpr double kW = 420, kH = 220, kLeft = 64, kRight = 12, kTop = 24, kBottom = 36;
  double lo = INFINITY, hi = 0;
  for (const auto& s : series) {
    for (const auto& v : s.y) {
      if (!v || (log_scale && *v <= 0)) continue;
      lo = std::min(lo, *v);
      hi = std::max(hi, *v);
    }
  }
  if (!(hi > 0)) return {};
  if (log_scale) {
    lo = std::pow(10, std::floor(std::log10(lo)));
    hi = std::pow(10, std::ceil(std::log10(hi)));
    if (hi <= lo) hi = lo * 10;
  } else {
    lo = 0;
    hi *= 1.1;
  }
  const std::size_t n = c.points.size();
  auto xpos = [&](std::size_t i) {
    return n <= 1 ? kLeft + (kW - kLeft - kRight) / 2
                  : kLeft +
                        (kW - kLeft - kRight) * static_cast<double>(i) / static_cast<double>(n - 1);
  };
  auto ypos = [&](double v) {
    const double f = log_scale
                         ? (std::log10(v) - std::log10(lo)) / (std::log10(hi) - std::log10(lo))
                         : (v - lo) / (hi - lo);
    return kTop + (kH - kTop - kBottom) * (1 - f);
  };
  std::string out = fmt::format(
      "<svg class=\"curve\" viewBox=\"0 0 {} {}\" width=\"{}\" height=\"{}\" role=\"img\" "
      "aria-label=\"{}\"><text x=\"{}\" y=\"14\" font-size=\"12\">{}</text>",
      kW, kH, kW, kH, html_escape(title), kLeft, html_escape(title));
  // Axes and y ticks.
  out += fmt::format("<line x1=\"{0}\" y1=\"{1}\" x2=\"{0}\" y2=\"{2}\" stroke=\"#888\"/>", kLeft,
                     kTop, kH - kBottom);
  out += fmt::format("<line x1=\"{0}\" y1=\"{1}\" x2=\"{2}\" y2=\"{1}\" stroke=\"#888\"/>", kLeft,
                     kH - kBottom, kW - kRight);
  std::vector<double> ticks;
  if (log_scale) {
    for (double t = lo; t <= hi * 1.0001; t *= 10) ticks.push_back(t);
  } else {
    for (int i = 0; i <= 4; ++i) ticks.push_back(lo + (hi - lo) * i / 4);
  }
  for (double t : ticks) {
    out += fmt::format(
        "<text x=\"{:.1f}\" y=\"{:.1f}\" font-size=\"10\" text-anchor=\"end\">{}</text>", kLeft - 4,
        ypos(t) + 3, html_escape(label(t)));
  }
  for (std::size_t i = 0; i < n; ++i) {
    out += fmt::format(
        "<text x=\"{:.1f}\" y=\"{:.1f}\" font-size=\"10\" text-anchor=\"middle\">{}</text>",
        xpos(i), kH - kBottom + 14, html_escape(c.points[i].value));
  }
  out += fmt::format(
      "<text x=\"{:.1f}\" y=\"{:.1f}\" font-size=\"11\" text-anchor=\"middle\">{}</text>",
      (kLeft + kW - kRight) / 2, kH - 6, html_escape(dimension_label(c.dimension)));
  double legend_x = kLeft + 8;
  for (const auto& s : series) {
    std::string pts;
    for (std::size_t i = 0; i < n && i < s.y.size(); ++i) {
      if (!s.y[i] || (log_scale && *s.y[i] <= 0)) continue;
      pts += fmt::format("{:.1f},{:.1f} ", xpos(i), ypos(*s.y[i]));
      out += fmt::format("<circle cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"2.5\" fill=\"{}\"/>", xpos(i),
                         ypos(*s.y[i]), s.color);
    }
    out += fmt::format(
        "<polyline class=\"series\" fill=\"none\" stroke=\"{}\" stroke-width=\"2\" "
        "points=\"{}\"/>",
        s.color, pts);
    out += fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\" font-size=\"10\" fill=\"{}\">{}</text>",
                       legend_x, kTop + 10, s.color, html_escape(s.label));
    legend_x += 8 + 6.0 * static_cast<double>(s.label.size());
  }
  return out + "</svg>";
}

}  // namespace

std::string curve_svg(const Curve& c) {
  Series tps{"TPS", "#1f77b4", {}};
  Series mean_s{"mean", "#2ca02c", {}};
  Series p99{"p99", "#d62728", {}};
  Series pool{"pool wait p99", "#9467bd", {}};
  Series lag{"lag p99", "#ff7f0e", {}};
  for (const auto& p : c.points) {
    auto v = [&](double x) { return p.ran ? std::optional<double>(x) : std::nullopt; };
    tps.y.push_back(v(p.tps));
    mean_s.y.push_back(v(p.mean_us));
    p99.y.push_back(v(p.p99_us));
    pool.y.push_back(p.ran ? p.pool_wait_p99_us : std::nullopt);
    lag.y.push_back(p.ran ? p.lag_p99_us : std::nullopt);
  }
  std::vector<Series> latency = {mean_s, p99};
  auto any = [](const Series& s) {
    return std::any_of(s.y.begin(), s.y.end(), [](const auto& v) { return v.has_value(); });
  };
  if (any(pool)) latency.push_back(pool);
  if (any(lag)) latency.push_back(lag);
  return panel(c, "TPS", {tps}, false, [](double v) { return format_number(v, 2); }) +
         panel(c, "latency (log scale)", latency, true,
               [](double v) { return format_latency_us(v); });
}

}  // namespace pgslow::report
