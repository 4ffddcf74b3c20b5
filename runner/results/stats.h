#pragma once
// Statistics of the results: free functions, trivial to test (Google Benchmark's shape), and
// the words for an interval and a change. Numbers and units are formatted by common/format.h.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "common/format.h"

namespace pgslow::results {

// Empty input gives 0 for every function (a stage that failed has no repeats).
double median(std::vector<double> values);
double min_of(const std::vector<double>& values);
double max_of(const std::vector<double>& values);
double mean(const std::vector<double>& values);
double stddev(const std::vector<double>& values);  // sample standard deviation (n - 1)
// Throughput effects multiply: the mean of log(TPS) and the sum of squared deviations of the
// logs from it (pooled over groups for a noise estimate). Both 0 for no values.
double log_mean(const std::vector<double>& values);
double log_squared_deviations(const std::vector<double>& values);
// (max - min) / median: the run-to-run spread of repeats, 0 for fewer than two values.
double relative_spread(const std::vector<double>& values);

// ---- Intervals (docs/reading-the-report.md "The interval") ----

// The p-quantile of Student's t distribution with `df` degrees of freedom (df > 0):
// t_quantile(0.975, 4) = 2.776. Infinite df gives the normal quantile.
double t_quantile(double p, double df);
// Lag-1 autocorrelation of a series (0 for fewer than three values).
double lag1_autocorrelation(const std::vector<double>& series);
// The means of `batches` consecutive equal batches of `series` (the first values that do not
// fill a batch are left out). Fewer values than batches: one batch per value.
std::vector<double> batch_means(const std::vector<double>& series, std::size_t batches);
// The variance of the mean of an autocorrelated series, relative to the mean squared (so its
// square root is a relative standard error), from batch means: per-second throughput samples
// are correlated, so their plain variance / n understates the uncertainty. 0 when it cannot be
// estimated (fewer than four values, or a mean of 0).
double relative_mean_variance(const std::vector<double>& series, std::size_t batches = 5);
// The variance of values that may drift slowly, from successive differences (von Neumann):
// sum of (x[i+1] - x[i])^2 / (2 (n - 1)). A linear drift inflates it far less than the plain
// variance. 0 for fewer than two values.
double successive_difference_variance(const std::vector<double>& values);

// A ratio (stage / reference) with its two-sided interval.
struct Interval {
  double ratio = 1;  // the estimate
  double low = 1;
  double high = 1;
  double df = 0;  // degrees of freedom of the noise estimate
  double confidence = 0.95;
  bool known = false;  // false: too few measurements to state an interval
  // The effect at equal neighbour load: other programs' share of the machine was subtracted
  // (results/switchback.h alternating_interval).
  bool neighbour_adjusted = false;
  // The larger distance of a bound from the estimate, relative.
  double half_width() const;
  // Student's t at its confidence and degrees of freedom, and the standard error of the log
  // ratio that its bounds (exp(log ratio ± t se)) imply.
  double quantile() const;
  double standard_error() const;
  // The smallest effect (a relative change either way) that a comparison as noisy as this one
  // calls slower or faster four times in five: what "within noise" could have seen. "No
  // effect" reads differently when it could have seen 3% than when it could have seen 40%.
  double detectable() const;
};
// The interval of exp(log_difference) with standard error `se` of the log difference.
Interval log_ratio_interval(double log_difference, double se, double df, double confidence = 0.95);

// The two-sided p-value of "no change" given an interval (its estimate, bounds and degrees of
// freedom give the t statistic); 1 when the interval is unknown.
double p_value(const Interval& interval);
// The same comparison stated at another confidence: same estimate, standard error and df.
Interval at_confidence(const Interval& interval, double confidence);
// Holm's step-down over a family of comparisons (a stage's axes): the known intervals ordered
// by p-value, the k-th smallest tested at (1 - confidence) / (m - k + 1), stopping at the first
// that is not called. Each interval is restated at the confidence its step tested it at, so it
// leaves out "no change" exactly when Holm calls it, and the chance that any verdict of the
// family is wrong stays at most 1 - confidence. Unknown intervals are not in the family.
void holm(const std::vector<Interval*>& family, double confidence = 0.95);

// The confidence of each look's interval when an interval is looked at several times and the
// run may stop at any look (docs/reading-the-report.md "Looks"): Lan and DeMets' spending
// function with O'Brien and Fleming's shape over the looks' information fractions (`fractions`:
// increasing, in (0, 1], the last normally 1). Each side spends alpha / 2 along
// 2 - 2 Phi(z_{1-alpha/4} / sqrt(t)), as the published two-sided tables do, so by look k
// alpha(t_k) = 4 - 4 Phi(z_{1-alpha/4} / sqrt(t_k)) is spent. Boundaries c_k are found so that
// the chance of crossing first at look k under no effect is alpha(t_k) - alpha(t_{k-1}) (exact
// recursion over a grid for the Brownian motion of the z statistic), and look k's interval is
// stated at 1 - 2 (1 - Phi(c_k)): a repeated confidence interval, so the interval the run stops
// with covers at `confidence` whatever made it stop. Early looks spend little (wide), the last
// almost all: four even looks state 99.999%, 99.7%, 98.2%, 95.6%, and looks at 0.4, 0.6, 0.9, 1
// state the last at 96.1% where Bonferroni would state each at 98.75%. Empty input gives none
// and one look gives `confidence`; a fraction not above the one before (by 1e-4) is the same
// look again. An earlier look is never stated narrower than a later one.
std::vector<double> spending_confidences(const std::vector<double>& fractions,
                                         double confidence = 0.95);

// The share of the family-wise error that the axes nobody expected share while TPS or one of
// the stage's own axes (the axes its knobs are known to move) is still not called.
inline constexpr double kOtherAxesShare = 0.1;
// Holm's rule with weights (a closed test whose weights only grow as hypotheses fall, so its
// shortcut keeps the chance that any verdict of the family is wrong at most 1 - confidence):
// the `own` intervals (TPS and the knobs' own axes) share 1 - kOtherAxesShare of the error and
// the `others` the rest, evenly within each group; a called interval hands its share on to the
// rest of its group, and once a group is all called the other takes the whole. Each interval
// is restated at the level it was tested at last, so it leaves out "no change" exactly when it
// is called. Unknown intervals are not in the family.
void weighted_holm(const std::vector<Interval*>& own, const std::vector<Interval*>& others,
                   double confidence = 0.95);

// How much more measuring would narrow a comparison: `more_pairs` more pairs of runs (or
// switchback blocks) of the stage and the reference, and what it could see then. Its standard
// error shrinks as sqrt(1/stage + 1/reference) and its degrees of freedom grow by one per pair.
struct Narrowing {
  int more_pairs = 0;  // 0: not worth stating (it can already see `target`, or no interval)
  double detectable = 0;
};
// The fewest pairs that bring what `interval` could see to `target` (at most `max_pairs`;
// past it, what max_pairs would give). `stage` and `reference`: the samples it rests on.
Narrowing narrowing(const Interval& interval, double stage, double reference, double target = 0.25,
                    int max_pairs = 40);

// Below this many degrees of freedom of its noise, the run count and not the machine limits
// what an interval can see: Student's t at 95% is 12.7 at one, 4.3 at two and 3.2 at three,
// and more under Holm's rule over a stage's axes. The report and a lesson's reveal say so.
inline constexpr double kFewDegreesOfFreedom = 3;
// "1 degree of freedom", "2 degrees of freedom" (rounded to a whole number).
std::string degrees_of_freedom_text(double df);

enum class Verdict { kSlower, kFaster, kWithinNoise, kUnknown };
// Slower when the whole interval is below 1, faster when above, else within noise.
Verdict verdict_of(const Interval& interval);
// "slower", "faster", "within noise (could see ±4.2%)", "no interval".
std::string format_verdict(const Interval& interval);
// What a comparison could have seen (Interval::detectable): "could see ±4.2%", "could see ±45%".
// Every "no effect" says it, so "no effect" and "too noisy to tell" read differently.
std::string format_could_see(double detectable);
// The level an interval is stated at: "95%", "97.5%", "99.4%" (Holm's rule and the looks of
// a precision run state theirs above 95%).
std::string format_confidence(double confidence);
// "[-18.0%, -6.1%]", "6.1–7.4x slower", "2.1–2.4x faster"; "—" when unknown.
std::string format_interval(const Interval& interval);
// The change of `ratio` = new / reference, worded for a reader:
//   1.04 -> "+4.0%", 0.149 -> "-85.1% (6.7x slower)", 0.002 -> "500x slower",
//   2.5 -> "2.5x faster". Non-finite or negative ratios give "n/a".
std::string format_change(double ratio);

}  // namespace pgslow::results
