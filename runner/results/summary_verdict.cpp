// The words of a stage's verdict (results/summary.h): a change with its interval, what a
// comparison could have seen and what more runs would see, and the verdict over a stage's
// axes, which headlines TPS or the knobs' own axes and never an axis nobody expected alone.

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "results/summary.h"

namespace pgslow::results {

namespace {

// A ratio this far from 1 on a counter is read as its two values ("pooler wait ms/tx 0 →
// 9.33"): from none, the ratio is the floor's, not the stage's.
constexpr double kShownAsValues = 20;

// "fewer" for what is counted, "less" for amounts (bytes, time).
bool counted(const Axis& axis) {
  return axis.kind == AxisKind::kPerTx && !axis.bytes && axis.key != "pooler_wait_ms";
}

std::string percent_text(double ratio) {
  return format_number(std::fabs(ratio - 1) * 100, 2) + "%";
}

// One axis's change, worded: "+10.6% CPU/tx", "8.5x the buffer misses/tx", "95% fewer
// buffer misses/tx", "pooler wait ms/tx 0 → 9.33"; with its interval when asked.
std::string named_change(const AxisChange& a, bool with_interval) {
  const Change& c = a.change;
  const std::string label(a.axis->label);
  if (const std::string values = axis_values_text(a, with_interval); !values.empty())
    return label + " " + values;
  std::string text;
  if (c.ratio >= 2)
    text = format_number(c.ratio) + "x the " + label;
  else if (c.ratio >= 1 || a.axis->kind == AxisKind::kLatency)
    text = format_signed_percent(c.ratio) + " " + label;
  else
    text = percent_text(c.ratio) + (counted(*a.axis) ? " fewer " : " less ") + label;
  if (!with_interval) return text;
  if (c.ratio >= 2 || c.ratio <= 0.5)
    return text +
           fmt::format(" ({}–{}x)", format_number(c.interval.low), format_number(c.interval.high));
  return text + " " + format_interval(c.interval);
}

// The verb before a change: a cost that rose, one that fell, or the latency's tail.
std::string verb_of(const AxisChange& a) {
  if (a.axis->kind == AxisKind::kLatency) return "tail ";
  return a.change.ratio > 1 ? "costs " : "uses ";
}

const AxisChange* largest(const std::vector<const AxisChange*>& list) {
  const AxisChange* best = nullptr;
  for (const AxisChange* a : list)
    if (best == nullptr ||
        std::fabs(std::log(a->change.ratio)) > std::fabs(std::log(best->change.ratio)))
      best = a;
  return best;
}

// "could see TPS ±19%, CPU/tx ±4.0%": what each axis of `list` could see. Past ±100% the figure is
// the run count's, not the machine's: such axes are named together as too few runs to tell
// (could_see_text says what more pairs would give, where the design has pairs).
std::string could_see_list(const std::vector<const AxisChange*>& list) {
  std::string out, wide;
  for (const AxisChange* a : list) {
    const double detectable = a->change.interval.detectable();
    if (detectable > 1)
      wide += (wide.empty() ? "" : ", ") + std::string(a->axis->label);
    else
      out += fmt::format("{}{} ±{}", out.empty() ? "could see " : ", ", a->axis->label,
                         percent_text(1 + detectable));
  }
  if (!wide.empty())
    out += (out.empty() ? "" : "; ") + std::string("too few runs to tell on ") + wide +
           " (past ±100%)";
  return out;
}

}  // namespace

std::string axis_values_text(const AxisChange& a, bool with_interval) {
  const Change& c = a.change;
  const bool far = c.ratio >= kShownAsValues || c.ratio <= 1 / kShownAsValues;
  if (!far || !c.measurable || !(c.reference_value > 0) || !(c.stage_value > 0) ||
      a.axis->kind != AxisKind::kPerTx)
    return "";
  const std::string from = format_axis_value(*a.axis, c.reference_value);
  const std::string to = format_axis_value(*a.axis, c.stage_value);
  // Both below what the unit shows ("0 B → 0 B"): the ratio says more.
  if (from == to) return "";
  std::string text = from + " → " + to;
  // The stage's value as the ratio's interval puts it, the reference's value held.
  if (with_interval && c.interval.known)
    text += " [" + format_axis_value(*a.axis, c.reference_value * c.interval.low) + "–" +
            format_axis_value(*a.axis, c.reference_value * c.interval.high) + "]";
  return text;
}

std::string more_pairs_text(const Change& change) {
  const Interval& i = change.interval;
  if (!(i.detectable() > 1)) return "";
  const Narrowing n = narrowing(i, change.stage_samples, change.reference_samples);
  if (n.more_pairs <= 0) return "";
  return fmt::format("{} more pair{} would narrow it to ±{}", n.more_pairs,
                     n.more_pairs == 1 ? "" : "s", percent_text(1 + n.detectable));
}

std::string could_see_text(const Change& change) {
  const Interval& i = change.interval;
  if (!(i.detectable() > 1)) return format_could_see(i.detectable());
  // Past ±100% the run count, not the machine, limits what it could see: no figure ("could see
  // ±20761%" tells a reader nothing), but what more measuring would give.
  const std::string more = more_pairs_text(change);
  return "too few runs to tell, past ±100%" + (more.empty() ? "" : "; " + more);
}

Change change_of(const Interval& interval, const Change& counts) {
  Change c = counts;
  c.ratio = interval.ratio;
  c.interval = interval;
  const Verdict v = verdict_of(c.interval);
  c.measurable = v == Verdict::kSlower || v == Verdict::kFaster;
  c.text = v == Verdict::kWithinNoise ? "within noise (" + could_see_text(c) + ")"
                                      : format_verdict(c.interval);
  if (c.measurable) {
    c.text = format_change(c.ratio);
    if (c.text.find("slower") == std::string::npos && c.text.find("faster") == std::string::npos)
      c.text += v == Verdict::kSlower ? " slower" : " faster";
  }
  return c;
}

std::string axis_change_text(const AxisChange& a) {
  const Change& c = a.change;
  // A counter at none in both (a few bytes of server log in a thousand transactions): its
  // ratio is noise around the floor, not a cost.
  if (a.axis->kind == AxisKind::kPerTx && !c.measurable && c.interval.known &&
      reads_as_none(c.reference_value) && reads_as_none(c.stage_value))
    return "none in either";
  if (a.axis->kind == AxisKind::kThroughput)
    return a.change.measurable ? a.change.text + " " + format_interval(a.change.interval)
                               : a.change.text;
  if (const std::string values = axis_values_text(a, true); !values.empty()) return values;
  return cost_change_text(a.change);
}

AxesVerdict axes_verdict(const std::vector<AxisChange>& axes) {
  AxesVerdict v;
  const AxisChange* tps = nullptr;
  std::vector<const AxisChange*> own_moved, others_moved, own_known;
  for (const auto& a : axes) {
    const bool is_tps = a.axis->kind == AxisKind::kThroughput;
    if (is_tps) tps = &a;
    if (!a.change.interval.known) continue;
    if (a.own || is_tps) own_known.push_back(&a);
    if (is_tps || !a.change.measurable) continue;
    (a.own ? own_moved : others_moved).push_back(&a);
  }
  // Nothing to weigh: the TPS text as it is ("no interval", "n/a").
  if (own_known.empty() && others_moved.empty()) {
    if (tps != nullptr) v.cell = v.sentence = tps->change.text;
    return v;
  }
  std::stable_sort(own_moved.begin(), own_moved.end(), [](const auto* x, const auto* y) {
    return std::fabs(std::log(x->change.ratio)) > std::fabs(std::log(y->change.ratio));
  });
  // The stage's own axes that moved beside the headline, then "also" what nobody expected.
  const auto beside = [&](std::size_t from) {
    std::string out;
    for (std::size_t k = from; k < own_moved.size(); ++k)
      out += "; " + named_change(*own_moved[k], true);
    if (const AxisChange* other = largest(others_moved))
      out += "; also " + named_change(*other, true);
    return out;
  };
  const bool tps_known = tps != nullptr && tps->change.interval.known;
  if (tps_known && tps->change.measurable) {
    // Throughput, the figure the user asked about, whenever it is resolved.
    v.axis = tps->axis;
    v.cell = tps->change.text;
    v.sentence = axis_change_text(*tps) + beside(0);
  } else if (!own_moved.empty()) {
    // Else the knob's own axis: "costs +14% CPU/tx", "uses 95% fewer buffer misses/tx".
    v.axis = own_moved.front()->axis;
    v.cell = verb_of(*own_moved.front()) + named_change(*own_moved.front(), false);
    v.sentence = verb_of(*own_moved.front()) + named_change(*own_moved.front(), true);
    if (tps_known) v.sentence += "; TPS " + tps->change.text;
    v.sentence += beside(1);
  } else {
    v.cell = "no measurable effect";
    v.sentence =
        own_known.empty() ? v.cell : "no measurable effect (" + could_see_list(own_known) + ")";
    // Past ±100% on TPS: what more pairs would give.
    if (tps_known)
      if (const std::string more = more_pairs_text(tps->change); !more.empty())
        v.sentence += "; TPS: " + more;
    // An axis nobody expected never headlines alone.
    if (const AxisChange* other = largest(others_moved)) {
      v.cell += "; also " + named_change(*other, false);
      v.sentence += "; also " + named_change(*other, true);
    }
  }
  return v;
}

std::string stopping_text(double precision, const std::string& stopped) {
  if (stopped == "precision") return fmt::format(", stopped at ±{:g}% as asked", precision * 100);
  if (stopped == "budget")
    return fmt::format(", time budget spent before ±{:g}% was reached", precision * 100);
  if (stopped == "resolved") return ", stopped once its headline was resolved";
  if (stopped == "unresolved") return ", its pairs spent before its headline was resolved";
  return "";
}

std::string describe_switchback(const Switchback& s) {
  std::string text = fmt::format("switchback, {} blocks of {:g} s", s.blocks.size(), s.block_s) +
                     stopping_text(s.precision, s.stopped);
  // Subtracted on every axis alike (the same blocks, the same neighbours): TPS's says so.
  if (switchback_interval(s.blocks, kTpsAxis).neighbour_adjusted) {
    std::vector<double> shares;  // every block has one: the adjustment needs them all
    for (const auto& b : s.blocks) shares.push_back(b.neighbour_cpu.value_or(0));
    text += fmt::format("; other programs' CPU subtracted ({:.0f}–{:.0f}% of the machine)",
                        min_of(shares) * 100, max_of(shares) * 100);
  }
  return text;
}

std::string cost_change_text(const Change& change) {
  if (!change.interval.known) return "no interval";
  if (!change.measurable) return "within noise (" + could_see_text(change) + ")";
  if (change.ratio >= 2 || change.ratio <= 0.5)
    return fmt::format("{}x as much ({}–{}x)", format_number(change.ratio),
                       format_number(change.interval.low), format_number(change.interval.high));
  return fmt::format("{} [{}, {}]", format_signed_percent(change.ratio),
                     format_signed_percent(change.interval.low),
                     format_signed_percent(change.interval.high));
}

}  // namespace pgslow::results
