#include "search/cliff_search.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <optional>

#include "common/clock.h"
#include "common/errors.h"
#include "results/stats.h"
#include "results/switchback.h"

namespace pgslow::search {

std::vector<double> cliff_grid(const CliffSpace& space, double resolution) {
  if (!(resolution > 1))
    throw InputError(
        fmt::format("--resolution must be above 1 (a factor between neighbouring "
                    "values, e.g. 2 or 1.25); got {}",
                    resolution));
  if (!(space.from > 0) || !(space.to > 0))
    throw InputError(fmt::format(
        "{}: the search steps in log scale, so --from and --to must be above 0 (got {} and {})",
        space.knob, cliff_value_text(space, space.from), cliff_value_text(space, space.to)));
  const double span = std::log(space.to / space.from);
  // Steps of at most `resolution` each; a hair of slack so 1024x at factor 2 is 10 steps.
  const int steps =
      std::max(1, static_cast<int>(std::ceil(std::fabs(span) / std::log(resolution) - 1e-9)));
  std::vector<double> grid;
  for (int k = 0; k <= steps; ++k) {
    double v = k == steps ? space.to : space.from * std::exp(span * k / steps);
    // Memory of 16MB and more in whole megabytes, as a person writes it ("192MB", not
    // "196608kB"): a step of 1.25 is then still 4MB or more, and moves by under 3%. The ends
    // stay as given.
    constexpr double kMiB = 1024.0 * 1024.0;
    const double bytes = v * space.unit.size;
    if (space.unit.kind == knobs::BaseUnit::Kind::kMemory && bytes >= 16 * kMiB && k != 0 &&
        k != steps)
      v = std::round(bytes / kMiB) * kMiB / space.unit.size;
    if (space.integer) v = std::round(v);
    // Integer knobs stop at adjacent integers: a value equal to the previous one adds nothing.
    if (!grid.empty() && v == grid.back()) continue;
    grid.push_back(v);
  }
  return grid;
}

std::string cliff_value_text(const CliffSpace& space, double value) {
  return knobs::format_with_unit(value, space.unit);
}

int cliff_max_points(int steps) {
  return static_cast<int>(std::floor(std::log2(std::max(1, steps)))) + 2;
}

namespace {

class Search {
 public:
  Search(Measurer& measurer, const CliffSpace& space, const CliffOptions& options,
         std::vector<int>* calls)
      : measurer_(measurer), space_(space), options_(options), calls_(calls) {}

  results::CliffResult run() {
    const std::int64_t start = now_us();
    const std::vector<double> grid = cliff_grid(space_, options_.resolution);
    result_.knob = space_.knob;
    result_.from = cliff_value_text(space_, space_.from);
    result_.to = cliff_value_text(space_, space_.to);
    result_.to_value = space_.to;
    result_.resolution = options_.resolution;
    result_.metric = options_.metric;
    result_.grid_steps = static_cast<int>(grid.size()) - 1;
    result_.max_points = cliff_max_points(result_.grid_steps);
    result_.confidence = options_.confidence;
    result_.search_confidence = options_.confidence;
    result_.baseline.value = result_.from;
    result_.baseline.base_value = space_.from;
    if (grid.size() >= 2) {
      // The far end first: safe there means safe everywhere on a monotonic curve.
      std::size_t safe = 0;
      std::size_t harmful = grid.size() - 1;
      const std::size_t far = measure_point(grid[harmful]);
      if (harmful_verdict(far)) {
        result_.first_harmful = far;
        while (harmful - safe > 1) {
          const std::size_t mid = safe + (harmful - safe) / 2;
          const std::size_t p = measure_point(grid[mid]);
          if (harmful_verdict(p)) {
            harmful = mid;
            result_.first_harmful = p;
          } else {
            safe = mid;
            result_.last_safe = p;
          }
        }
      } else {
        result_.last_safe = far;
      }
    }
    result_.baseline.samples = baseline_runs_;
    result_.runs = runs_;
    result_.seconds = static_cast<double>(now_us() - start) / 1e6;
    return std::move(result_);
  }

 private:
  bool harmful_verdict(std::size_t point) const {
    return result_.points[point].verdict == results::CliffVerdict::kHarmful;
  }

  // One run of `value` (nullopt: the baseline); returns its sample.
  double run_once(std::optional<double> value, int point) {
    const double v = value.value_or(space_.from);
    const std::vector<Setting> changes{{space_.knob, cliff_value_text(space_, v), {}}};
    const std::vector<double> s = measurer_.measure(changes, 1);
    if (s.size() != 1 || !std::isfinite(s[0]) || s[0] <= 0)
      throw RuntimeError(
          fmt::format("a run of {} = {} measured no {}: the workload committed "
                      "nothing",
                      space_.knob, changes[0].value, results::metric_name(options_.metric)));
    ++runs_;
    if (calls_ != nullptr) calls_->push_back(point);
    last_was_baseline_ = !value.has_value();
    if (!value) baseline_runs_.push_back(s[0]);
    return s[0];
  }

