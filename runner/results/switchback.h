#pragma once
// The statistics of a switchback run (docs/reading-the-report.md "Switchback runs"): one
// continuous run of the workload while the configuration switches between the reference and
// the stage every few seconds. The effect comes from adjacent blocks, so the machine's drift
// and bursts of other load, which move both neighbours alike, cancel.
//
// The schedule is pure (no clock, no server), so the seeded simulation in the unit tests
// drives exactly the logic the live run uses.

#include <optional>
#include <utility>
#include <vector>

#include "results/axes.h"
#include "results/model.h"
#include "results/stats.h"

namespace pgslow::results {

// The stage's figure against the reference's as a ratio (stage / reference) with its interval
// at `confidence`. Each stage block is compared with the mean of the reference blocks right
// before and after it (a linear drift cancels); the mean of those log differences gets a
// t interval whose standard error allows for the neighbours two differences share. Unknown
// (known = false) with fewer than three stage blocks, or when the figure was not measured.
Interval switchback_interval(const std::vector<SwitchbackBlock>& blocks, const Axis& axis,
                             double confidence = 0.95);
// Every axis the blocks measured with a known interval, Holm's rule over them at `confidence`
// (axes.h holm_over_axes), in the axes' order.
std::vector<AxisInterval> switchback_axes(const std::vector<SwitchbackBlock>& blocks,
                                          double confidence = 0.95);

// Every axis of separate runs that alternate between the reference and a configuration
// (`stage` marks the configuration's runs: B P B P ... B; nullptr: a run with no measurement),
// each run against the reference runs
// on either side of it (alternating_interval), Holm's rule over those with an interval at
// `confidence`, in the axes' order: a cliff point's axes, or any interleaved design's.
std::vector<AxisInterval> alternating_axes(const std::vector<const Measurement*>& runs,
                                           const std::vector<bool>& stage,
                                           double confidence = 0.95);

// The same comparison over any series that alternates between the reference and the stage,
// one log value per element (nullopt: not measured), `stage` marking the stage's: separate
// runs interleaved with the baseline (`pgslow cliff`) as well as a switchback run's blocks.
// With `neighbour_cpu` (each element's share of the machine other programs took, Measurement::
// neighbour_cpu) known for every element, and differing between the two sides by more than
// kAdjustedSpread over at least kFewestAdjustedDifferences differences (and about zero on
// average: kNeighbourMeanLimit), the differences are
// regressed on the neighbours' and the interval is the effect at equal neighbour load, with one
// degree of freedom less (Interval::neighbour_adjusted): a neighbour busy during some blocks and
// idle during others is subtracted rather than counted as noise.
Interval alternating_interval(const std::vector<std::optional<double>>& log_values,
                              const std::vector<bool>& stage, double confidence = 0.95,
                              const std::vector<std::optional<double>>& neighbour_cpu = {});
// The regression: nullopt when it does not apply (too few differences, too even a neighbour).
std::optional<Interval> adjusted_interval(const std::vector<double>& diffs,
                                          const std::vector<double>& covariate_diffs,
                                          double confidence = 0.95);
// The neighbours' share must vary by this much (a standard deviation of its differences, as a
// share of the machine) before it is subtracted: below it, the slope is noise and the degree of
// freedom it costs buys nothing.
inline constexpr double kAdjustedSpread = 0.02;
inline constexpr std::size_t kFewestAdjustedDifferences = 5;
// ... and average within this many standard errors of zero: a share that differs between the
// sides on average moves with the stage, and subtracting it would subtract part of the effect.
inline constexpr double kNeighbourMeanLimit = 2;
// Its parts, for a caller that pools the noise over several series: the differences (each
// stage value minus the mean of its reference neighbours), one series' estimate of a
// difference's variance (corrected for the neighbours two differences share), and the
// interval of the differences' mean given a variance estimate with `df` degrees of freedom.
std::vector<double> alternating_differences(const std::vector<std::optional<double>>& log_values,
                                            const std::vector<bool>& stage);
// The same differences, and `covariate`'s over the same elements (empty unless every element
// used has one).
std::pair<std::vector<double>, std::vector<double>> alternating_differences(
    const std::vector<std::optional<double>>& log_values, const std::vector<bool>& stage,
    const std::vector<std::optional<double>>& covariate);
double difference_variance(const std::vector<double>& diffs);
Interval differences_interval(const std::vector<double>& diffs, double variance, double df,
                              double confidence = 0.95);

// A stage of separate runs takes more pairs by default until TPS is called, or TPS and its own
// axes are each called or within this (SwitchbackDesign::resolve).
inline constexpr double kResolvedWithin = 0.10;

// How a switchback run is laid out and when it may stop.
struct SwitchbackDesign;
// The looks of a stage of separate runs that alternates with the baseline, after its `repeats`
// pairs (each pair `pair_s` seconds, the stage's run and the baseline's): --precision's until
// the watched axis is that narrow (`precision` > 0), else resolving (until TPS is called, or it
// and its own axes are each called or within ±kResolvedWithin), within `budget_s` of pairs and,
// resolving, at most twice its repeats. Separate runs look from 2 pairs on.
SwitchbackDesign alternating_looks(double precision, int repeats, double budget_s, double pair_s);

struct SwitchbackDesign {
  double block_s = 4;    // one configuration's block
  double settle_s = 1;   // dropped at the start of each block
  int min_pairs = 4;     // stage blocks before the first look
  int max_pairs = 10;    // the budget: stage blocks at most
  double precision = 0;  // stop once the watched axis's half-width is at most this; 0: never
  // The axis --precision watches (--metric): an axis key, or "auto": TPS or CPU/tx, whichever
  // reaches the precision first (axes.h precision_reached).
  std::string axis = "auto";
  double confidence = 0.95;
  // Separate runs that look until the headline is resolved (TPS called, or TPS and the stage's
  // own axes each called or within ±precision), as every such stage does by default; the first look
  // may then come after `fewest_pairs`, which a switchback run keeps at three (an interval needs
  // three stage blocks) and separate runs, whose noise the baseline's runs give, lower to two.
  bool resolve = false;
  int fewest_pairs = 3;
};

// The numbers of stage blocks after which a run with `design` looks at its interval: with a
// precision (or resolving), min_pairs, then about 1.5 times the previous, and max_pairs last;
// without, max_pairs alone. Few looks keep each look's confidence high.
std::vector<int> look_schedule(const SwitchbackDesign& design);

// 95% spread over `looks` looks (Bonferroni): each look's interval is at 1 - 0.05 / looks. The
// rule before the looks spent their 5% unevenly (look_confidence): a report that kept no
// confidence of its own, and the cliff search's points, state theirs so.
double confidence_over_looks(int looks, double confidence = 0.95);

// The blocks of one configuration (`stage` true: the stage's) taken together as one
// measurement: kept seconds, transactions, CPU, one TPS and p99 value per block as its series,
// and as its TPS the blocks' geometric mean (the figure the stage's effect compares).
Measurement blocks_measurement(const std::vector<SwitchbackBlock>& blocks, bool stage);

// A switchback run's result in `stage` (both labs assemble it here): its stage blocks taken
// together (`stage_blocks`, blocks_measurement's with what the lab measured beside the blocks)
// as its one repeat when they committed anything, the evidence window that repeat covered, and
// every block in `stage.switchback`.
void set_switchback_result(StageResult& stage, Switchback result, Measurement stage_blocks);

// The confidence of the interval at the look after `pairs` pairs of a run with `design`: the
// 5% spent over its looks as O'Brien and Fleming's boundary spends it (stats.h
// spending_confidences), little at the early looks and nearly all at the last, so the interval
// the run stops with covers at 95% whatever made it stop, and a run that goes to its budget is
// stated near 96% where an even split over four looks stated 98.75%. Before the first look: the
// first look's.
double look_confidence(const SwitchbackDesign& design, int pairs);

// The run's progress through its blocks, driven by the time since the measured window began.
// Block k covers [k, k + 1) * block_s; even blocks run the reference, odd ones the stage; the
// first settle_s of each is not counted. The run ends after a reference block, so every stage
// block has a reference block on both sides.
class SwitchbackRun {
 public:
  explicit SwitchbackRun(SwitchbackDesign design);

