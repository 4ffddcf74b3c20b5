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
#include "report/workshop.h"
#include "results/evidence_info.h"
#include "results/metric.h"
#include "results/stats.h"
#include "results/summary.h"
#include "results/waits.h"

// The workshop's results as JSON: their field lists and the writers and readers built on them.

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
    e.axes.push_back({axis, change_of(i), true});
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

nlohmann::ordered_json reveal_to_json(const Reveal& reveal) {
  return json_schema::write_value(reveal);
}

nlohmann::ordered_json cliff_reveal_to_json(const CliffReveal& reveal) {
  return json_schema::write_value(reveal);
}

nlohmann::ordered_json lesson_list_to_json(const LessonList& list) {
  return json_schema::write_value(list);
}

nlohmann::ordered_json clues_to_json(const MysteryClues& clues) {
  return json_schema::write_value(clues);
}

nlohmann::ordered_json mystery_reveal_to_json(const MysteryReveal& reveal) {
  return json_schema::write_value(reveal);
}

nlohmann::ordered_json fix_to_json(const FixResult& fix) {
  return json_schema::write_value(fix);
}

FixResult fix_from_json(const nlohmann::ordered_json& json, const std::string& source) {
  FixResult fix;
  json_schema::read(fix, json, json_schema::Place{source, ""});
  return fix;
}

nlohmann::ordered_json scoreboard_to_json(const FixScoreboard& board) {
  return json_schema::write_value(board);
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
