#pragma once
// What a bisect found, as plain structs: the console, Markdown and JSON renderings read only
// these (the same rule as report/: renderers never see the server).

#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "bisect/setting.h"
#include "report/model.h"

namespace pgslow::bisect {

// One difference between the good and the bad configuration.
struct Candidate {
  Setting change;                         // the bad configuration's value, applied over good
  std::optional<std::string> good_value;  // nullopt: good leaves it at the server's own value
  // Bad does not set it (only good does): the change is "back to the server's own value",
  // and change.value is that value as the live server reported it before any change.
  bool back_to_server_value = false;
  bool needs_restart = false;  // pg_settings.context = postmaster
  std::string server_value;    // the live server's value before any change, when known

  // "shared_buffers: 128MB -> 8MB", "work_mem: 64MB -> (server value 4MB)".
  std::string describe() const;
};

// A difference that is not bisected, with the reason (absent in this version, invalid value).
struct Excluded {
  Setting setting;
  std::string reason;
  bool invalid = false;  // an error (bad value) rather than a skip (absent in this version)
};

enum class Verdict { kGood, kBad, kUncertain };
std::string to_string(Verdict v);

// One call of the Measurer: a configuration and its samples.
struct RunRecord {
  int number = 0;                  // 1-based, in the order measured
  std::string purpose;             // "good", "bad", "search", "solo", "remaining"
  int round = 0;                   // search round (0: levels, isolate)
  std::vector<std::string> knobs;  // the candidate changes applied over good
  std::vector<double> tps;         // one sample per run, cumulative for this configuration
  int new_runs = 0;                // runs this call added (repeats near the threshold)
  double tps_level = 0;            // geometric mean of all samples of this configuration
  Verdict verdict = Verdict::kGood;
  double seconds = 0;    // wall time of this call
  bool restart = false;  // a postmaster-context candidate changed versus the last call
};

// The solo effect of one culprit: good plus this knob alone.
struct SoloEffect {
  std::string knob;
  double tps = 0;
  double ratio = 0;  // tps / good tps
  Verdict verdict = Verdict::kGood;
};

// One 1-minimal failure-inducing set found by one search round.
struct CulpritGroup {
  int round = 1;
  std::vector<std::string> knobs;
  std::vector<std::string> changes;  // Candidate::describe() of each
  double tps = 0;                    // good plus the whole group
  double ratio = 0;                  // tps / good tps
  double threshold_tps = 0;          // the predicate's threshold in this round
  bool interaction = false;          // slow only together: no member is slow alone
  bool certain = true;               // no measurement of this round was ambiguous
  std::vector<SoloEffect> solo;
};

struct Result {
  std::vector<Candidate> candidates;
  std::vector<Excluded> excluded;
  std::vector<std::string> identical;  // set in both, to the same value: not candidates

  double good_tps = 0;  // geometric means of the level runs
  double bad_tps = 0;
  double noise = 0;  // relative standard deviation of one run (log scale), floored
  double threshold_tps = 0;
  bool clearly_different = false;
  std::string conclusion;  // one sentence: what was found, or why nothing was bisected

  std::vector<CulpritGroup> culprits;
  std::optional<double> remaining_tps;  // bad without every culprit, when measured
  std::optional<double> remaining_ratio;
  std::optional<report::Attribution> attribution;  // --isolate: each change's part (attribution.h)

  std::vector<RunRecord> runs;
  int total_runs = 0;   // benchmark runs (samples), good and bad included
  int search_runs = 0;  // runs of the search rounds (the ddmin predicate), levels excluded
  int restarts = 0;     // configuration switches that changed a postmaster-context candidate
  double wall_seconds = 0;
  bool uncertain = false;  // some verdict stayed ambiguous after the extra repeats
  // Good's latest level against its first (-0.08: the machine got 8% slower during the bisect);
  // good is measured again between rounds and near the threshold.
  double drift = 0;
};

void render_console(const Result& r, std::ostream& out);
void render_markdown(const Result& r, std::ostream& out);
nlohmann::json to_json(const Result& r);

}  // namespace pgslow::bisect
