#pragma once
// `pgslow bisect`'s result as plain structs. runner/search fills a BisectResult from its search
// (search::to_report); report/bisect_view.h renders it (console, Markdown, JSON). Nothing here
// knows the catalog, the server or the search.

#include <optional>
#include <string>
#include <vector>

#include "results/model.h"

namespace pgslow::results {

enum class BisectVerdict { kGood, kBad, kUncertain };
std::string to_string(BisectVerdict v);  // "fast", "slow", "uncertain"

// One call of the measurer: a configuration and its samples.
struct BisectRun {
  int number = 0;                  // 1-based, in the order measured
  std::string purpose;             // "good", "bad", "search", "solo", "remaining"
  int round = 0;                   // search round (0: levels, isolate)
  std::vector<std::string> knobs;  // the candidate changes applied over good
  std::vector<double> tps;         // one sample per run, cumulative for this configuration
  int new_runs = 0;                // runs this call added (repeats near the threshold)
  double tps_level = 0;            // geometric mean of all samples of this configuration
  BisectVerdict verdict = BisectVerdict::kGood;
  double seconds = 0;    // wall time of this call
  bool restart = false;  // a postmaster-context candidate changed versus the last call
};

// The solo effect of one culprit: good plus this knob alone.
struct BisectSolo {
  std::string knob;
  double tps = 0;
  double ratio = 0;  // tps / good tps
  BisectVerdict verdict = BisectVerdict::kGood;
  std::vector<AxisEffect> axes = {};  // alone vs good on every axis (empty: no runs recorded)
};

// One 1-minimal failure-inducing set found by one search round.
struct BisectCulprit {
  int round = 1;
  std::vector<std::string> knobs;
  std::vector<std::string> changes;  // "shared_buffers: 128MB -> 8MB" of each
  double tps = 0;                    // good plus the whole group
  double ratio = 0;                  // tps / good tps
  double threshold_tps = 0;          // the predicate's threshold in this round
  bool interaction = false;          // slow only together: no member is slow alone
  bool certain = true;               // no measurement of this round was ambiguous
  std::vector<BisectSolo> solo;
  std::vector<AxisEffect> axes = {};  // the group vs good on every axis (empty: no runs recorded)
};

// One difference between the good and the bad configuration, as the reader sees it.
struct BisectCandidate {
  std::string name;
  std::optional<std::string> good_value;  // nullopt: good leaves it at the server's own value
  std::string bad_value;
  bool back_to_server_value = false;  // bad does not set it: "back to the server's own value"
  bool needs_restart = false;         // pg_settings.context = postmaster
  std::string server_value;           // the live server's value before any change, when known
  std::string where;                  // file:line of the bad configuration's setting
};

// A difference that is not bisected, with the reason.
struct BisectExcluded {
  std::string name;
  std::string value;
  std::string where;
  std::string reason;
  bool invalid = false;  // an error (bad value) rather than a skip (absent in this version)
};

// What a bisect found, apart from its two lists of settings (whose type is the search's own:
// search::Result derives from this too).
struct BisectFindings {
  std::string good_label;  // as the user named them ("default", "pgtune.conf", ...)
  std::string bad_label;
  std::vector<std::string> identical;  // set in both, to the same value: not candidates

  // What the search judged by. The *_tps fields and every sample hold the search's samples,
  // where higher is better (TPS, or a cost's reciprocal: metric.h); renderings show them in
  // the metric's own terms.
  Metric metric = Metric::kTps;
  double good_tps = 0;  // geometric means of the level runs
  double bad_tps = 0;
  double noise = 0;  // relative standard deviation of one run (log scale), floored
  double threshold_tps = 0;
  bool clearly_different = false;
  std::string conclusion;  // one sentence: what was found, or why nothing was bisected

  std::vector<BisectCulprit> culprits;
  std::optional<double> remaining_tps;  // bad without every culprit, when measured
  std::optional<double> remaining_ratio;
  // Bad without every culprit against good on every axis, when measured: what the changes
  // blamed for nothing cost where the metric did not move.
  std::vector<AxisEffect> remaining_axes = {};
  std::optional<Attribution> attribution;  // --isolate: each change's part (attribution.h)

  std::vector<BisectRun> runs;
  int total_runs = 0;   // benchmark runs (samples), good and bad included
  int search_runs = 0;  // runs of the search rounds (the ddmin predicate), levels excluded
  int restarts = 0;     // configuration switches that changed a postmaster-context candidate
  double wall_seconds = 0;
  bool uncertain = false;  // some verdict stayed ambiguous after the extra repeats
  // The noise grew during the first round until good and bad could no longer be told apart
  // within max_repeats runs per configuration: the search stopped, nothing is blamed.
  bool too_noisy = false;
  // Good's latest level against its first (-0.08: the machine got 8% slower during the bisect);
  // good is measured again between rounds and near the threshold.
  double drift = 0;
  // Bad vs good on every axis (results/axes.h) from their level runs, Holm's rule over them:
  // what the bad configuration costs where the metric did not move. Empty: no runs recorded.
  std::vector<AxisEffect> axes = {};
};

struct BisectResult : BisectFindings {
  std::vector<BisectCandidate> candidates;
  std::vector<BisectExcluded> excluded;
};

}  // namespace pgslow::results
