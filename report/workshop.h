#pragma once
// What workshop mode shows (docs/workshop.md): a measured effect with its interval and the
// transactions behind it, the reveal of a lesson (each prediction next to the measurement,
// the evidence that explains the gap) and a mystery's clues. Plain structs in, text out.

#include <cstdint>
#include <map>
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "report/views.h"
#include "results/cliff.h"
#include "results/stats.h"
#include "results/summary.h"

namespace pgslow::report {

// The change of a stage's throughput against a reference stage, with its 95% interval: the
// report's own comparison (results/summary.h compare_runs, results/stats.h log_ratio_interval
// and verdict_of), so a lesson's reveal and the run's report agree on every stage.
struct Effect {
  double ratio = 0;   // stage TPS / reference TPS; 0: the stage completed nothing
  Interval interval;  // of the ratio (unknown when the ratio is 0)
  Verdict verdict = Verdict::kUnknown;
  std::uint64_t transactions = 0;            // the stage's, all repeats
  std::uint64_t reference_transactions = 0;  // the reference's
  bool known = false;                        // false: one of the stages did not run
  // Every axis against the run's baseline, as the run's report states it (add_axes_in_run),
  // with the verdict naming its axis; empty against another stage. Read back from JSON with
  // their intervals (the verdict computed again).
  std::vector<AxisChange> axes;
  AxesVerdict axes_verdict;
};

Effect measure_effect(const StageResult& stage, const StageResult& reference);
// The effect of `stage` (one of run.stages) as the run's report states it: against the run's
// baseline, the report's "vs baseline" (the baseline runs measured around the stage, the run's
// noise, a switchback stage's blocks); against another stage, measure_effect.
Effect effect_in_run(const Run& run, const StageResult& stage, const StageResult& reference);
// "6.7x slower (95%: 6.1x-7.4x slower; 1,234 vs 45,678 transactions)",
// "within noise (±3.1%; 4,321 vs 4,400 transactions)".
std::string describe_effect(const Effect& effect);
// When the effect is within noise and its noise rests on fewer than three degrees of freedom
// (one run of each side and the baseline measured again: one): what would answer the question,
// "the noise rests on one degree of freedom: ... --repeats 3 ..."; empty otherwise.
std::string few_runs_hint(const Effect& effect);
// `stage` (one of run.stages) against the run's baseline on every axis (results/summary.h
// summarize: the design the stage used, Holm's rule over its axes), into `effect`.
void add_axes_in_run(Effect& effect, const Run& run, const StageResult& stage);
// "every axis: costs +11.0% CPU/tx [...]; TPS within noise (...)", then each axis but TPS,
// wrapped at `width` (the caller indents them); empty without axes.
std::vector<std::string> effect_axes_lines(const Effect& effect, std::size_t width);
// "6.7x slower", "+12.0%": the ratio only, in the words of format_change.
std::string describe_ratio(double ratio);

// Mean latency of all repeats, and what Little's law predicts for a closed loop
// (clients / TPS): the lessons check one against the other.
struct LatencyCheck {
  double mean_us = 0;
  double p50_us = 0;
  double p99_us = 0;
  double tps = 0;
  int clients = 0;
  double littles_law_us = 0;  // clients / tps; 0 for fixed-rate stages
};
LatencyCheck latency_check(const StageResult& stage);

// One participant's answer to one prediction question, with its score once measured.
struct PredictionRow {
  std::string participant;
  std::string question;
  std::string answer;
  std::string verdict;  // "right direction, within 2x", "wrong direction", "correct" ...
  // An effect prediction as a throughput ratio ("3x slower": 1/3, "no change": 1); 0 when the
  // answer is not one (a choice, or no factor: "slower").
  double predicted_ratio = 0;
  // A guess of where a cliff begins: how far off it was, as a factor on the log scale (1: it
  // lies between the last safe value and the first harmful one; 2: twice too high or too
  // low). 0 when the answer is not one (a choice, or not a value of the knob).
  double off_by = 0;
};

struct EvidenceRow {
  std::string label;      // "hit ratio"
  std::string reference;  // "99.9%"
  std::string stage;      // "70.5%"
};

// The reveal of a lesson: what was measured, who predicted what, and why.
struct Reveal {
  std::string lesson;
  std::string reference_stage;
  std::string stage;
  Effect effect;
  std::vector<std::pair<std::string, LatencyCheck>> latency;  // per stage shown
  std::vector<PredictionRow> predictions;
  std::vector<EvidenceRow> evidence;
  std::string gap;  // the lesson's explanation of the gap between guess and measurement
};
// The reveal as console text (the lesson prints it), Markdown and JSON (reveal.md and
// reveal.json in the lesson's results folder).
void render_reveal(const Reveal& reveal, std::ostream& out);
void render_reveal_markdown(const Reveal& reveal, std::ostream& out);
nlohmann::ordered_json reveal_to_json(const Reveal& reveal);

// The reveal of a cliff lesson (`pgslow lesson cliff-cache`): the cliff the search found, each
// guess of where it begins scored by its distance on the log scale, and what the evidence and
// the backends' waits did at the knee (the last safe value against the first harmful one).
struct CliffReveal {
  std::string lesson;
  results::CliffResult cliff;
  std::vector<PredictionRow> predictions;
  std::string safe;                   // "192MB (last safe)": the evidence's reference column
  std::string harmful;                // "176MB (first harmful)"
  std::vector<EvidenceRow> evidence;  // the lesson's keys, then the largest waits
  std::string gap;
};
void render_cliff_reveal(const CliffReveal& reveal, std::ostream& out);
void render_cliff_reveal_markdown(const CliffReveal& reveal, std::ostream& out);
nlohmann::ordered_json cliff_reveal_to_json(const CliffReveal& reveal);

// `pgslow lesson` without a name: the lessons there are.
struct LessonSummary {
  std::string name;
  int minutes = 0;  // 0: the lesson does not say
  std::string title;
};
struct LessonList {
  std::vector<LessonSummary> lessons;
};
void render_lesson_list_console(const LessonList& list, std::ostream& out);
void render_lesson_list_markdown(const LessonList& list, std::ostream& out);
nlohmann::ordered_json lesson_list_to_json(const LessonList& list);

// A mystery's clues (`pgslow mystery clues`): the symptom with its interval, the evidence that
// moved, where the backends' time went (difficulty 1-2), the server log lines a DBA would
// read. The mystery redacts the rendered text (workshop/mystery.h), in every format.
struct MysteryClues {
  int difficulty = 1;
  Effect effect;  // the mystery stage against the server as found
  LatencyCheck before;
  LatencyCheck now;
  std::vector<EvidenceRow> evidence;
  std::vector<EvidenceRow> waits;      // empty at difficulty 3: the player samples alone
  std::vector<std::string> log_lines;  // the last lines of the measured window's log
  std::size_t log_lines_total = 0;     // how many there were before the last were kept
  bool decoys = false;                 // some harmless settings were changed too
};
void render_clues_console(const MysteryClues& clues, std::ostream& out);
void render_clues_markdown(const MysteryClues& clues, std::ostream& out);
nlohmann::ordered_json clues_to_json(const MysteryClues& clues);

// `pgslow mystery reveal`: the answer, the decoys, the measured effect, the guesses.
struct MysterySetting {
  std::string knob;
  std::string value;
  bool key = false;  // a guess must name it
};
struct MysteryReveal {
  std::string answer;  // "the tiny-cache preset"
  std::vector<MysterySetting> culprits;
  std::vector<MysterySetting> decoys;
  Effect effect;
  int guesses = 0;
  bool solved = false;
};
void render_mystery_reveal_console(const MysteryReveal& reveal, std::ostream& out);
void render_mystery_reveal_markdown(const MysteryReveal& reveal, std::ostream& out);
nlohmann::ordered_json mystery_reveal_to_json(const MysteryReveal& reveal);

// How much of the lost performance a fix recovers, on the log scale of throughput:
// log(fix / broken) / log(healthy / broken). 1 is all of it, 0 nothing, above 1 more than the
// healthy server had. Its bounds come from both effects' 95% intervals taken together
// (conservative: each bound pairs the extremes of the two).
struct Recovered {
  bool known = false;  // false: the fault itself was within noise in this measurement
  double share = 0;
  double low = 0;
  double high = 0;
};
// The share of `fix_vs_broken` in the fault `healthy_vs_broken`.
Recovered recovered_share(const Effect& fix_vs_broken, const Effect& healthy_vs_broken);
// "94% [81%, 107%]"; "unknown (the fault was within noise)".
std::string describe_recovered(const Recovered& r);

// One change of a fix with more than one: the fix against the fix without it (leave one out),
// so a change that only helps together with another is not called useless.
struct FixChange {
  std::string knob;
  std::string value;
  Effect without;            // the whole fix against the fix without this change
  Recovered share;           // this change's part of the recovery
  bool did_nothing = false;  // removing it changed nothing measurable
};

// `pgslow mystery fix KNOB=VALUE...`: a fix measured against the broken configuration and the
// healthy one, in the same session, through the same seam.
struct FixResult {
  std::string who;                   // --name; "" for the terminal's own
  std::vector<FixChange> changes;    // every change run; `without` only for fixes of 2 or more
  std::vector<std::string> refused;  // "shared_buffers=1TB: needs a restart ..." (not run)
  Effect fault;                      // healthy against broken: what there was to recover
  Effect vs_broken;
  Effect vs_healthy;
  Recovered recovered;
  bool ran = false;  // false: every change was refused
  // The changes that did nothing (FixChange::did_nothing).
  std::size_t did_nothing() const;
};
void render_fix_console(const FixResult& fix, std::ostream& out);
void render_fix_markdown(const FixResult& fix, std::ostream& out);
nlohmann::ordered_json fix_to_json(const FixResult& fix);
// Reads what fix_to_json wrote; `source` names it in errors (ReadError).
FixResult fix_from_json(const nlohmann::ordered_json& json, const std::string& source);

// The fixes of one mystery, ranked: by recovered performance, fixes whose recoveries are
// within each other's intervals counted as equal, then by how few knobs they touch.
struct FixScoreboard {
  std::vector<FixResult> fixes;  // ranked, best first
};
// Ranks `fixes` (see FixScoreboard); fixes that did not run go last, in their order.
FixScoreboard rank_fixes(std::vector<FixResult> fixes);
void render_scoreboard_console(const FixScoreboard& board, std::ostream& out);
void render_scoreboard_markdown(const FixScoreboard& board, std::ostream& out);
nlohmann::ordered_json scoreboard_to_json(const FixScoreboard& board);

// Evidence rows of `stage` against `reference` for the given keys (all moved keys when
// empty), in catalog order; keys either stage lacks are left out.
std::vector<EvidenceRow> evidence_rows(const StageResult& stage, const StageResult& reference,
                                       const std::vector<std::string>& keys);
// Where the backends spent their time: the stage's `top` largest waits as shares of backend
// time, each beside the reference's share ("backend time in IO:DataFileRead", "14%", "33%";
// the label is `label_prefix` and the wait); empty unless both were sampled. The lesson's
// reveal and the mystery's clues.
std::vector<EvidenceRow> wait_rows(const StageResult& stage, const StageResult& reference,
                                   std::size_t top = 3,
                                   const std::string& label_prefix = "backend time in ");
// The same from two profiles (a cliff's points): empty unless both were sampled.
std::vector<EvidenceRow> wait_rows(const std::optional<WaitProfile>& stage,
                                   const std::optional<WaitProfile>& reference, std::size_t top = 3,
                                   const std::string& label_prefix = "backend time in ");
// Evidence rows from two sets of already normalised values (a cliff's points), for `keys`.
std::vector<EvidenceRow> evidence_rows(const std::map<std::string, double>& stage,
                                       const std::map<std::string, double>& reference,
                                       const std::vector<std::string>& keys);

// The instructor's record (`--record DIR`): each lesson's predictions next to the measured
// effect, the room's calibration, and each mystery's answer with its fixes, kept in
// DIR/record.json and DIR/record.md across the session's commands.
struct RecordedLesson {
  std::string lesson;
  std::string title;
  std::string recorded_at;  // UTC, ISO 8601
  std::string stage;
  std::string reference_stage;
  Effect effect;
  std::vector<PredictionRow> predictions;
  std::vector<EvidenceRow> evidence;
};
// How far the room's effect predictions were off, as a factor on the log scale: the median of
// exp(|ln(predicted / measured)|) over the predictions that name a ratio (1: spot on; 2: off by
// 2x either way). factor 0: none to judge.
struct Calibration {
  double factor = 0;
  std::size_t predictions = 0;  // the predictions it is the median of
};
Calibration calibration(const RecordedLesson& lesson);
// A lesson's record from its reveal.
RecordedLesson record_lesson(const Reveal& reveal, const std::string& title,
                             const std::string& recorded_at);
// A cliff lesson's: the stage is the cliff's knob and headline, the effect the first harmful
// value's (unknown without a cliff), the calibration the guesses' distances.
RecordedLesson record_cliff_lesson(const CliffReveal& reveal, const std::string& title,
                                   const std::string& recorded_at);

struct RecordedMystery {
  std::string recorded_at;
  int difficulty = 0;
  MysteryReveal answer;
  FixScoreboard fixes;
};

struct SessionRecord {
  std::vector<RecordedLesson> lessons;
  std::vector<RecordedMystery> mysteries;
};
void render_record_console(const SessionRecord& record, std::ostream& out);
void render_record_markdown(const SessionRecord& record, std::ostream& out);
nlohmann::ordered_json record_to_json(const SessionRecord& record);
// Reads what record_to_json wrote; `source` names it in errors (ReadError).
SessionRecord record_from_json(const nlohmann::ordered_json& json, const std::string& source);

}  // namespace pgslow::report
