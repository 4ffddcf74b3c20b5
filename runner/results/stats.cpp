#include "results/stats.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <numbers>
#include <numeric>
#include <utility>

namespace pgslow::results {

double median(std::vector<double> values) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  const std::size_t n = values.size();
  return n % 2 == 1 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2;
}

double min_of(const std::vector<double>& values) {
  return values.empty() ? 0 : *std::min_element(values.begin(), values.end());
}

double max_of(const std::vector<double>& values) {
  return values.empty() ? 0 : *std::max_element(values.begin(), values.end());
}

double mean(const std::vector<double>& values) {
  if (values.empty()) return 0;
  return std::accumulate(values.begin(), values.end(), 0.0) / static_cast<double>(values.size());
}

double log_mean(const std::vector<double>& values) {
  double sum = 0;
  for (double v : values) sum += std::log(v);
  return values.empty() ? 0 : sum / static_cast<double>(values.size());
}

double log_squared_deviations(const std::vector<double>& values) {
  const double m = log_mean(values);
  double sum = 0;
  for (double v : values) sum += (std::log(v) - m) * (std::log(v) - m);
  return sum;
}

double stddev(const std::vector<double>& values) {
  if (values.size() < 2) return 0;
  const double m = mean(values);
  double sum = 0;
  for (double v : values) sum += (v - m) * (v - m);
  return std::sqrt(sum / static_cast<double>(values.size() - 1));
}

double relative_spread(const std::vector<double>& values) {
  if (values.size() < 2) return 0;
  const double med = median(values);
  if (med <= 0) return 0;
  return (max_of(values) - min_of(values)) / med;
}

