#include "report/workshop.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>
#include <sstream>

#include "common/strings.h"
#include "report/axes_view.h"
#include "report/cliff_view.h"
#include "report/json.h"
#include "report/json_schema.h"
#include "report/text.h"
#include "results/evidence_info.h"
#include "results/metric.h"
#include "results/stats.h"
#include "results/summary.h"
#include "results/waits.h"

namespace pgslow::report {

// The JSON of the workshop's results as data (json_schema.h), as report.json's. Written for
// readers (the instructor's record, a room's tooling); pgslow never reads them back.
namespace json_schema {

static const char* verdict_word(Verdict v) {
  switch (v) {
    case Verdict::kSlower:
      return "slower";
    case Verdict::kFaster:
      return "faster";
    case Verdict::kWithinNoise:
      return "within noise";
    case Verdict::kUnknown:
      break;
  }
  return "no interval";
}

// The interval's bounds and the verdict beside the ratio, and the sentence a reader sees; read
// back (a mystery's scoreboard keeps its fixes), the interval and the verdict return.
static void write_effect_words(const Effect& e, Json& out) {
  if (e.interval.known) {
    out["low"] = number(e.interval.low);
    out["high"] = number(e.interval.high);
    out["df"] = number(e.interval.df);
  }
  out["verdict"] = verdict_word(e.verdict);
  out["text"] = describe_effect(e);
  if (!e.axes.empty()) {
    out["axes_verdict"] = e.axes_verdict.cell;
    out["axes_verdict_text"] = e.axes_verdict.sentence;
    out["axes"] = axes_json(e.axes);
  }
}
static void read_effect_words(Effect& e, const Json& in, const Place& place) {
  e.interval.known = read_field(e.interval.low, in, "low", place) &&
                     read_field(e.interval.high, in, "high", place);
  read_field(e.interval.df, in, "df", place);
  e.interval.ratio = e.ratio;
  std::string verdict;
  read_field(verdict, in, "verdict", place);
  for (Verdict v : {Verdict::kSlower, Verdict::kFaster, Verdict::kWithinNoise})
    if (verdict == verdict_word(v)) e.verdict = v;
  // The axes return with their intervals (a recorded session's reveal); the verdict over them
  // is computed again.
  const auto axes = in.find("axes");
  if (axes == in.end() || !axes->is_array()) return;
  for (std::size_t k = 0; k < axes->size(); ++k) {
    const Json& a = (*axes)[k];
    const Place at = place.at("axes").at(k);
    std::string key;
    read_field(key, a, "axis", at);
    const Axis* axis = find_axis(key);
    if (axis == nullptr) continue;
    Interval i;
    read_field(i.ratio, a, "ratio", at);
    read_field(i.known, a, "interval_known", at);
    if (i.known) {
      read_field(i.low, a, "low", at);
      read_field(i.high, a, "high", at);
      read_field(i.confidence, a, "confidence", at);
      read_field(i.df, a, "df", at);
    }
    e.axes.push_back({axis, change_of(i)});
  }
  e.axes_verdict = axes_verdict(e.axes);
}

template <>
struct Fields<Effect> {
  using S = Effect;
  static constexpr auto list = std::tuple{
      field("known", &S::known), field("ratio", &S::ratio),
      custom<S>(write_effect_words, read_effect_words), field("transactions", &S::transactions),
      field("reference_transactions", &S::reference_transactions)};
};

template <>
struct Fields<LatencyCheck> {
  using S = LatencyCheck;
  static constexpr auto list =
      std::tuple{field("clients", &S::clients), field("tps", &S::tps),
                 field("mean_us", &S::mean_us), field("p50_us", &S::p50_us),
                 field("p99_us", &S::p99_us),   field("littles_law_us", &S::littles_law_us)};
};

template <>
struct Fields<PredictionRow> {
  using S = PredictionRow;
  static constexpr auto quantified = [](const S& p) { return p.predicted_ratio > 0; };
  static constexpr auto located = [](const S& p) { return p.off_by > 0; };
  static constexpr auto list = std::tuple{field("participant", &S::participant),
                                          field("question", &S::question),
                                          field("answer", &S::answer),
                                          field("verdict", &S::verdict),
                                          field("predicted_ratio", &S::predicted_ratio, quantified),
                                          field("off_by", &S::off_by, located)};
};

template <>
struct Fields<EvidenceRow> {
  using S = EvidenceRow;
  static constexpr auto list = std::tuple{
      field("label", &S::label), field("reference", &S::reference), field("stage", &S::stage)};
};

// Latency per stage shown: an array of objects, each with its stage's name.
static void write_latency(const Reveal& r, Json& out) {
  Json rows = Json::array();
  for (const auto& [stage, check] : r.latency) {
    Json row = Json::object();
    row["stage"] = stage;
    row.update(write_value(check));
    rows.push_back(std::move(row));
  }
  out["latency"] = std::move(rows);
}

template <>
struct Fields<Reveal> {
  using S = Reveal;
  static constexpr auto list = std::tuple{field("lesson", &S::lesson),
                                          field("stage", &S::stage),
                                          field("reference_stage", &S::reference_stage),
                                          field("effect", &S::effect),
                                          custom<S>(write_latency, written_only<S>),
                                          field("predictions", &S::predictions),
                                          field("evidence", &S::evidence),
                                          field("gap", &S::gap)};
};

// The cliff as `pgslow cliff --json` writes it: one shape for the cliff wherever it appears.
static void write_cliff(const CliffReveal& r, Json& out) {
  out["cliff"] = Json::parse(cliff_to_json(r.cliff).dump());
}

template <>
struct Fields<CliffReveal> {
  using S = CliffReveal;
  static constexpr auto list = std::tuple{field("lesson", &S::lesson),
                                          custom<S>(write_cliff, written_only<S>),
                                          field("predictions", &S::predictions),
                                          field("safe", &S::safe),
                                          field("harmful", &S::harmful),
                                          field("evidence", &S::evidence),
                                          field("gap", &S::gap)};
};

template <>
struct Fields<LessonSummary> {
  using S = LessonSummary;
  static constexpr auto list =
      std::tuple{field("name", &S::name), field("minutes", &S::minutes), field("title", &S::title)};
};

template <>
struct Fields<LessonList> {
  using S = LessonList;
  static constexpr auto list = std::tuple{field("lessons", &S::lessons)};
};

template <>
struct Fields<MysteryClues> {
  using S = MysteryClues;
  static constexpr auto list =
      std::tuple{field("difficulty", &S::difficulty), field("effect", &S::effect),
                 field("before", &S::before),         field("now", &S::now),
                 field("evidence", &S::evidence),     field("waits", &S::waits),
                 field("log_lines", &S::log_lines),   field("log_lines_total", &S::log_lines_total),
                 field("decoys", &S::decoys)};
};

template <>
struct Fields<MysterySetting> {
  using S = MysterySetting;
  static constexpr auto list =
      std::tuple{field("knob", &S::knob), field("value", &S::value), field("key", &S::key)};
};

template <>
struct Fields<MysteryReveal> {
  using S = MysteryReveal;
  static constexpr auto list = std::tuple{
      field("answer", &S::answer), field("culprits", &S::culprits), field("decoys", &S::decoys),
      field("effect", &S::effect), field("guesses", &S::guesses),   field("solved", &S::solved)};
};

template <>
struct Fields<Recovered> {
  using S = Recovered;
  static constexpr auto list = std::tuple{field("known", &S::known), field("share", &S::share),
                                          field("low", &S::low), field("high", &S::high)};
};

template <>
struct Fields<FixChange> {
  using S = FixChange;
  static constexpr auto list =
      std::tuple{field("knob", &S::knob), field("value", &S::value), field("without", &S::without),
                 field("share", &S::share), field("did_nothing", &S::did_nothing)};
};

// Derived from the changes: written for readers, counted again when read.
static void write_did_nothing(const FixResult& f, Json& out) {
  out["did_nothing"] = f.did_nothing();
}

template <>
struct Fields<FixResult> {
  using S = FixResult;
  static constexpr auto list = std::tuple{field("who", &S::who),
                                          field("ran", &S::ran),
                                          field("changes", &S::changes),
                                          field("refused", &S::refused),
                                          field("fault", &S::fault),
                                          field("vs_broken", &S::vs_broken),
                                          field("vs_healthy", &S::vs_healthy),
                                          field("recovered", &S::recovered),
                                          custom<S>(write_did_nothing, written_only<S>)};
};

template <>
struct Fields<FixScoreboard> {
  using S = FixScoreboard;
  static constexpr auto list = std::tuple{field("fixes", &S::fixes)};
};

// Derived from the predictions and the effect: written for readers, computed again when read.
static void write_calibration(const RecordedLesson& l, Json& out) {
  const Calibration c = calibration(l);
  out["calibration"] = number(c.factor);
  out["calibrated"] = c.predictions;
}

template <>
struct Fields<RecordedLesson> {
  using S = RecordedLesson;
  static constexpr auto list = std::tuple{field("lesson", &S::lesson),
                                          field("title", &S::title),
                                          field("recorded_at", &S::recorded_at),
                                          field("stage", &S::stage),
                                          field("reference_stage", &S::reference_stage),
                                          field("effect", &S::effect),
                                          field("predictions", &S::predictions),
                                          field("evidence", &S::evidence),
                                          custom<S>(write_calibration, written_only<S>)};
};

template <>
struct Fields<RecordedMystery> {
  using S = RecordedMystery;
  static constexpr auto list =
      std::tuple{field("recorded_at", &S::recorded_at), field("difficulty", &S::difficulty),
                 field("answer", &S::answer), field("fixes", &S::fixes)};
};

template <>
struct Fields<SessionRecord> {
  using S = SessionRecord;
  static constexpr auto list =
      std::tuple{field("lessons", &S::lessons), field("mysteries", &S::mysteries)};
};

}  // namespace json_schema

Effect measure_effect(const StageResult& stage, const StageResult& reference) {
  Effect e;
  if (stage.repeats.empty() || reference.repeats.empty()) return e;
  const Runs a = runs_of(stage);
  const Runs b = runs_of(reference);
  e.transactions = a.transactions;
  e.reference_transactions = b.transactions;
  if (b.log_tps.empty()) return e;  // the reference completed nothing: no ratio exists
  e.known = true;
  // A stage that completed nothing: the ratio is 0 and no interval on the log scale exists.
  if (a.log_tps.empty()) {
    e.verdict = Verdict::kSlower;
    return e;
  }
  const Change c = compare_runs(a, b);
  e.ratio = c.ratio;
  e.interval = c.interval;
  e.verdict = verdict_of(c.interval);
  return e;
}

void add_axes_in_run(Effect& e, const Run& run, const StageResult& stage) {
  if (run.stages.empty() || &stage < run.stages.data() ||
      &stage >= run.stages.data() + run.stages.size())
    return;
  const auto i = static_cast<std::size_t>(&stage - run.stages.data());
  const StageSummary s = summarize(run).at(i);
  e.axes = s.axes;
  e.axes_verdict = s.verdict;
}

std::vector<std::string> effect_axes_lines(const Effect& e, std::size_t width) {
  if (e.axes.empty() || e.axes_verdict.sentence.empty()) return {};
  std::vector<std::string> out{"every axis: " + e.axes_verdict.sentence};
  for (const auto& l : wrap_items(axis_items(e.axes, true), width)) out.push_back(l);
  return out;
}

Effect effect_in_run(const Run& run, const StageResult& stage, const StageResult& reference) {
  Effect e = measure_effect(stage, reference);
  if (!e.known || e.ratio <= 0 || run.stages.empty() || &reference != &run.stages.front()) return e;
  const auto i = static_cast<std::size_t>(&stage - run.stages.data());  // stage is run's
  const StageSummary s = summarize(run).at(i);
  e.axes = s.axes;
  e.axes_verdict = s.verdict;
  const std::optional<Change>& c = s.vs_baseline;
  if (!c) return e;
  e.ratio = c->ratio;
  e.interval = c->interval;
  e.verdict = verdict_of(c->interval);
  e.reference_transactions = c->reference_transactions;
  return e;
}

std::string describe_ratio(double ratio) {
  if (ratio > 0 && ratio < 0.5) return fmt::format("{}x slower", format_number(1 / ratio, 2));
  return format_change(ratio);
}

std::string describe_effect(const Effect& e) {
  if (!e.known) return "not measured (a stage did not run)";
  const std::string counts = fmt::format("{} vs {} transactions", format_count(e.transactions),
                                         format_count(e.reference_transactions));
  if (e.ratio <= 0) return fmt::format("nothing completed ({})", counts);
  switch (e.verdict) {
    case Verdict::kSlower:
    case Verdict::kFaster:
      return fmt::format("{} (95% interval {} to {}; {})", describe_ratio(e.ratio),
                         describe_ratio(e.interval.low), describe_ratio(e.interval.high), counts);
    case Verdict::kWithinNoise:
      return fmt::format("{} ({}; {})", format_verdict(e.interval), format_change(e.ratio), counts);
    case Verdict::kUnknown:
      break;
  }
  return fmt::format("{} ({}; {})", format_change(e.ratio), format_verdict(e.interval), counts);
}

LatencyCheck latency_check(const StageResult& stage) {
  LatencyCheck c;
  std::uint64_t n = 0;
  for (const Measurement& m : stage.repeats) {
    const auto k = m.committed + m.rolled_back;
    c.mean_us += m.latency.mean_us * static_cast<double>(k);
    n += k;
  }
  if (n > 0) c.mean_us /= static_cast<double>(n);
  if (const Measurement* m = median_repeat(stage)) {
    c.p50_us = m->latency.p50_us;
    c.p99_us = m->latency.p99_us;
  }
  std::vector<double> tps;
  for (const Measurement& m : stage.repeats) tps.push_back(m.tps);
  c.tps = median(tps);
  c.clients = stage.load.clients;
  if (stage.load.rate <= 0 && c.tps > 0) c.littles_law_us = c.clients / c.tps * 1e6;
  return c;
}

std::vector<EvidenceRow> evidence_rows(const StageResult& stage, const StageResult& reference,
                                       const std::vector<std::string>& keys) {
  std::vector<EvidenceRow> rows;
  std::vector<std::string> wanted = keys;
  if (wanted.empty()) {
    for (const EvidenceMove& m : top_movers(evidence_moves(stage, reference), 6))
      wanted.push_back(m.key);
  }
  for (const std::string& key : wanted) {
    auto a = normalised_evidence(stage, key);
    auto b = normalised_evidence(reference, key);
    if (!a || !b) continue;
    rows.push_back(
        {evidence_label(key), format_evidence_value(key, *b), format_evidence_value(key, *a)});
  }
  return rows;
}

std::vector<EvidenceRow> evidence_rows(const std::map<std::string, double>& stage,
                                       const std::map<std::string, double>& reference,
                                       const std::vector<std::string>& keys) {
  std::vector<EvidenceRow> rows;
  for (const std::string& key : keys) {
    auto a = stage.find(key);
    auto b = reference.find(key);
    if (a == stage.end() || b == reference.end()) continue;
    rows.push_back({evidence_label(key), format_evidence_value(key, b->second),
                    format_evidence_value(key, a->second)});
  }
  return rows;
}

std::vector<EvidenceRow> wait_rows(const StageResult& stage, const StageResult& reference,
                                   std::size_t top, const std::string& label_prefix) {
  return wait_rows(stage.waits, reference.waits, top, label_prefix);
}

std::vector<EvidenceRow> wait_rows(const std::optional<WaitProfile>& stage,
                                   const std::optional<WaitProfile>& reference, std::size_t top,
                                   const std::string& label_prefix) {
  std::vector<EvidenceRow> rows;
  if (!stage || !reference) return rows;
  const auto shares = results::wait_shares(*stage);
  for (std::size_t i = 0; i < shares.size() && i < top; ++i) {
    rows.push_back({label_prefix + shares[i].wait,
                    results::format_share(results::wait_share(*reference, shares[i].wait)),
                    results::format_share(shares[i].share)});
  }
  return rows;
}

namespace {

TextTable latency_table(const Reveal& r) {
  TextTable t;
  t.header = {"stage", "clients", "tps", "mean latency", "p50", "p99", "clients / tps"};
  t.right = {false, true, true, true, true, true, true};
  for (const auto& [name, c] : r.latency) {
    t.rows.push_back({name, std::to_string(c.clients), format_number(c.tps),
                      format_latency_us(c.mean_us), format_latency_us(c.p50_us),
                      format_latency_us(c.p99_us),
                      c.littles_law_us > 0 ? format_latency_us(c.littles_law_us) : "(fixed rate)"});
  }
  return t;
}

TextTable predictions_table(const std::vector<PredictionRow>& predictions) {
  TextTable t;
  t.header = {"who", "question", "prediction", "against the measurement"};
  t.right = {false, false, false, false};
  for (const PredictionRow& p : predictions)
    t.rows.push_back({p.participant, p.question, p.answer, p.verdict});
  return t;
}

TextTable evidence_table(const std::vector<EvidenceRow>& rows, const std::string& label,
                         const std::string& reference, const std::string& stage) {
  TextTable t;
  t.header = {label, reference, stage};
  t.right = {false, true, true};
  for (const EvidenceRow& e : rows) t.rows.push_back({e.label, e.reference, e.stage});
  return t;
}

}  // namespace

void render_reveal(const Reveal& r, std::ostream& out) {
  out << fmt::format("  {} against {}: {}\n", r.stage, r.reference_stage,
                     describe_effect(r.effect));
  const auto axes = effect_axes_lines(r.effect, 90);
  for (std::size_t l = 0; l < axes.size(); ++l) out << (l == 0 ? "  " : "    ") << axes[l] << "\n";
  out << "\n";
  if (!r.latency.empty()) {
    out << latency_table(r).render("  ")
        << "  Little's law: in a closed loop, mean latency = clients / tps.\n\n";
  }
  if (!r.predictions.empty()) out << predictions_table(r.predictions).render("  ") << "\n";
  if (!r.evidence.empty()) {
    out << "  The evidence:\n"
        << evidence_table(r.evidence, "evidence", r.reference_stage, r.stage).render("  ") << "\n";
  }
  if (!r.gap.empty()) out << fmt::format("  Why: {}\n\n", r.gap);
}

void render_reveal_markdown(const Reveal& r, std::ostream& out) {
  out << "# The reveal: " << markdown_text(r.lesson) << "\n\n"
      << markdown_text(fmt::format("{} against {}: {}.", r.stage, r.reference_stage,
                                   describe_effect(r.effect)))
      << "\n\n";
  for (const auto& l : effect_axes_lines(r.effect, 1000)) out << "- " << markdown_text(l) << "\n";
  if (!r.effect.axes.empty()) out << "\n";
  if (!r.latency.empty()) {
    out << "## Latency\n\n"
        << markdown_table(latency_table(r))
        << "\nLittle's law: in a closed loop, mean latency = clients / tps.\n\n";
  }
  if (!r.predictions.empty())
    out << "## Predictions\n\n" << markdown_table(predictions_table(r.predictions)) << "\n";
  if (!r.evidence.empty()) {
    out << "## The evidence\n\n"
        << markdown_table(evidence_table(r.evidence, "evidence", r.reference_stage, r.stage))
        << "\n";
  }
  if (!r.gap.empty()) out << "## Why\n\n" << markdown_text(r.gap) << "\n";
}

nlohmann::ordered_json reveal_to_json(const Reveal& reveal) {
  return json_schema::write_value(reveal);
}

void render_cliff_reveal(const CliffReveal& r, std::ostream& out) {
  render_cliff_console(r.cliff, out);
  out << "\n";
  if (!r.predictions.empty()) out << predictions_table(r.predictions).render("  ") << "\n";
  if (!r.evidence.empty()) {
    out << "  At the knee:\n"
        << evidence_table(r.evidence, "evidence", r.safe, r.harmful).render("  ") << "\n";
  }
  if (!r.gap.empty()) out << fmt::format("  Why: {}\n\n", r.gap);
}

void render_cliff_reveal_markdown(const CliffReveal& r, std::ostream& out) {
  out << "# The reveal: " << markdown_text(r.lesson) << "\n\n";
  std::ostringstream cliff;
  render_cliff_markdown(r.cliff, cliff);
  // The cliff's own headings one level down, under the reveal's.
  for (const std::string& line : split(cliff.str(), '\n'))
    out << (line.starts_with("#") ? "#" : "") << line << "\n";
  if (!r.predictions.empty())
    out << "## Predictions\n\n" << markdown_table(predictions_table(r.predictions)) << "\n";
  if (!r.evidence.empty()) {
    out << "## At the knee\n\n"
        << markdown_table(evidence_table(r.evidence, "evidence", r.safe, r.harmful)) << "\n";
  }
  if (!r.gap.empty()) out << "## Why\n\n" << markdown_text(r.gap) << "\n";
}

nlohmann::ordered_json cliff_reveal_to_json(const CliffReveal& reveal) {
  return json_schema::write_value(reveal);
}

namespace {

TextTable lesson_table(const LessonList& list) {
  TextTable t;
  t.header = {"lesson", "minutes", "title"};
  t.right = {false, true, false};
  for (const LessonSummary& l : list.lessons)
    t.rows.push_back({l.name, l.minutes > 0 ? std::to_string(l.minutes) : "-", l.title});
  return t;
}

constexpr const char* kLessonHint =
    "`pgslow lesson NAME` walks one; docs/workshop.md plans a session.";

}  // namespace

void render_lesson_list_console(const LessonList& list, std::ostream& out) {
  out << lesson_table(list).render() << "\n" << kLessonHint << "\n";
}

void render_lesson_list_markdown(const LessonList& list, std::ostream& out) {
  out << "# The lessons\n\n"
      << markdown_table(lesson_table(list)) << "\n"
      << markdown_text(kLessonHint) << "\n";
}

nlohmann::ordered_json lesson_list_to_json(const LessonList& list) {
  return json_schema::write_value(list);
}

namespace {

std::string latency_line(const MysteryClues& c) {
  return fmt::format("mean {} → {}, p99 {} → {}", format_latency_us(c.before.mean_us),
                     format_latency_us(c.now.mean_us), format_latency_us(c.before.p99_us),
                     format_latency_us(c.now.p99_us));
}

std::string log_heading(const MysteryClues& c) {
  return fmt::format("Server log while it ran ({} lines{})", c.log_lines.size(),
                     c.log_lines_total > c.log_lines.size()
                         ? fmt::format(", the last of {}", c.log_lines_total)
                         : "");
}

constexpr const char* kDecoyNote =
    "Some settings were changed on purpose that do no harm: \"whatever differs from the "
    "default\" is not the answer.";
constexpr const char* kCluesHint =
    "Look further in pg_stat_* and pg_settings yourself; guess with `pgslow mystery guess "
    "KNOB...`.";

}  // namespace

void render_clues_console(const MysteryClues& c, std::ostream& out) {
  out << fmt::format("CLUES (difficulty {}): what a DBA looks at first\n\n", c.difficulty)
      << "Symptom: the same workload before and after the change\n"
      << "  throughput: " << describe_effect(c.effect) << "\n"
      << "  latency: " << latency_line(c) << "\n\n"
      << "What moved most over the measured window:\n"
      << evidence_table(c.evidence, "evidence (pg_stat_* views, /proc)", "before", "now")
             .render("  ")
      << "\n";
  if (!c.waits.empty()) {
    out << "Where the backends' time went:\n"
        << evidence_table(c.waits, "wait (pg_stat_activity, sampled)", "before", "now").render("  ")
        << "\n";
  }
  out << log_heading(c) << ":\n";
  if (c.log_lines.empty()) out << "  (nothing: the log was quiet)\n";
  for (const std::string& l : c.log_lines) out << "  " << l << "\n";
  out << "\n";
  if (c.decoys) out << kDecoyNote << "\n";
  out << kCluesHint << "\n";
}

void render_clues_markdown(const MysteryClues& c, std::ostream& out) {
  out << fmt::format("# Clues (difficulty {})\n\n", c.difficulty) << "## Symptom\n\n"
      << "- Throughput: " << markdown_text(describe_effect(c.effect)) << "\n"
      << "- Latency: " << markdown_text(latency_line(c)) << "\n\n"
      << "## What moved most\n\n"
      << markdown_table(
             evidence_table(c.evidence, "evidence (pg_stat_* views, /proc)", "before", "now"))
      << "\n";
  if (!c.waits.empty()) {
    out << "## Where the backends' time went\n\n"
        << markdown_table(
               evidence_table(c.waits, "wait (pg_stat_activity, sampled)", "before", "now"))
        << "\n";
  }
  out << "## " << markdown_text(log_heading(c)) << "\n\n";
  if (c.log_lines.empty()) out << "Nothing: the log was quiet.\n";
  if (!c.log_lines.empty()) {
    out << "```\n";
    for (const std::string& l : c.log_lines) out << printable_lines(l) << "\n";
    out << "```\n";
  }
  out << "\n";
  if (c.decoys) out << markdown_text(kDecoyNote) << "\n\n";
  out << markdown_text(kCluesHint) << "\n";
}

nlohmann::ordered_json clues_to_json(const MysteryClues& clues) {
  return json_schema::write_value(clues);
}

void render_mystery_reveal_console(const MysteryReveal& r, std::ostream& out) {
  out << fmt::format("THE ANSWER: {}\n", r.answer);
  for (const auto& c : r.culprits)
    out << fmt::format("  {} = {}{}\n", c.knob, c.value, c.key ? "   (the key)" : "");
  if (!r.decoys.empty()) {
    out << "Decoys (changed, harmless):\n";
    for (const auto& d : r.decoys) out << fmt::format("  {} = {}\n", d.knob, d.value);
  }
  if (r.effect.known) out << "Measured: " << describe_effect(r.effect) << "\n";
  const auto axes = effect_axes_lines(r.effect, 90);
  for (std::size_t l = 0; l < axes.size(); ++l) out << (l == 0 ? "  " : "    ") << axes[l] << "\n";
  out << fmt::format("{} guess{}{}\n", r.guesses, r.guesses == 1 ? "" : "es",
                     r.solved ? ", solved" : ", not solved");
}

namespace {

// The answer's table, the measured effect and the guesses, under a heading of the caller's.
void mystery_answer_markdown(const MysteryReveal& r, std::ostream& out) {
  TextTable t;
  t.header = {"knob", "value", "role"};
  for (const auto& c : r.culprits)
    t.rows.push_back({c.knob, c.value, c.key ? "the cause (the key)" : "part of the cause"});
  for (const auto& d : r.decoys) t.rows.push_back({d.knob, d.value, "decoy (harmless)"});
  out << markdown_table(t) << "\n";
  if (r.effect.known) out << "Measured: " << markdown_text(describe_effect(r.effect)) << ".\n\n";
  for (const auto& l : effect_axes_lines(r.effect, 1000)) out << "- " << markdown_text(l) << "\n";
  if (!r.effect.axes.empty()) out << "\n";
  out << fmt::format("{} guess{}{}.\n", r.guesses, r.guesses == 1 ? "" : "es",
                     r.solved ? ", solved" : ", not solved");
}

}  // namespace

void render_mystery_reveal_markdown(const MysteryReveal& r, std::ostream& out) {
  out << "# The answer: " << markdown_text(r.answer) << "\n\n";
  mystery_answer_markdown(r, out);
}

nlohmann::ordered_json mystery_reveal_to_json(const MysteryReveal& reveal) {
  return json_schema::write_value(reveal);
}

Recovered recovered_share(const Effect& fix_vs_broken, const Effect& healthy_vs_broken) {
  Recovered r;
  const Effect& fix = fix_vs_broken;
  const Effect& fault = healthy_vs_broken;
  if (!fix.known || !fault.known || fix.ratio <= 0 || fault.ratio <= 0) return r;
  if (!fault.interval.known || !fix.interval.known || fault.interval.low <= 1) return r;
  const double d = std::log(fault.ratio);
  const double d1 = std::log(fault.interval.low);
  const double d2 = std::log(fault.interval.high);
  const double n = std::log(fix.ratio);
  const double n1 = std::log(fix.interval.low);
  const double n2 = std::log(fix.interval.high);
  r.known = true;
  r.share = n / d;
  r.low = std::min(n1 / d1, n1 / d2);
  r.high = std::max(n2 / d1, n2 / d2);
  return r;
}

namespace {

// A share as a whole percentage; a share that rounds to zero from below reads "0%", not "-0%".
std::string share_percent(double share) {
  const double rounded = std::round(share * 100);
  return fmt::format("{:.0f}%", rounded == 0 ? 0.0 : rounded);
}

}  // namespace

std::string describe_recovered(const Recovered& r) {
  if (!r.known) return "unknown (the fault was within noise)";
  return fmt::format("{} [{}, {}]", share_percent(r.share), share_percent(r.low),
                     share_percent(r.high));
}

std::size_t FixResult::did_nothing() const {
  return static_cast<std::size_t>(std::count_if(changes.begin(), changes.end(),
                                                [](const FixChange& c) { return c.did_nothing; }));
}

FixScoreboard rank_fixes(std::vector<FixResult> fixes) {
  std::vector<FixResult> ranked;
  std::vector<FixResult> unranked;
  for (FixResult& f : fixes) (f.ran && f.recovered.known ? ranked : unranked).push_back(f);
  std::stable_sort(ranked.begin(), ranked.end(), [](const FixResult& a, const FixResult& b) {
    return a.recovered.share > b.recovered.share;
  });
  // Tiers: a fix whose interval reaches the tier's best one's is as good as it, as far as the
  // measurement can tell; within a tier fewer knobs rank first.
  FixScoreboard board;
  for (std::size_t i = 0; i < ranked.size();) {
    std::size_t j = i + 1;
    while (j < ranked.size() && ranked[j].recovered.high >= ranked[i].recovered.low) ++j;
    std::stable_sort(
        ranked.begin() + static_cast<std::ptrdiff_t>(i),
        ranked.begin() + static_cast<std::ptrdiff_t>(j),
        [](const FixResult& a, const FixResult& b) { return a.changes.size() < b.changes.size(); });
    i = j;
  }
  board.fixes = std::move(ranked);
  for (FixResult& f : unranked) board.fixes.push_back(std::move(f));
  return board;
}

namespace {

std::string settings_text(const std::vector<FixChange>& changes) {
  std::vector<std::string> parts;
  for (const FixChange& c : changes) parts.push_back(c.knob + "=" + c.value);
  return join(parts, " ");
}

std::string fix_summary(const FixResult& f) {
  if (!f.ran) return "not run: every change was refused";
  std::string text = "recovered " + describe_recovered(f.recovered);
  const std::size_t n = f.changes.size();
  if (n > 1) {
    const std::size_t idle = f.did_nothing();
    text += idle == 0 ? fmt::format("; each of its {} changes counted", n)
                      : fmt::format("; {} of its {} changes did nothing", idle, n);
  }
  return text;
}

// An effect in a table cell: the ratio and its interval, without the transaction counts.
std::string effect_cell(const Effect& e) {
  if (!e.known || e.ratio <= 0) return "-";
  if (e.verdict == Verdict::kWithinNoise) return format_verdict(e.interval);
  const std::string interval = format_interval(e.interval);  // "[-49%, -29%]" or "3.3–4.4x ..."
  return describe_ratio(e.ratio) +
         (interval.starts_with("[") ? " " + interval : " (" + interval + ")");
}

// The three comparisons a fix is judged by, with their transaction counts.
TextTable comparisons_table(const FixResult& f) {
  TextTable t;
  t.header = {"throughput", "change, 95% interval", "transactions"};
  t.right = {false, false, true};
  auto row = [&](const char* what, const Effect& e) {
    t.rows.push_back({what, effect_cell(e),
                      fmt::format("{} vs {}", format_count(e.transactions),
                                  format_count(e.reference_transactions))});
  };
  row("healthy vs broken (the fault)", f.fault);
  row("the fix vs broken", f.vs_broken);
  row("the fix vs healthy", f.vs_healthy);
  return t;
}

TextTable changes_table(const FixResult& f) {
  TextTable t;
  t.header = {"change", "the fix against the fix without it", "its part of the recovery", ""};
  t.right = {false, false, true, false};
  for (const FixChange& c : f.changes) {
    t.rows.push_back({c.knob + "=" + c.value, effect_cell(c.without),
                      c.share.known ? share_percent(c.share.share) : "-",
                      c.did_nothing ? "did nothing" : ""});
  }
  return t;
}

TextTable scoreboard_table(const FixScoreboard& b) {
  TextTable t;
  t.header = {"rank", "who", "recovered", "95% interval", "knobs", "did nothing", "fix"};
  t.right = {true, false, true, false, true, true, false};
  std::size_t rank = 0;
  for (const FixResult& f : b.fixes) {
    const bool ranked = f.ran && f.recovered.known;
    t.rows.push_back({ranked ? std::to_string(++rank) : "-", f.who.empty() ? "-" : f.who,
                      ranked ? share_percent(f.recovered.share) : "-",
                      ranked ? fmt::format("[{}, {}]", share_percent(f.recovered.low),
                                           share_percent(f.recovered.high))
                             : (f.ran ? "fault within noise" : "not run"),
                      std::to_string(f.changes.size()), std::to_string(f.did_nothing()),
                      settings_text(f.changes)});
  }
  return t;
}

constexpr const char* kRankingRule =
    "Ranked by recovered performance (fixes within each other's intervals count as equal), then "
    "by how few knobs they touch.";

}  // namespace

void render_fix_console(const FixResult& f, std::ostream& out) {
  out << "FIX" << (f.who.empty() ? "" : " by " + f.who) << ": " << settings_text(f.changes) << "\n";
  if (f.ran) {
    out << comparisons_table(f).render("  ");
    if (f.changes.size() > 1) out << "\n" << changes_table(f).render("  ");
  }
  for (const std::string& r : f.refused) out << "  refused, not run: " << r << "\n";
  out << "Your fix " << fix_summary(f) << ".\n";
}

void render_fix_markdown(const FixResult& f, std::ostream& out) {
  out << "# Fix" << (f.who.empty() ? "" : " by " + markdown_text(f.who)) << ": `"
      << markdown_text(settings_text(f.changes)) << "`\n\n";
  if (f.ran) {
    out << markdown_table(comparisons_table(f)) << "\n";
    if (f.changes.size() > 1) out << markdown_table(changes_table(f)) << "\n";
  }
  for (const std::string& r : f.refused) out << "- Refused, not run: " << markdown_text(r) << "\n";
  if (!f.refused.empty()) out << "\n";
  out << "The fix " << markdown_text(fix_summary(f)) << ".\n";
}

nlohmann::ordered_json fix_to_json(const FixResult& fix) {
  return json_schema::write_value(fix);
}

FixResult fix_from_json(const nlohmann::ordered_json& json, const std::string& source) {
  FixResult fix;
  json_schema::read(fix, json, json_schema::Place{source, ""});
  return fix;
}

void render_scoreboard_console(const FixScoreboard& b, std::ostream& out) {
  out << "SCOREBOARD\n" << scoreboard_table(b).render("  ") << kRankingRule << "\n";
}

void render_scoreboard_markdown(const FixScoreboard& b, std::ostream& out) {
  out << "# The fixes\n\n" << markdown_table(scoreboard_table(b)) << "\n" << kRankingRule << "\n";
}

nlohmann::ordered_json scoreboard_to_json(const FixScoreboard& board) {
  return json_schema::write_value(board);
}

RecordedLesson record_lesson(const Reveal& reveal, const std::string& title,
                             const std::string& recorded_at) {
  return {reveal.lesson,          title,         recorded_at,        reveal.stage,
          reveal.reference_stage, reveal.effect, reveal.predictions, reveal.evidence};
}

RecordedLesson record_cliff_lesson(const CliffReveal& reveal, const std::string& title,
                                   const std::string& recorded_at) {
  const CliffResult& c = reveal.cliff;
  Effect effect;
  if (c.first_harmful) {
    const CliffPoint& p = c.points[*c.first_harmful];
    const EffectInterval e = in_metric_terms(c.metric, p.effect);
    effect.known = true;
    effect.ratio = e.ratio;
    effect.interval.ratio = e.ratio;
    effect.interval.low = e.low;
    effect.interval.high = e.high;
    effect.interval.known = true;
    effect.verdict = verdict_of(effect.interval);
    effect.transactions = p.transactions;
    effect.reference_transactions = c.baseline.transactions;
  }
  return {
      reveal.lesson, title,  recorded_at,        fmt::format("{}: {}", c.knob, cliff_headline(c)),
      c.from,        effect, reveal.predictions, reveal.evidence};
}

Calibration calibration(const RecordedLesson& lesson) {
  std::vector<double> off;
  for (const PredictionRow& p : lesson.predictions) {
    if (p.off_by > 0) {
      off.push_back(p.off_by);  // a cliff's guess: its distance is the calibration
    } else if (p.predicted_ratio > 0 && lesson.effect.known && lesson.effect.ratio > 0) {
      off.push_back(std::exp(std::abs(std::log(p.predicted_ratio / lesson.effect.ratio))));
    }
  }
  return {off.empty() ? 0 : median(off), off.size()};
}

namespace {

std::string calibration_text(const RecordedLesson& l) {
  const Calibration c = calibration(l);
  if (c.predictions == 0) return "no effect prediction to judge";
  return fmt::format("{}x off (median of {} prediction{})", format_number(c.factor, 2),
                     c.predictions, c.predictions == 1 ? "" : "s");
}

TextTable record_lessons_table(const SessionRecord& r) {
  TextTable t;
  t.header = {"lesson", "measured", "the room's predictions"};
  for (const RecordedLesson& l : r.lessons)
    t.rows.push_back({l.lesson, effect_cell(l.effect), calibration_text(l)});
  return t;
}

std::string mystery_line(const RecordedMystery& m) {
  std::string best = "no fix proposed";
  if (!m.fixes.fixes.empty() && m.fixes.fixes.front().recovered.known) {
    const FixResult& f = m.fixes.fixes.front();
    best = fmt::format("best fix{}: {} recovered {}", f.who.empty() ? "" : " by " + f.who,
                       settings_text(f.changes), describe_recovered(f.recovered));
  }
  return fmt::format("difficulty {}: {}; {} guess{}{}; {}", m.difficulty, m.answer.answer,
                     m.answer.guesses, m.answer.guesses == 1 ? "" : "es",
                     m.answer.solved ? ", solved" : ", not solved", best);
}

}  // namespace

void render_record_console(const SessionRecord& r, std::ostream& out) {
  out << "THE SESSION'S RECORD\n";
  if (!r.lessons.empty()) out << record_lessons_table(r).render("  ");
  for (const RecordedMystery& m : r.mysteries) out << "  mystery, " << mystery_line(m) << "\n";
}

void render_record_markdown(const SessionRecord& r, std::ostream& out) {
  out << "# The session's record\n\n";
  if (!r.lessons.empty()) {
    out << "## Lessons\n\n"
        << markdown_table(record_lessons_table(r)) << "\n"
        << "How far the room was off: the median factor between each effect prediction and the "
           "measurement (1x is spot on).\n\n";
  }
  for (const RecordedLesson& l : r.lessons) {
    out << "### " << markdown_text(l.lesson)
        << (l.title.empty() ? "" : ": " + markdown_text(l.title)) << "\n\n"
        << markdown_text(fmt::format("Recorded {}. {} against {}: {}.", l.recorded_at, l.stage,
                                     l.reference_stage, describe_effect(l.effect)))
        << "\n\n";
    if (!l.predictions.empty()) out << markdown_table(predictions_table(l.predictions)) << "\n";
    if (!l.evidence.empty()) {
      out << markdown_table(evidence_table(l.evidence, "evidence", l.reference_stage, l.stage))
          << "\n";
    }
  }
  if (!r.mysteries.empty()) out << "## Mysteries\n\n";
  for (const RecordedMystery& m : r.mysteries) {
    out << "### " << markdown_text(m.answer.answer) << "\n\n"
        << markdown_text(fmt::format("Recorded {}, difficulty {}.", m.recorded_at, m.difficulty))
        << "\n\n";
    mystery_answer_markdown(m.answer, out);
    if (!m.fixes.fixes.empty()) {
      out << "\n" << markdown_table(scoreboard_table(m.fixes)) << "\n" << kRankingRule << "\n";
    }
    out << "\n";
  }
}

nlohmann::ordered_json record_to_json(const SessionRecord& record) {
  return json_schema::write_value(record);
}

SessionRecord record_from_json(const nlohmann::ordered_json& json, const std::string& source) {
  SessionRecord record;
  json_schema::read(record, json, json_schema::Place{source, ""});
  return record;
}

}  // namespace pgslow::report
