#pragma once
// Mystery mode (docs/workshop.md): pgslow hides a degradation, participants find it from the
// evidence. The answer is drawn from a table of culprits (presets, or at difficulty 3 a
// random pair of knob changes) with harmless decoys from difficulty 2 on. It is applied under
// the journal rules like `pgslow apply` (journal first, `pgslow recover` after a kill -9),
// with the journal sealed (apply::Journal::hidden) and the answer kept in a sealed file of
// its own (<workdir>/mystery.json), so neither `status`, `plan` nor `cat journal.json` gives
// it away. Every text a participant sees passes through redact().

#include <cstdint>
#include <filesystem>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include "experiment/run.h"
#include "knobs/catalog.h"
#include "knobs/validate.h"
#include "report/workshop.h"
#include "results/model.h"

namespace pgslow::workshop {

struct MysteryAnswer {
  std::string label;                     // "the tiny-cache preset", for the reveal only
  std::vector<knobs::Setting> culprits;  // what makes it slow
  std::vector<std::string> key;          // the knobs a guess must name to solve it
  std::vector<knobs::Setting> decoys;    // harmless changes (difficulty 2 and up)
};

// The answer for a difficulty (1-3) and seed; the same pair always gives the same answer.
// Knobs the catalog lacks are left out of the choice.
MysteryAnswer choose_mystery(int difficulty, std::uint64_t seed, const knobs::Catalog& catalog);

struct MysteryState {
  int difficulty = 1;
  std::uint64_t seed = 0;
  std::string started_at;
  MysteryAnswer answer;
  int guesses = 0;
  bool solved = false;
  results::Run measured;                 // stages "baseline" (the server as found) and "mystery"
  std::vector<report::FixResult> fixes;  // `pgslow mystery fix`, in the order proposed
};

std::filesystem::path mystery_path(const std::filesystem::path& workdir);
// Sealed on disk; load returns nullopt when there is no mystery.
void save_mystery(const std::filesystem::path& workdir, const MysteryState& state);
std::optional<MysteryState> load_mystery(const std::filesystem::path& workdir);
void remove_mystery(const std::filesystem::path& workdir);

// Text with every knob name of the catalog, every preset name and the answer's label
// replaced by "[a setting]" / "[hidden]" (whole words; "autovacuum_runs" is a word of its own).
std::string redact(const std::string& text, const knobs::Catalog& catalog,
                   const MysteryAnswer& answer);

// The clues: the symptom with its interval, the evidence that moved, the server log lines of
// the measured window (only lines a DBA would read; settings changes left out), not redacted.
report::MysteryClues mystery_clues(const MysteryState& state);
// The clues in a format of the registry ("console", "md", "json"), redacted: what a
// participant sees.
std::string clues_text(const MysteryState& state, const knobs::Catalog& catalog,
                       std::string_view format);

// Scores a guess by precision and recall, so that naming every knob (a shotgun) loses:
// recall is the share of the key knobs named, precision the share of the names that are part
// of the answer (its culprits). Solved when every key knob is named and at least
// kSolvedPrecision of the names are right: one key knob and one wrong name is not solved.
constexpr double kSolvedPrecision = 2.0 / 3.0;
struct GuessScore {
  bool solved = false;
  std::size_t named_culprits = 0;  // guessed knobs that are part of the answer
  std::size_t named_others = 0;    // guessed knobs that are not
  std::size_t named_keys = 0;      // key knobs named
  double precision = 0;            // named_culprits / names
  double recall = 0;               // named_keys / key knobs
  std::string text;
};
GuessScore score_guess(const MysteryAnswer& answer, const std::vector<std::string>& guess);

// The reveal: the answer, the decoys, the effect with its interval.
report::MysteryReveal mystery_reveal(const MysteryState& state);

// `pgslow mystery fix`: the fix's figures from its measured stages, all of one session: the
// healthy configuration (the server as found), the broken one (the mystery), the broken one
// with the fix, and for a fix of two or more changes the fix without each change, in the order
// of `changes`. A change did nothing when the fix is not measurably faster with it than
// without it (for a one-change fix: than the broken server), or when its whole interval
// recovers less than a tenth of the loss.
report::FixResult score_fix(const std::vector<knobs::Setting>& changes,
                            const results::StageResult& healthy, const results::StageResult& broken,
                            const results::StageResult& fix,
                            const std::vector<results::StageResult>& without);

// A fix's changes sorted before anything runs: those to measure, and those reported instead
// ("KNOB=VALUE: why"): the server refuses them, or they need a restart the room did not plan
// for (`restarts_planned`: the mystery needed one itself, or --allow-restart). Validated as laid
// over the broken configuration, as they would be applied.
struct ScreenedFix {
  std::vector<knobs::Setting> accepted;
  std::vector<std::string> refused;
};
ScreenedFix screen_fix(const std::vector<knobs::Setting>& proposed,
                       const std::vector<knobs::Setting>& broken, const knobs::Catalog& catalog,
                       const knobs::ServerSettings& live, bool restarts_planned);

// The scenario a mystery is measured with: a small write-heavy workload whose symptoms show
// within seconds on 2 cores; one stage, "mystery", after the baseline.
scenario::Scenario mystery_scenario(const MysteryAnswer& answer);

}  // namespace pgslow::workshop
