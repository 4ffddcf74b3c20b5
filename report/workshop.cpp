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
  if (const std::string hint = few_runs_hint(r.effect); !hint.empty())
    out << "    (" << hint << ")\n";
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
  if (const std::string hint = few_runs_hint(r.effect); !hint.empty())
    out << markdown_text("Few runs: " + hint + ".") << "\n\n";
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

void render_scoreboard_console(const FixScoreboard& b, std::ostream& out) {
  out << "SCOREBOARD\n" << scoreboard_table(b).render("  ") << kRankingRule << "\n";
}

void render_scoreboard_markdown(const FixScoreboard& b, std::ostream& out) {
  out << "# The fixes\n\n" << markdown_table(scoreboard_table(b)) << "\n" << kRankingRule << "\n";
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

}  // namespace pgslow::report