  // Measures `value` (at most max_looks looks) and returns the point's index.
  std::size_t measure_point(double value) {
    const std::size_t index = result_.points.size();
    results::CliffPoint p;
    p.value = cliff_value_text(space_, value);
    p.base_value = value;
    p.order = static_cast<int>(index) + 1;
    result_.points.push_back(p);
    const int point = static_cast<int>(index);
    // B P B P ... B; a baseline run just made (the previous point's last) opens the series.
    std::vector<std::optional<double>> logs;
    std::vector<bool> stage;
    std::vector<double> samples;
    std::vector<double> baseline;
    auto add = [&](bool is_stage, double sample) {
      logs.emplace_back(std::log(sample));
      stage.push_back(is_stage);
      (is_stage ? samples : baseline).push_back(sample);
    };
    if (last_was_baseline_ && !baseline_runs_.empty())
      add(false, baseline_runs_.back());
    else
      add(false, run_once(std::nullopt, -1));
    const int looks = std::max(1, options_.max_looks);
    // The search as a whole misleads at most 1 - confidence of the time: each look of each
    // point it may measure takes an equal share (Bonferroni).
    const int max_points = cliff_max_points(result_.grid_steps);
    const double confidence =
        results::confidence_over_looks(looks * max_points, options_.confidence);
    diffs_.emplace_back();
    for (int look = 1; look <= looks; ++look) {
      for (int i = 0; i < options_.repeats; ++i) {
        add(true, run_once(value, point));
        add(false, run_once(std::nullopt, -1));
      }
      diffs_.back() = results::alternating_differences(logs, stage);
      const auto [variance, df] = pooled_variance();
      const results::Interval i =
          results::differences_interval(diffs_.back(), variance, df, confidence);
      const results::Interval loose = results::differences_interval(diffs_.back(), variance, df,
                                                                    options_.suggestive_confidence);
      results::CliffPoint& q = result_.points[index];
      q.samples = samples;
      q.baseline_samples = baseline;
      q.looks = look;
      q.effect.ratio = i.ratio;
      q.effect.low = i.low;
      q.effect.high = i.high;
      q.effect.detectable = i.known ? i.detectable() : 0;
      q.effect.runs = static_cast<int>(samples.size());
      q.effect.reference_runs = static_cast<int>(baseline.size());
      if (i.known && i.high < 1)
        q.verdict = results::CliffVerdict::kHarmful;
      else if (loose.known && loose.high < 1)
        q.verdict = results::CliffVerdict::kUncertain;
      else
        q.verdict = results::CliffVerdict::kSafe;
      if (options_.on_point) options_.on_point(q);
      if (q.verdict != results::CliffVerdict::kUncertain) break;
    }
    result_.confidence = confidence;
    return index;
  }

  // The machine's noise, pooled over every point so far and the baseline's own runs (a point's
  // three differences alone say little about it): a difference's variance and its degrees of
  // freedom. The baseline's runs, in time order, give the per-run variance from successive
  // differences (drift barely moves it); a difference of a run and two halves of runs has 1.5
  // times that. Floored at min_noise per run.
  std::pair<double, double> pooled_variance() const {
    double sum = 0;
    double df = 0;
    for (const auto& d : diffs_) {
      if (d.size() < 2) continue;
      const double n = static_cast<double>(d.size()) - 1;
      sum += results::difference_variance(d) * n;
      df += n;
    }
    if (baseline_runs_.size() >= 3) {
      std::vector<double> logs;
      for (double b : baseline_runs_) logs.push_back(std::log(b));
      const double n = static_cast<double>(logs.size()) - 1;
      sum += 1.5 * results::successive_difference_variance(logs) * n;
      df += n;
    }
    const double floor = 1.5 * options_.min_noise * options_.min_noise;
    return {df > 0 ? std::max(floor, sum / df) : floor, df};
  }

  Measurer& measurer_;
  const CliffSpace& space_;
  const CliffOptions& options_;
  std::vector<int>* calls_;
  results::CliffResult result_;
  std::vector<double> baseline_runs_;
  std::vector<std::vector<double>> diffs_;  // per point: its runs against the baseline's
  bool last_was_baseline_ = false;
  int runs_ = 0;
};

}  // namespace

results::CliffResult find_cliff(Measurer& measurer, const CliffSpace& space,
                                const CliffOptions& options, std::vector<int>* calls) {
  if (options.repeats < 3)
    throw InputError(
        fmt::format("--repeats must be at least 3 (got {}): a point's interval "
                    "needs three runs against the baseline",
                    options.repeats));
  return Search(measurer, space, options, calls).run();
}

}  // namespace pgslow::search