  struct Position {
    int block = 0;
    bool stage = false;     // the stage's configuration runs in this block
    bool counting = false;  // past the block's settling time
  };
  Position at(double elapsed_s) const;

  // The kept part of block `block()` (the next one to end) has ended with these figures.
  // Returns true when the run is over: the budget is spent, or a look found the watched axis's
  // interval as narrow as the precision asked for.
  bool add(SwitchbackBlock block);
  int block() const { return static_cast<int>(blocks_.size()); }
  // Whether adding the next block is a look (and may end the run).
  bool looks_next() const;
  // After the run: each block's p95/p99 from the complete accounts (`latency[b]` is block b's),
  // for a block whose look did not get them while the run went on.
  void set_latency(const std::vector<LatencySummary>& latency);
  bool done() const { return done_; }

  // The result so far: the blocks, the design and why it stopped ("budget", "precision",
  // "fixed"; "interrupted" when the run ended before it was done).
  Switchback result() const;
  const SwitchbackDesign& design() const { return design_; }

 private:
  SwitchbackDesign design_;
  std::vector<int> looks_;
  // Each look's confidence, worked out once: add() runs on the driver's controlling thread.
  std::vector<double> confidences_;
  std::vector<SwitchbackBlock> blocks_;
  bool done_ = false;
  bool reached_ = false;
};

// The confidence an interval over `switchback`'s blocks is stated at (per look).
double switchback_confidence(const Switchback& switchback);

}  // namespace pgslow::results