namespace {

// The continued fraction of the regularized incomplete beta function (Lentz's method).
double beta_continued_fraction(double a, double b, double x) {
  const double tiny = 1e-300;
  double c = 1;
  double d = 1 - (a + b) * x / (a + 1);
  if (std::fabs(d) < tiny) d = tiny;
  d = 1 / d;
  double h = d;
  for (int m = 1; m <= 300; ++m) {
    const double m2 = 2.0 * m;
    double aa = m * (b - m) * x / ((a + m2 - 1) * (a + m2));
    d = 1 + aa * d;
    if (std::fabs(d) < tiny) d = tiny;
    c = 1 + aa / c;
    if (std::fabs(c) < tiny) c = tiny;
    d = 1 / d;
    h *= d * c;
    aa = -(a + m) * (a + b + m) * x / ((a + m2) * (a + m2 + 1));
    d = 1 + aa * d;
    if (std::fabs(d) < tiny) d = tiny;
    c = 1 + aa / c;
    if (std::fabs(c) < tiny) c = tiny;
    d = 1 / d;
    const double delta = d * c;
    h *= delta;
    if (std::fabs(delta - 1) < 1e-12) break;
  }
  return h;
}

// I_x(a, b), the regularized incomplete beta function.
double incomplete_beta(double a, double b, double x) {
  if (x <= 0) return 0;
  if (x >= 1) return 1;
  const double front = std::exp(std::lgamma(a + b) - std::lgamma(a) - std::lgamma(b) +
                                a * std::log(x) + b * std::log(1 - x));
  if (x < (a + 1) / (a + b + 2)) return front * beta_continued_fraction(a, b, x) / a;
  return 1 - front * beta_continued_fraction(b, a, 1 - x) / b;
}

// P(T <= t) for Student's t with df degrees of freedom.
double t_cdf(double t, double df) {
  const double x = df / (df + t * t);
  const double tail = 0.5 * incomplete_beta(df / 2, 0.5, x);
  return t >= 0 ? 1 - tail : tail;
}

double normal_cdf(double x) {
  return 0.5 * std::erfc(-x / std::sqrt(2.0));
}

double normal_quantile(double p) {
  // Bisection on the normal CDF: plenty fast and exact enough for a report.
  double lo = -40;
  double hi = 40;
  for (int i = 0; i < 200; ++i) {
    const double mid = (lo + hi) / 2;
    if (normal_cdf(mid) < p)
      lo = mid;
    else
      hi = mid;
  }
  return (lo + hi) / 2;
}

// Where a look's grid ends: beyond this many standard deviations of S_k there is no mass left.
constexpr double kGridSpread = 9;
// Grid points per standard deviation of the narrowest normal a grid is integrated against.
constexpr double kPointsPerSpread = 8;
// Looks closer than this in information are one look: the grid cannot resolve the increment,
// and what it would spend is negligible.
constexpr double kSameLook = 1e-4;
// Normal terms below this (relative to the peak) are left out of sums over a grid.
constexpr double kNegligible = 1e-18;

// The density of S_k = Z_k sqrt(t_k) over the continuation region, on an odd uniform grid from
// -range to range, stored times its Simpson weights so an integral against it is a plain sum.
struct Grid {
  double range = 0;
  double step = 0;
  std::vector<double> weighted_density;
  double point(std::size_t i) const { return static_cast<double>(i) * step - range; }
};

// `density` on a grid whose step is well below `spread`, the narrowest normal it meets:
// Simpson's rule then keeps the truncation's jump on an end point and is exact enough.
template <typename Density>
Grid make_grid(double range, double spread, const Density& density) {
  const double wanted = std::ceil(range * kPointsPerSpread / spread);
  // Past 500 a side it gives up points per spread, but never below two.
  const double half = std::max({10.0, std::min(wanted, 500.0), std::ceil(2 * range / spread)});
  const auto n = static_cast<std::size_t>(half);
  Grid grid{range, range / static_cast<double>(n), std::vector<double>(2 * n + 1)};
  for (std::size_t i = 0; i <= 2 * n; ++i) {
    const double simpson = i == 0 || i == 2 * n ? 1 : i % 2 == 1 ? 4 : 2;
    grid.weighted_density[i] = grid.step / 3 * simpson * density(grid.point(i));
  }
  return grid;
}

// The density at x after a normal increment with standard deviation `spread`: the sum over the
// grid of its density times the normal kernel. Successive kernel values differ by a factor that
// itself shrinks by a constant, so a row costs three exponentials, walking out from the point
// nearest x until the kernel is negligible.
double smoothed(const Grid& grid, double x, double spread) {
  const std::vector<double>& w = grid.weighted_density;
  const double u = grid.step / spread;
  const double nearest =
      std::clamp(std::round((x + grid.range) / grid.step), 0.0, static_cast<double>(w.size() - 1));
  const auto i0 = static_cast<std::size_t>(nearest);
  const double d0 = (grid.point(i0) - x) / spread;
  const double peak = std::exp(-d0 * d0 / 2);
  const double shrink = std::exp(-u * u);
  double sum = w[i0] * peak;
  double term = peak;
  double ratio = std::exp(-d0 * u - u * u / 2);
  for (std::size_t i = i0 + 1; i < w.size() && term > kNegligible; ++i) {
    term *= ratio;
    ratio *= shrink;
    sum += w[i] * term;
  }
  term = peak;
  ratio = std::exp(d0 * u - u * u / 2);
  for (std::size_t i = i0; i > 0 && term > kNegligible; --i) {
    term *= ratio;
    ratio *= shrink;
    sum += w[i - 1] * term;
  }
  return sum / (spread * std::sqrt(2 * std::numbers::pi));
}

// The chance of crossing first at the next look with S's boundary at b (from each point of the
// grid, the normal increment's two tails beyond -b and b), and its derivative in b.
std::pair<double, double> crossing(const Grid& grid, double b, double spread) {
  double chance = 0;
  double slope = 0;
  for (std::size_t i = 0; i < grid.weighted_density.size(); ++i) {
    const double s = grid.point(i);
    for (const double d : {(s - b) / spread, (-b - s) / spread}) {
      if (d < -9) continue;  // a tail below 1e-19
      chance += grid.weighted_density[i] * normal_cdf(d);
      slope -= grid.weighted_density[i] * std::exp(-d * d / 2);
    }
  }
  return {chance, slope / (spread * std::sqrt(2 * std::numbers::pi))};
}

}  // namespace

double t_quantile(double p, double df) {
  if (!(p > 0 && p < 1) || !(df > 0)) return std::nan("");
  if (!std::isfinite(df) || df > 1e7) return normal_quantile(p);
  double lo = -1e6;
  double hi = 1e6;
  for (int i = 0; i < 200; ++i) {
    const double mid = (lo + hi) / 2;
    if (t_cdf(mid, df) < p)
      lo = mid;
    else
      hi = mid;
  }
  return (lo + hi) / 2;
}

