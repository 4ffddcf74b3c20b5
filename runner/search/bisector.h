#pragma once
// Which candidate changes make the bad configuration slow: delta debugging (ddmin, Zeller and
// Hildebrandt 2002) over the difference between a good and a bad configuration, with a
// noise-aware predicate "this configuration is slow". docs/bisect.md explains the method.
//
//   SimulatedServer sim(...);                // or experiment::LabMeasurer over a LabSession
//   Bisector b(sim, candidates, options);
//   Result r = b.run();
//
// attribution.h builds on this search: each knob's own effect inside a stage
// (`pgslow bisect --isolate` and `pgslow run --attribute`).

#include <functional>
#include <map>
#include <optional>
#include <vector>

#include "results/metric.h"
#include "search/measurer.h"
#include "search/result.h"

namespace pgslow::search {

struct Options {
  // What the Measurer's samples are (results/metric.h): higher is better whatever the metric,
  // so only the words of the result depend on it.
  results::Metric metric = results::Metric::kTps;
  int level_repeats = 3;     // runs of good and bad: their levels and the noise
  int max_repeats = 5;       // runs of one configuration at most, when it lands near the threshold
  double band_sigmas = 2.0;  // a verdict needs the mean this many standard errors from threshold
  double min_noise = 0.01;   // floor of the per-run noise (log scale): 3 runs underestimate it
  double min_effect = 0.10;  // bad must be at least 10% slower than good to bisect at all
  std::optional<double> threshold_tps;  // a sample; default: the geometric midpoint of good and bad
  // Runs of good and bad already made elsewhere (a scenario's baseline and stage): reused as
  // the first samples of each level, topped up to level_repeats.
  std::vector<double> known_good;
  std::vector<double> known_bad;
  int max_rounds = 4;  // independent culprit groups searched one after another
  std::function<void(const RunRecord&)> on_run;  // progress: called after every Measurer call
};

class Bisector {
 public:
  Bisector(Measurer& measurer, std::vector<Candidate> candidates, Options options = {});
  Result run();

 private:
  using Subset = std::vector<int>;  // sorted candidate indices

  struct Level {
    double log_mean = 0;
    std::vector<double> samples;
  };

  const std::vector<double>& measure(const Subset& s, int runs, const std::string& purpose);
  Level measure_level(const Subset& s, const std::vector<double>& known,
                      const std::string& purpose);
  void refresh_good(int runs, int window);
  Verdict classify(const Subset& s, const std::string& purpose);
  Subset ddmin(Subset c);
  std::vector<Subset> order_for_restarts(std::vector<Subset> tests) const;
  Subset restart_part(const Subset& s) const;
  bool clearly_slower(const Level& slow) const;
  // After good was measured again: can the search still tell bad from good with the noise as
  // it is now? False stops the first round (Result::too_noisy).
  bool still_separable() const;
  // Bad without every culprit found so far, against good: is it still slower (another round)?
  struct Remainder {
    bool slower = false;
    double paired_log_effect = 0;  // mean log(remainder / good around it)
  };
  Remainder judge_remainder(const Subset& remaining);
  // False when the round found nothing that reproduces the slowdown (no group is added).
  bool search_round(const Subset& failing, double slow_log_mean);
  double log_mean_of(const Subset& s) const;
  void flush_progress();
  // The conclusion's sentence: nothing to bisect, too noisy to judge, or the culprits.
  std::string no_difference_sentence() const;
  std::string too_noisy_sentence() const;
  std::string culprits_sentence() const;

  Measurer& measurer_;
  Options options_;
  Result result_;
  std::map<Subset, std::vector<double>> samples_;  // every sample ever taken, per subset
  std::optional<Subset> last_;                     // the configuration measured last
  double good_log_ = 0;                            // good's level now (its latest runs)
  double first_good_log_ = 0;                      // good's level at the start
  double sigma_ = 0;
  Level bad_;  // bad's level runs
  double threshold_log_ = 0;
  int round_ = 0;
  bool round_uncertain_ = false;
  bool unreproduced_ = false;  // a later round found no part of the remainder slow
  std::size_t reported_ = 0;   // runs already passed to options_.on_run
};

}  // namespace pgslow::search
