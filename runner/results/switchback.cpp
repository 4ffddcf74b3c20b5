#include "results/switchback.h"

#include <algorithm>
#include <cmath>

namespace pgslow::results {

namespace {

// With white noise of variance s2 per block, d = s - (r1 + r2) / 2 has variance 1.5 s2, and
// two differences sharing a reference block covary by s2 / 4: a correlation of 1/6.
constexpr double kNeighbourCorrelation = 1.0 / 6.0;

// One axis over a series that alternates: each element's value through axis_value (a block,
// a run), `is_stage` saying which configuration it ran.
template <typename Element, typename IsStage>
Interval axis_interval(const std::vector<Element>& series, const Axis& axis, IsStage is_stage,
                       double confidence, bool subtract_neighbours) {
  std::vector<std::optional<double>> logs;
  std::vector<std::optional<double>> neighbours;
  std::vector<bool> stage;
  for (std::size_t i = 0; i < series.size(); ++i) {
    const auto v = series[i] != nullptr ? axis_value(axis, *series[i]) : std::nullopt;
    logs.push_back(v ? std::optional<double>(std::log(*v)) : std::nullopt);
    neighbours.push_back(series[i] != nullptr && subtract_neighbours ? series[i]->neighbour_cpu
                                                                     : std::nullopt);
    stage.push_back(is_stage(i));
  }
  return alternating_interval(logs, stage, confidence, neighbours);
}

// Every axis with a known interval, Holm's rule over them.
template <typename Element, typename IsStage>
std::vector<AxisInterval> axes_of(const std::vector<Element>& series, IsStage is_stage,
                                  double confidence, bool subtract_neighbours) {
  std::vector<AxisInterval> out;
  for (const Axis& a : kAxes) {
    const Interval i = axis_interval(series, a, is_stage, confidence, subtract_neighbours);
    if (i.known) out.push_back({&a, i});
  }
  holm_over_axes(out, confidence);
  return out;
}

std::vector<const SwitchbackBlock*> pointers(const std::vector<SwitchbackBlock>& blocks) {
  std::vector<const SwitchbackBlock*> out;
  for (const auto& b : blocks) out.push_back(&b);
  return out;
}

}  // namespace

Interval switchback_interval(const std::vector<SwitchbackBlock>& blocks, const Axis& axis,
                             double confidence) {
  return axis_interval(
      pointers(blocks), axis, [&](std::size_t i) { return blocks[i].stage; }, confidence, true);
}

std::vector<AxisInterval> switchback_axes(const std::vector<SwitchbackBlock>& blocks,
                                          double confidence) {
  return axes_of(
      pointers(blocks), [&](std::size_t i) { return blocks[i].stage; }, confidence, true);
}

std::vector<AxisInterval> alternating_axes(const std::vector<const Measurement*>& runs,
                                           const std::vector<bool>& stage, double confidence) {
  // Separate runs are not adjusted (docs/reading-the-report.md "Neighbours subtracted").
  return axes_of(
      runs, [&](std::size_t i) { return i < stage.size() && stage[i]; }, confidence, false);
}

std::vector<double> alternating_differences(const std::vector<std::optional<double>>& log_values,
                                            const std::vector<bool>& stage) {
  return alternating_differences(log_values, stage, {}).first;
}

std::pair<std::vector<double>, std::vector<double>> alternating_differences(
    const std::vector<std::optional<double>>& log_values, const std::vector<bool>& stage,
    const std::vector<std::optional<double>>& covariate) {
  std::vector<double> diffs;
  std::vector<double> covariate_diffs;
  // The covariate's differences are kept only while every element used has one.
  bool with_covariate = !covariate.empty();
  auto covariate_at = [&](std::size_t i) {
    const std::optional<double> c = i < covariate.size() ? covariate[i] : std::nullopt;
    with_covariate = with_covariate && c.has_value();
    return c.value_or(0);
  };
  for (std::size_t i = 0; i < log_values.size() && i < stage.size(); ++i) {
    if (!stage[i]) continue;
    const auto y = log_values[i];
    if (!y) continue;
    double sum = 0;
    double covariate_sum = 0;
    int n = 0;
    for (const std::size_t j : {i - 1, i + 1}) {  // i - 1 wraps past the end for i = 0
      if (j >= log_values.size() || j >= stage.size() || stage[j]) continue;
      if (const auto r = log_values[j]) {
        sum += *r;
        covariate_sum += covariate_at(j);
        ++n;
      }
    }
    if (n == 0) continue;
    diffs.push_back(*y - sum / n);
    covariate_diffs.push_back(covariate_at(i) - covariate_sum / n);
  }
  if (!with_covariate) covariate_diffs.clear();
  return {diffs, covariate_diffs};
}

double difference_variance(const std::vector<double>& diffs) {
  if (diffs.size() < 2) return 0;
  const double rho = kNeighbourCorrelation;
  const auto n = static_cast<double>(diffs.size());
  // The sample variance of correlated differences runs low by 2 rho / n.
  return stddev(diffs) * stddev(diffs) / (1 - 2 * rho / n);
}

Interval differences_interval(const std::vector<double>& diffs, double variance, double df,
                              double confidence) {
  Interval out;
  out.confidence = confidence;
  if (diffs.empty()) return out;
  const double m = mean(diffs);
  const auto n = static_cast<double>(diffs.size());
  if (diffs.size() < 3 || df <= 0) {
    out.ratio = out.low = out.high = std::exp(m);
    return out;
  }
  // The mean's variance gains 2 rho (n - 1) / n from the shared neighbours.
  const double se = std::sqrt(variance / n * (1 + 2 * kNeighbourCorrelation * (n - 1) / n));
  return log_ratio_interval(m, se, df, confidence);
}

std::optional<Interval> adjusted_interval(const std::vector<double>& diffs,
                                          const std::vector<double>& covariate_diffs,
                                          double confidence) {
  const std::size_t count = diffs.size();
  if (count < kFewestAdjustedDifferences || covariate_diffs.size() != count) return std::nullopt;
  const auto n = static_cast<double>(count);
  const double x_mean = mean(covariate_diffs);
  const double y_mean = mean(diffs);
  double sxx = 0;
  double sxy = 0;
  for (std::size_t i = 0; i < count; ++i) {
    sxx += (covariate_diffs[i] - x_mean) * (covariate_diffs[i] - x_mean);
    sxy += (covariate_diffs[i] - x_mean) * (diffs[i] - y_mean);
  }
  // Decided by the covariate alone, never by what the adjustment would do to the interval.
  // Its differences must spread by kAdjustedSpread or more (else the slope is noise), and
  // average about zero: a neighbour that comes and goes lands on either side alike, while one
  // whose share moves with the stage (pgslow's own PgBouncer, a logger fed by the server, a
  // CPU hog that gets what a cheaper stage leaves) would carry part of the effect itself.
  const double spread = std::sqrt(sxx / (n - 1));
  if (spread < kAdjustedSpread || std::abs(x_mean) > kNeighbourMeanLimit * spread / std::sqrt(n))
    return std::nullopt;
  const double slope = sxy / sxx;
  double residuals = 0;
  for (std::size_t i = 0; i < count; ++i) {
    const double r = diffs[i] - y_mean - slope * (covariate_diffs[i] - x_mean);
    residuals += r * r;
  }
  const double rho = kNeighbourCorrelation;
  // Residual variance with n - 2 degrees of freedom, corrected for the shared neighbours as
  // difference_variance is; the estimate is the difference at equal neighbour load (the
  // regression's intercept), whose variance adds the slope's uncertainty at the mean.
  const double variance = residuals / (n - 2) / (1 - 2 * rho / n);
  const double se = std::sqrt(variance * ((1 + 2 * rho * (n - 1) / n) / n + x_mean * x_mean / sxx));
  Interval out = log_ratio_interval(y_mean - slope * x_mean, se, n - 2, confidence);
  out.neighbour_adjusted = true;
  return out;
}

Interval alternating_interval(const std::vector<std::optional<double>>& log_values,
                              const std::vector<bool>& stage, double confidence,
                              const std::vector<std::optional<double>>& neighbour_cpu) {
  const auto [diffs, neighbour_diffs] = alternating_differences(log_values, stage, neighbour_cpu);
  if (const auto adjusted = adjusted_interval(diffs, neighbour_diffs, confidence)) return *adjusted;
  return differences_interval(diffs, difference_variance(diffs),
                              static_cast<double>(diffs.size()) - 1, confidence);
}

std::vector<int> look_schedule(const SwitchbackDesign& design) {
  const int last = std::max(1, design.max_pairs);
  if (design.precision <= 0 && !design.resolve) return {last};
  std::vector<int> looks;
  int n = std::clamp(design.min_pairs, std::min(design.fewest_pairs, last), last);
  while (n < last) {
    looks.push_back(n);
    n = std::max(n + 1, static_cast<int>(std::ceil(n * 1.5)));
  }
  looks.push_back(last);
  return looks;
}

SwitchbackDesign alternating_looks(double precision, int repeats, double budget_s, double pair_s) {
  SwitchbackDesign d;
  d.resolve = precision <= 0;
  d.precision = d.resolve ? kResolvedWithin : precision;
  d.fewest_pairs = 2;
  d.min_pairs = repeats;
  const int budget_pairs = static_cast<int>(budget_s / pair_s);
  d.max_pairs = std::max(repeats, d.resolve ? std::min(budget_pairs, 2 * repeats) : budget_pairs);
  return d;
}

double confidence_over_looks(int looks, double confidence) {
  return 1 - (1 - confidence) / std::max(1, looks);
}

namespace {

// Each look's confidence, for `looks` (look_schedule's).
std::vector<double> look_confidences(const std::vector<int>& looks, double confidence) {
  std::vector<double> fractions;
  for (int n : looks) fractions.push_back(static_cast<double>(n) / looks.back());
  return spending_confidences(fractions, confidence);
}

// The confidence of the latest look at or before `pairs`; before the first look, the first's
// (the widest).
double confidence_at(const std::vector<int>& looks, const std::vector<double>& confidences,
                     int pairs) {
  std::size_t k = 0;
  while (k + 1 < looks.size() && looks[k + 1] <= pairs) ++k;
  return confidences[k];
}

}  // namespace

double look_confidence(const SwitchbackDesign& design, int pairs) {
  const std::vector<int> looks = look_schedule(design);
  return confidence_at(looks, look_confidences(looks, design.confidence), pairs);
}

Measurement blocks_measurement(const std::vector<SwitchbackBlock>& blocks, bool stage) {
  Measurement m;
  double neighbour_s = 0;  // the neighbours' share times each block's length, while every block
  bool neighbours = true;  // has it
  for (const auto& b : blocks) {
    if (b.stage != stage) continue;
    m.duration_s += b.seconds;
    m.committed += b.transactions;
    m.server_cpu_s += b.server_cpu_s;
    m.client_cpu_s += b.client_cpu_s;
    neighbours = neighbours && b.neighbour_cpu.has_value();
    if (neighbours) neighbour_s += *b.neighbour_cpu * b.seconds;
    if (b.seconds <= 0) continue;
    m.tps_per_second.push_back(static_cast<double>(b.transactions) / b.seconds);
    if (b.p99_us > 0) m.p99_per_second.push_back(b.p99_us);
  }
  // The geometric mean of the blocks' TPS, the figure the effect compares (summary.h Change),
  // so every table, curve and expectation shows the same TPS as the effect beside it; the
  // blocks' totals would weigh a block by its kept length, which a late switch shortens.
  std::vector<double> logs;
  for (double tps : m.tps_per_second)
    if (tps > 0) logs.push_back(std::log(tps));
  if (!logs.empty() && logs.size() == m.tps_per_second.size())
    m.tps = std::exp(mean(logs));
  else  // a block without a commit has no logarithm: the blocks' totals
    m.tps = m.duration_s > 0 ? static_cast<double>(m.committed) / m.duration_s : 0;
  if (neighbours && m.duration_s > 0) m.neighbour_cpu = neighbour_s / m.duration_s;
  return m;
}

void set_switchback_result(StageResult& stage, Switchback result, Measurement stage_blocks) {
  stage_blocks.clients_requested = stage_blocks.clients_connected = stage.load.clients;
  if (stage_blocks.committed > 0) stage.repeats.push_back(std::move(stage_blocks));
  stage.evidence_seconds = stage.repeats.empty() ? 0 : stage.repeats.front().duration_s;
  stage.switchback = std::move(result);
}

SwitchbackRun::SwitchbackRun(SwitchbackDesign design)
    : design_(design),
      looks_(look_schedule(design_)),
      confidences_(look_confidences(looks_, design_.confidence)) {}

SwitchbackRun::Position SwitchbackRun::at(double elapsed_s) const {
  Position p;
  p.block = static_cast<int>(std::floor(std::max(0.0, elapsed_s) / design_.block_s));
  p.stage = p.block % 2 == 1;
  p.counting = elapsed_s - p.block * design_.block_s >= design_.settle_s;
  return p;
}

bool SwitchbackRun::add(SwitchbackBlock block) {
  if (done_) return true;
  block.stage = blocks_.size() % 2 == 1;
  blocks_.push_back(block);
  if (block.stage) return false;  // looks come after a reference block
  const int pairs = static_cast<int>(blocks_.size() / 2);
  if (std::find(looks_.begin(), looks_.end(), pairs) == looks_.end()) return false;
  if (pairs >= looks_.back()) {
    done_ = true;
  }
  if (design_.precision > 0 &&
      precision_reached(switchback_axes(blocks_, confidence_at(looks_, confidences_, pairs)),
                        design_.precision, design_.axis) != nullptr)
    done_ = reached_ = true;
  return done_;
}

bool SwitchbackRun::looks_next() const {
  if (done_ || block() % 2 == 1) return false;  // looks come after a reference block
  return std::find(looks_.begin(), looks_.end(), block() / 2) != looks_.end();
}

void SwitchbackRun::set_latency(const std::vector<LatencySummary>& latency) {
  for (std::size_t b = 0; b < blocks_.size() && b < latency.size(); ++b) {
    blocks_[b].p95_us = latency[b].p95_us;
    blocks_[b].p99_us = latency[b].p99_us;
  }
}

Switchback SwitchbackRun::result() const {
  Switchback s;
  s.block_s = design_.block_s;
  s.settle_s = design_.settle_s;
  s.precision = design_.precision;
  s.looks = static_cast<int>(looks_.size());
  s.confidence = confidence_at(looks_, confidences_, static_cast<int>(blocks_.size() / 2));
  s.stopped = !done_                  ? "interrupted"
              : reached_              ? "precision"
              : design_.precision > 0 ? "budget"
                                      : "fixed";
  s.blocks = blocks_;
  return s;
}

double switchback_confidence(const Switchback& switchback) {
  // A report written before the looks spent their 5% unevenly: each at 1 - 0.05 / looks.
  return switchback.confidence > 0 ? switchback.confidence
                                   : confidence_over_looks(switchback.looks);
}

}  // namespace pgslow::results