double lag1_autocorrelation(const std::vector<double>& series) {
  if (series.size() < 3) return 0;
  const double m = mean(series);
  double num = 0;
  double den = 0;
  for (std::size_t i = 0; i < series.size(); ++i) {
    den += (series[i] - m) * (series[i] - m);
    if (i + 1 < series.size()) num += (series[i] - m) * (series[i + 1] - m);
  }
  return den > 0 ? num / den : 0;
}

std::vector<double> batch_means(const std::vector<double>& series, std::size_t batches) {
  if (batches == 0 || series.empty()) return {};
  if (series.size() < batches) return series;
  const std::size_t size = series.size() / batches;
  const std::size_t skip = series.size() - size * batches;
  std::vector<double> out;
  for (std::size_t b = 0; b < batches; ++b) {
    double sum = 0;
    for (std::size_t i = 0; i < size; ++i) sum += series[skip + b * size + i];
    out.push_back(sum / static_cast<double>(size));
  }
  return out;
}

double relative_mean_variance(const std::vector<double>& series, std::size_t batches) {
  if (series.size() < 4) return 0;
  const double m = mean(series);
  if (m <= 0) return 0;
  const std::vector<double> means = batch_means(series, std::min(batches, series.size() / 2));
  const double sd = stddev(means);
  return sd * sd / static_cast<double>(means.size()) / (m * m);
}

double successive_difference_variance(const std::vector<double>& values) {
  if (values.size() < 2) return 0;
  double sum = 0;
  for (std::size_t i = 0; i + 1 < values.size(); ++i)
    sum += (values[i + 1] - values[i]) * (values[i + 1] - values[i]);
  return sum / (2.0 * static_cast<double>(values.size() - 1));
}

double Interval::half_width() const {
  return std::max(high / ratio - 1, 1 - low / ratio);
}

double Interval::quantile() const {
  return t_quantile(1 - (1 - confidence) / 2, df);
}

double Interval::standard_error() const {
  return std::log(high / ratio) / quantile();
}

double Interval::detectable() const {
  if (!known || !(df > 0)) return 0;
  // The bounds are exp(log ratio +- t * se): an effect is called with 80% power when its log
  // lies (t_confidence + t_0.80) standard errors from 0.
  return std::exp((quantile() + t_quantile(0.80, df)) * standard_error()) - 1;
}

Interval log_ratio_interval(double log_difference, double se, double df, double confidence) {
  Interval out;
  out.confidence = confidence;
  out.df = df;
  out.ratio = std::exp(log_difference);
  // A standard error of zero is not "no noise" but none measured (one run of each, with too
  // short a series for batch means): no interval, rather than a zero-width one that calls
  // every difference significant.
  if (!(df > 0) || !std::isfinite(se) || !(se > 0)) {
    out.low = out.high = out.ratio;
    return out;
  }
  const double t = out.quantile();
  out.low = std::exp(log_difference - t * se);
  out.high = std::exp(log_difference + t * se);
  out.known = true;
  return out;
}

double p_value(const Interval& interval) {
  if (!interval.known || !(interval.df > 0) || !(interval.ratio > 0)) return 1;
  const double se = interval.standard_error();
  if (!(se > 0)) return 1;
  const double stat = std::fabs(std::log(interval.ratio)) / se;
  return std::clamp(2 * (1 - t_cdf(stat, interval.df)), 0.0, 1.0);
}

Interval at_confidence(const Interval& interval, double confidence) {
  if (!interval.known) {
    Interval out = interval;
    out.confidence = confidence;
    return out;
  }
  return log_ratio_interval(std::log(interval.ratio), interval.standard_error(), interval.df,
                            confidence);
}

void holm(const std::vector<Interval*>& family, double confidence) {
  // Holm's rule is the weighted one with every comparison in one group.
  weighted_holm(family, {}, confidence);
}

void weighted_holm(const std::vector<Interval*>& own, const std::vector<Interval*>& others,
                   double confidence) {
  struct Hypothesis {
    Interval* interval;
    double p;
    bool own;
    bool open = true;
  };
  std::vector<Hypothesis> family;
  for (Interval* i : own)
    if (i != nullptr && i->known) family.push_back({i, p_value(*i), true});
  for (Interval* i : others)
    if (i != nullptr && i->known) family.push_back({i, p_value(*i), false});
  const double alpha = 1 - confidence;
  // The level each open hypothesis is tested at, from how many of each group are still open.
  const auto level = [&](const Hypothesis& h) {
    double open_own = 0;
    double open_others = 0;
    for (const auto& x : family)
      if (x.open) (x.own ? open_own : open_others) += 1;
    double share = h.own ? 1 - kOtherAxesShare : kOtherAxesShare;
    if (open_own == 0 || open_others == 0) share = 1;
    return alpha * share / (h.own ? open_own : open_others);
  };
  for (bool called = true; called;) {
    called = false;
    // The most significant open hypothesis relative to its level falls first.
    Hypothesis* next = nullptr;
    for (auto& h : family)
      if (h.open && h.p <= level(h) && (next == nullptr || h.p / level(h) < next->p / level(*next)))
        next = &h;
    if (next != nullptr) {
      *next->interval = at_confidence(*next->interval, 1 - level(*next));
      next->open = false;
      called = true;
    }
  }
  for (auto& h : family)
    if (h.open) *h.interval = at_confidence(*h.interval, 1 - level(h));
}

Narrowing narrowing(const Interval& interval, double stage, double reference, double target,
                    int max_pairs) {
  Narrowing out;
  const double now = interval.detectable();
  if (!interval.known || !(now > target) || !(stage > 0) || !(reference > 0)) return out;
  const double sigma = interval.standard_error() / std::sqrt(1 / stage + 1 / reference);
  for (int k = 1; k <= max_pairs; ++k) {
    const double later_se = sigma * std::sqrt(1 / (stage + k) + 1 / (reference + k));
    out = {k, log_ratio_interval(std::log(interval.ratio), later_se, interval.df + k,
                                 interval.confidence)
                  .detectable()};
    if (out.detectable <= target) break;
  }
  return out;
}

std::vector<double> spending_confidences(const std::vector<double>& fractions, double confidence) {
  if (fractions.empty()) return {};
  if (fractions.size() == 1 || !(confidence > 0 && confidence < 1))
    return std::vector<double>(fractions.size(), confidence);
  const double alpha = 1 - confidence;
  const double z = normal_quantile(1 - alpha / 2);
  // Each side spends alpha / 2 along 2 - 2 Phi(z_{1-alpha/4} / sqrt(t)), as the published
  // two-sided tables (and gsDesign, ldbounds) do; exact at t = 1 so the looks spend alpha.
  const double side_z = normal_quantile(1 - alpha / 4);
  const auto spent = [&](double t) {
    return t >= 1 ? alpha : 4 * normal_cdf(-side_z / std::sqrt(t));
  };

  std::vector<double> times(fractions.size());
  for (std::size_t k = 0; k < fractions.size(); ++k) {
    double t = fractions[k] > 0 ? std::min(fractions[k], 1.0) : 1e-9;
    if (k > 0 && !(t >= times[k - 1] + kSameLook)) t = times[k - 1];
    times[k] = t;
  }
  // The spread of the next distinct look's increment, which the grid of look k must resolve.
  const auto next_spread = [&](std::size_t k) {
    for (std::size_t j = k + 1; j < times.size(); ++j)
      if (times[j] > times[k]) return std::sqrt(times[j] - times[k]);
    return 0.0;
  };

  std::vector<double> out(fractions.size());
  // Nothing was spent before look 1: its boundary takes all of alpha(t_1).
  out[0] = times[0] >= 1 ? confidence : 1 - spent(times[0]);
  double boundary = -normal_quantile(spent(times[0]) / 2) * std::sqrt(times[0]);
  const auto grid_for = [&](std::size_t k, double spread, const auto& density) {
    const double next = next_spread(k);
    if (next == 0) return Grid{};  // no later look needs it
    const double range = std::min(boundary, kGridSpread * std::sqrt(times[k]));
    return make_grid(range, std::min(spread, next), density);
  };
  Grid grid = grid_for(0, std::sqrt(times[0]), [&](double s) {
    return std::exp(-s * s / (2 * times[0])) / std::sqrt(2 * std::numbers::pi * times[0]);
  });

  std::size_t last = 0;  // the last distinct look
  for (std::size_t k = 1; k < times.size(); ++k) {
    if (times[k] == times[last]) {
      out[k] = out[last];
      continue;
    }
    const double spread = std::sqrt(times[k] - times[last]);
    const double target = spent(times[k]) - spent(times[last]);
    // |Z_k| never has a boundary inside z (at most alpha is spent, so crossing there takes at
    // least what is left) and ten spreads past every point nothing crosses. Newton's steps on
    // the log of the chance (tails are nearly log-quadratic), bisecting when one leaves the
    // bracket.
    double low = z * std::sqrt(times[k]);
    double high = std::max(low, grid.range) + 10 * spread;
    double b = low;
    for (int step = 0; step < 200 && high - low > 1e-10; ++step) {
      const auto [chance, slope] = crossing(grid, b, spread);
      (chance > target ? low : high) = b;
      const double newton = b - (std::log(chance) - std::log(target)) * chance / slope;
      if (std::fabs(newton - b) < 1e-11) break;  // converged (b may be an end of the bracket)
      b = newton > low && newton < high ? newton : (low + high) / 2;
    }
    boundary = b;
    out[k] = 1 - 2 * normal_cdf(-boundary / std::sqrt(times[k]));
    grid = grid_for(k, spread, [&](double s) { return smoothed(grid, s, spread); });
    last = k;
  }
  // Never narrower at an earlier look than at a later one: widening a look only adds coverage.
  for (std::size_t k = out.size() - 1; k > 0; --k) out[k - 1] = std::max(out[k - 1], out[k]);
  return out;
}

std::string degrees_of_freedom_text(double df) {
  const double whole = std::round(df);
  return fmt::format("{:.0f} degree{} of freedom", whole, whole == 1 ? "" : "s");
}

Verdict verdict_of(const Interval& interval) {
  if (!interval.known) return Verdict::kUnknown;
  if (interval.high < 1) return Verdict::kSlower;
  if (interval.low > 1) return Verdict::kFaster;
  return Verdict::kWithinNoise;
}

std::string format_verdict(const Interval& interval) {
  switch (verdict_of(interval)) {
    case Verdict::kSlower:
      return "slower";
    case Verdict::kFaster:
      return "faster";
    case Verdict::kWithinNoise:
      return "within noise (" + format_could_see(interval.detectable()) + ")";
    case Verdict::kUnknown:
      break;
  }
  return "no interval";
}

std::string format_could_see(double detectable) {
  return fmt::format("could see ±{:.{}f}%", detectable * 100, detectable < 0.1 ? 1 : 0);
}

std::string format_confidence(double confidence) {
  return fmt::format("{:g}%", std::round(confidence * 1000) / 10);
}

std::string format_interval(const Interval& interval) {
  if (!interval.known) return "—";
  // Both bounds far from 1 read as factors, else as percentages.
  if (interval.high < 0.5)
    return format_number(1 / interval.high, 2) + "–" + format_number(1 / interval.low, 2) +
           "x slower";
  if (interval.low >= 2)
    return format_number(interval.low, 2) + "–" + format_number(interval.high, 2) + "x faster";
  return "[" + format_signed_percent(interval.low) + ", " + format_signed_percent(interval.high) +
         "]";
}

std::string format_change(double ratio) {
  if (!std::isfinite(ratio) || ratio < 0) return "n/a";
  if (ratio == 0) return "-100% (nothing completed)";
  if (ratio >= 2) return format_number(ratio, 2) + "x faster";
  if (ratio >= 1) return fmt::format("+{:.1f}%", (ratio - 1) * 100);
  const std::string pct = fmt::format("-{:.1f}%", (1 - ratio) * 100);
  if (ratio > 0.5) return pct;
  const std::string slower = format_number(1 / ratio, 2) + "x slower";
  // Below a tenth the percentage reads "-99.9%" for 1,000x and 100,000x alike: ratio only.
  if (ratio < 0.1) return slower;
  return pct + " (" + slower + ")";
}

}  // namespace pgslow::results
