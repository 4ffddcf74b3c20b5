#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <ostream>
#include <sstream>

#include "common/format.h"
#include "common/strings.h"
#include "report/attribution_view.h"
#include "report/audit.h"
#include "report/axes_view.h"
#include "report/bench_view.h"
#include "report/curve.h"
#include "report/load_columns.h"
#include "report/registry.h"
#include "report/text.h"
#include "results/load_fields.h"
#include "results/stats.h"
#include "results/summary.h"

namespace pgslow::report {

namespace {

// Splits lines; the last empty piece after a trailing newline is dropped.
std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> out;
  std::size_t start = 0;
  while (start < text.size()) {
    const std::size_t end = text.find('\n', start);
    if (end == std::string::npos) {
      out.push_back(text.substr(start));
      break;
    }
    out.push_back(text.substr(start, end - start));
    start = end + 1;
  }
  return out;
}

}  // namespace

namespace {

std::string curves_and_expectations(const Run& run, const std::string& indent, std::size_t width);

// Today's full block: the facts, the table and under each stage every axis, the evidence, waits,
// warnings, the audit and the attribution (--detail).
void render_console_detail(const Run& run, std::ostream& terminal) {
  // Names and descriptions come from files anyone may write: no control character or escape
  // sequence reaches the terminal.
  std::ostringstream out;
  out << "pgslow report: " << (run.scenario.empty() ? "(unnamed scenario)" : run.scenario) << "\n";
  std::size_t label_width = 0;
  const auto facts = run_facts(run);
  for (const auto& [label, value] : facts) label_width = std::max(label_width, label.size());
  for (const auto& [label, value] : facts) {
    out << "  " << pad_right(label, label_width) << "  " << value << "\n";
  }
  out << "\n";

  const auto summaries = summarize(run);
  // The table fits 100 columns: the repeats' range is in the other formats, and "vs previous"
  // (cumulative runs only, where it means the last step) is a detail line under the stage.
  const bool cumulative = run.mode != "isolated";
  TextTable table;
  // The interval is the verdict's: TPS's, or that of the cost or tail the verdict names.
  table.header = {"stage", "TPS", "tx", "vs baseline", "interval", "p99"};
  table.right = {false, true, true, true, true, true};
  const auto columns = load_columns(run);
  for (const auto& c : columns) {
    table.header.push_back(c.header);
    table.right.push_back(true);
  }
  for (const auto& s : summaries) {
    const StageResult& stage = run.stages[s.index];
    std::string tps = s.ran ? format_number(s.tps) : "failed";
    if (s.reference_tps > 0) tps += " (ref " + format_number(s.reference_tps) + ")";
    table.rows.push_back({stage.name, tps, s.ran ? format_count(s.transactions) : "—",
                          verdict_cell(s), verdict_interval(s),
                          s.ran ? format_latency_us(s.p99_us) : "—"});
    const Measurement* m = s.ran ? median_repeat(stage) : nullptr;
    for (const auto& c : columns) table.rows.back().push_back(c.cell(stage, m));
  }
  const auto rendered = lines_of(table.render("  "));
  out << rendered[0] << "\n";
  // Each stage row is followed by its details, indented under the stage name.
  for (std::size_t i = 0; i < summaries.size(); ++i) {
    out << rendered[i + 1] << "\n";
    const StageSummary& s = summaries[i];
    const StageResult& stage = run.stages[s.index];
    auto detail = [&](const char* label, const std::string& text) {
      out << "    " << pad_right(label, 9) << " " << text << "\n";
    };
    if (cumulative && s.vs_previous)
      detail("vs prev", s.vs_previous->text + " " + interval_text(s.vs_previous));
    for (const auto& change : stage.changes) detail("knob", describe_change(change));
    if (s.cpu_vs_baseline) {
      std::string text = cost_change_text(*s.cpu_vs_baseline) + " (server)";
      // The driver's own cost beside it: on a shared machine its CPU is taken from the server.
      if (const Measurement* m = s.ran ? median_repeat(stage) : nullptr;
          m != nullptr && m->client_cpu_s > 0 && m->committed + m->rolled_back > 0)
        text += fmt::format("; pgslow's clients {}/tx",
                            format_latency_us(m->client_cpu_s * 1e6 /
                                              static_cast<double>(m->committed + m->rolled_back)));
      detail("CPU/tx", text);
    }
    // The verdict's sentence when the cell names another axis than TPS, then every other axis.
    if (verdict_needs_sentence(s)) detail("verdict", s.verdict.sentence);
    const auto axes = wrap_items(axis_items(s, false), 100 - 14);
    for (std::size_t l = 0; l < axes.size(); ++l)
      out << (l == 0 ? "    axes      " : "              ") << axes[l] << "\n";
    if (!s.design.empty()) detail("measured", s.design);
    for (const auto& knob : stage.skipped) detail("skipped", describe_skipped(knob));
    if (!s.movers.empty()) {
      std::string text;
      for (const auto& m : s.movers) text += (text.empty() ? "" : "; ") + m.text;
      detail("evidence", text);
    }
    if (!s.waits_text.empty()) detail("waits", s.waits_text);
    if (!s.headline_text.empty()) detail("headline", s.headline_text);
    if (!s.retries_text.empty()) detail("retries", s.retries_text);
    for (const auto& w : s.headline_warnings) detail("warning", w);
    for (const auto& w : stage.warnings) detail("warning", w);
    if (const Measurement* m = s.ran ? median_repeat(stage) : nullptr) {
      if (m->in_flight_at_end > 0) detail("in flight", in_flight_text(*m));
      const auto audit = wrap_items(audit_parts(m->audit), 100 - 14);
      for (std::size_t l = 0; l < audit.size(); ++l)
        out << (l == 0 ? "    audit     " : "              ") << audit[l] << "\n";
    }
    if (!stage.error.empty()) detail("error", stage.error);
    if (stage.attribution) {
      const auto lines = attribution_lines(*stage.attribution, "", 100 - 14);
      // The headline's first line beside the label, the rest indented under it.
      for (std::size_t l = 0; l < lines.size(); ++l)
        out << (l == 0 ? "    cause     " : "              ") << lines[l] << "\n";
    }
  }
  out << curves_and_expectations(run, "  ", 100);
  terminal << printable_lines(out.str());
}

// A percentage for a narrow cell: "+12%" from 10% on, "+4.5%" below.
std::string short_percent(double ratio) {
  return format_signed_percent(ratio, std::abs(ratio - 1) >= 0.1 ? 0 : 1);
}

// A ratio and its interval for a narrow cell: "6.7x [6.1–7.4]" or "0.05x [0.04–0.07]" far from
// 1, "+12% [+4.0%, +22%]" near it. `slower` words a throughput that fell as "6.7x slower".
std::string short_change(const Change& change, bool slower) {
  const Interval& i = change.interval;
  if (slower && change.ratio <= 0.5 && i.high < 1)
    return format_number(1 / change.ratio, 2) + "x slower [" + format_number(1 / i.high, 2) + "–" +
           format_number(1 / i.low, 2) + "]";
  if (change.ratio >= 2 || change.ratio <= 0.5)
    return format_number(change.ratio, 2) + "x [" + format_number(i.low, 2) + "–" +
           format_number(i.high, 2) + "]";
  return short_percent(change.ratio) + " [" + short_percent(i.low) + ", " + short_percent(i.high) +
         "]";
}

// The stage's TPS as its effect compares it: the reference measured around it (the baseline's
// runs, or a switchback stage's own reference blocks) → the stage, the two figures whose ratio
// the effect cell is, so a row does not read "2,007" beside "-8.9% slower" under a baseline of
// 1,839 (only a terminal too narrow for both drops the reference, stage_lines). The baseline,
// or a stage compared with nothing, shows its median.
std::string tps_cell(const StageSummary& s, bool with_reference = true) {
  if (!s.ran) return "failed";
  if (s.index == 0 || !s.vs_baseline || !(s.vs_baseline->reference_value > 0) ||
      !(s.vs_baseline->stage_value > 0))
    return format_number(s.tps);
  if (!with_reference) return format_number(s.vs_baseline->stage_value);
  return format_number(s.vs_baseline->reference_value) + " → " +
         format_number(s.vs_baseline->stage_value);
}

// A stage's throughput against the baseline, as the compact table's effect cell: "6.7x slower
// [6.1–7.4]", "-12% [-18%, -6.0%]", "≈ (±18%)" within noise, with what it could have seen;
// past ±100% the run count, not the machine, limits it: "≈ (too few runs)", the footnote says
// what more pairs would give.
std::string effect_cell(const std::optional<Change>& change) {
  if (!change) return "—";
  const Interval& i = change->interval;
  if (!i.known) return "no interval";
  if (!change->measurable && i.detectable() > 1) return "≈ (too few runs)";
  if (!change->measurable) return "≈ (±" + format_number(i.detectable() * 100, 2) + "%)";
  return short_change(*change, true);
}

// The axis other than TPS that moved most, measurably: the verdict's own axis first when it is
// not TPS, then the stage's own axes; nullptr when none moved.
const AxisChange* shown_axis(const StageSummary& s) {
  const AxisChange* best = nullptr;
  const auto larger = [](const AxisChange& a, const AxisChange* than) {
    return than == nullptr ||
           std::abs(std::log(a.change.ratio)) > std::abs(std::log(than->change.ratio));
  };
  for (const auto& a : s.axes) {
    if (a.axis == &kTpsAxis || !a.change.measurable) continue;
    if (a.axis == s.verdict.axis) {
      best = &a;
      break;
    }
    // An own axis beats any other; among equals the larger move.
    if (best == nullptr || (a.own && !best->own) || (a.own == best->own && larger(a, best)))
      best = &a;
  }
  return best;
}

// The shown axis with its interval: "CPU/tx +12% [+4.0%, +22%]", "p99 13x [8.1–21]"; an axis
// nobody expected only as "also ...".
std::string shows_on_cell(const StageSummary& s, bool with_interval) {
  const AxisChange* best = shown_axis(s);
  if (best == nullptr) return "";
  const std::string values = axis_values_text(*best, true);
  const std::string text = std::string(best->own ? "" : "also ") + std::string(best->axis->label) +
                           " " + (values.empty() ? short_change(best->change, false) : values);
  // Without the interval (a narrow terminal): the words before it.
  return with_interval ? text : text.substr(0, text.find(" ["));
}

// A load-side stage's changes from the baseline's load, by the names a scenario's `load:` gives
// them, as knobs are named: "pool_size", "clients". PgBouncer's own settings are knobs of the
// stage already (`pgbouncer.pool_mode`, scenario/plan_pooler.cpp add_pooler_changes).
std::vector<std::string> load_changes(const LoadSettings& load, const LoadSettings& baseline) {
  std::vector<std::string> out;
  if (load.clients != baseline.clients) out.push_back("clients");
  if (load.pool_size != baseline.pool_size)
    out.push_back("pool_size");
  else if (load.pooler != baseline.pooler)
    out.push_back("pooler");
  if (load.connect_per_transaction != baseline.connect_per_transaction)
    out.push_back("connect_per_transaction");
  if (load.rate != baseline.rate || load.rate_percent != baseline.rate_percent)
    out.push_back("rate");
  return out;
}

// Who did it: the attribution's causes, else the stage's knobs and load changes; more than three
// that no attribution split are counted ("10 knobs"), as no one of them is more the cause.
std::vector<std::string> cause_knobs(const StageResult& stage, const LoadSettings& baseline) {
  std::vector<std::string> who;
  if (stage.attribution) {
    for (const auto& k : stage.attribution->knobs)
      if (k.verdict == "the cause" || k.verdict == "contributes") who.push_back(join(k.knobs, "+"));
  }
  if (!who.empty()) return who;
  if (stage.changes.size() > 3) return {fmt::format("{} knobs", stage.changes.size())};
  for (const auto& change : stage.changes) who.push_back(change.name);
  for (auto& change : load_changes(stage.load, baseline)) who.push_back(std::move(change));
  return who;
}

// `who` within `room` columns where it can be, whole names only: "a+b+c", else "a +2", else
// "3 knobs"; a single name wider than `room` is returned whole (the shown axis is cut first).
std::string knobs_within(const std::vector<std::string>& who, std::size_t room) {
  const std::string all = join(who, "+");
  const std::vector<std::string> knobs = split(all, '+');
  if (knobs.size() < 2 || display_width(all) <= room) return all;
  const std::string first = fmt::format("{} +{}", knobs.front(), knobs.size() - 1);
  return display_width(first) <= room ? first : fmt::format("{} knobs", knobs.size());
}

// The one figure that says why: the evidence that moved most (not the figure the row already
// shows on), else where the time went.
std::string cause_why(const StageSummary& s) {
  const AxisChange* shown = shown_axis(s);
  // No effect on any axis: whatever evidence moved most is noise, not a reason.
  if (shown == nullptr && (!s.vs_baseline || !s.vs_baseline->measurable)) return "";
  std::string why;
  for (std::size_t k = 0; k < s.movers.size() && why.empty(); ++k) {
    const EvidenceMove& m = s.movers[k];
    const bool repeats_shown =
        shown != nullptr && (m.key == shown->axis->evidence || m.label == shown->axis->label);
    // After the first, a figure from none is most often a trace ("CPU ms: bgwriter/tx 0 →
    // 0.000169"), not a reason.
    if (!repeats_shown && (k == 0 || m.baseline > 0)) why = m.text;
  }
  if (why.empty() && !s.waits_text.empty()) {
    // "commit_delay, commit_siblings → Timeout:CommitDelay 81% of backend time (baseline 0%);
    // ...": the wait that grew most, without the knobs named before it.
    why = s.waits_text.substr(0, s.waits_text.find(';'));
    if (const auto arrow = why.find("→ "); arrow != std::string::npos)
      why = why.substr(arrow + std::string("→ ").size());
  }
  return why;
}

std::string cause_cell(const std::string& who, const std::string& why) {
  return who + (why.empty() || who.empty() ? "" : " · ") + why;
}

// The run's facts on one line ("quick · PostgreSQL 15.18 · tpcb-like ... · 4 min 12 s"), or on
// as few lines as fit `width`, each fact whole.
std::string facts_lines(const Run& run, std::size_t width) {
  std::vector<std::string> facts = {run.scenario.empty() ? "(unnamed scenario)" : run.scenario};
  if (!run.server_version.empty()) facts.push_back(run.server_version);
  facts.push_back(describe_workload(run));
  facts.push_back(describe_clients(run));
  if (!run.stages.empty()) {
    const Noise noise = run_noise(run);
    if (noise.runs > 1) facts.push_back(fmt::format("noise ±{:.1f}%/run", noise.sigma * 100));
  }
  if (run.wall_seconds > 0) facts.push_back(format_seconds(run.wall_seconds));
  std::string out;
  std::string line;
  for (const auto& fact : facts) {
    if (!line.empty() && display_width(line) + 3 + display_width(fact) > width) {
      out += line + "\n";
      line = "  ";
    }
    line += (line.empty() || line == "  " ? "" : " · ") + fact;
  }
  return out + cut_to_width(line, width) + "\n";
}

// What changes a stage's reading (its error, a warning) as footnotes. A note that several
// stages share (the machine was disturbed during each) is one footnote naming them all; its
// words up to the first colon say what it is, --detail each stage's. A kind of note every stage
// has needs no marker: one line says so.
struct StageNotes {
  struct Footnote {
    std::string kind;  // the words before the first ':'
    std::string text;  // the whole note, as the one stage it is about has it
    std::vector<std::string> stages;
  };
  std::vector<Footnote> footnotes;
  std::vector<std::string> everywhere;  // kinds every stage has

  StageNotes(const Run& run, const std::vector<StageSummary>& summaries) {
    for (const auto& s : summaries) {
      const StageResult& stage = run.stages[s.index];
      std::vector<std::string> notes;
      if (!stage.error.empty()) notes.push_back(stage.error);
      notes.insert(notes.end(), s.headline_warnings.begin(), s.headline_warnings.end());
      notes.insert(notes.end(), stage.warnings.begin(), stage.warnings.end());
      // A reading the run count limits: what more pairs would narrow it to.
      if (!s.narrowing_note.empty()) notes.push_back("more runs would tell: " + s.narrowing_note);
      for (const auto& note : notes) add(stage.name, note);
    }
    std::erase_if(footnotes, [&](const Footnote& f) {
      std::vector<std::string> named = f.stages;
      named.erase(std::unique(named.begin(), named.end()), named.end());
      const bool all = summaries.size() > 1 && named.size() == summaries.size();
      if (all) everywhere.push_back(f.kind);
      return all;
    });
  }

  void add(const std::string& stage, const std::string& note) {
    const std::size_t colon = note.find(": ");
    const std::string kind = colon == std::string::npos ? note : note.substr(0, colon);
    for (auto& f : footnotes) {
      if (f.kind != kind) continue;
      f.stages.push_back(stage);
      return;
    }
    footnotes.push_back({kind, note, {stage}});
  }

  // " [1,3]": the footnotes about `stage`.
  std::string markers(const std::string& stage) const {
    std::vector<std::string> numbers;
    for (std::size_t f = 0; f < footnotes.size(); ++f) {
      const auto& named = footnotes[f].stages;
      if (std::find(named.begin(), named.end(), stage) != named.end())
        numbers.push_back(std::to_string(f + 1));
    }
    return numbers.empty() ? "" : " [" + join(numbers, ",") + "]";
  }

  std::string lines(std::size_t width) const {
    std::string out;
    auto add_wrapped = [&](const std::string& text) {
      for (const auto& line : wrap_text(text, width, "    ")) out += line + "\n";
    };
    for (const auto& kind : everywhere)
      add_wrapped("every stage: " + kind + " (each stage's figures: --detail)");
    for (std::size_t i = 0; i < footnotes.size(); ++i) {
      const Footnote& f = footnotes[i];
      add_wrapped("[" + std::to_string(i + 1) + "] " +
                  (f.stages.size() == 1 ? f.stages[0] + ": " + f.text
                                        : join(f.stages, ", ") + ": " + f.kind +
                                              " (each stage's figures: --detail)"));
    }
    return out;
  }
};

// The stage table: one line per stage, fitting `width`.
std::string stage_lines(const Run& run, const std::vector<StageSummary>& summaries,
                        const StageNotes& notes, std::size_t width) {
  TextTable table;
  table.header = {"stage", "TPS", "effect", "shows on", "cause · why"};
  table.right = {false, true, false, false, false};
  std::vector<std::vector<std::string>> who(summaries.size());
  std::vector<std::string> why(summaries.size());
  for (std::size_t i = 0; i < summaries.size(); ++i) {
    const StageSummary& s = summaries[i];
    const StageResult& stage = run.stages[s.index];
    const bool baseline = s.index == 0;
    if (!baseline) {
      who[i] = cause_knobs(stage, run.stages.front().load);
      why[i] = cause_why(s);
    }
    table.rows.push_back({stage.name + notes.markers(stage.name), tps_cell(s),
                          baseline ? "—" : effect_cell(s.vs_baseline),
                          baseline ? "" : shows_on_cell(s, true),
                          baseline ? "" : cause_cell(join(who[i], "+"), why[i])});
  }
  // Too wide, each step only while it still is: the cause's evidence is cut (--detail has it),
  // down to the knobs' names; the shown axis's interval goes; the knobs' names are counted
  // ("a +2", "3 knobs"); the TPS the effect compares with goes; then the cells are cut, the
  // effect last. A row keeps its figures and whole names wherever the width allows.
  const auto cut_causes = [&](bool count_knobs) {
    // The room the other columns leave, from each cause's whole text again.
    for (auto& row : table.rows) row[4].clear();
    const std::size_t header = display_width(table.header[4]);
    const std::size_t others = table.rendered_width("") - header;
    const std::size_t room = std::max(header, width - std::min(width, others));
    for (std::size_t i = 0; i < summaries.size(); ++i) {
      if (summaries[i].index == 0) continue;
      const std::string names = count_knobs ? knobs_within(who[i], room) : join(who[i], "+");
      const std::string whole = cause_cell(names, why[i]);
      // A cut evidence keeps at least a few characters past " · ", else only the names show.
      constexpr std::size_t kShortestWhy = 8;
      if (display_width(whole) <= room)
        table.rows[i][4] = whole;
      else if (display_width(names) + kShortestWhy + 3 <= room)
        table.rows[i][4] = cut_to_width(whole, room);
      else
        table.rows[i][4] = names;
    }
  };
  bool count_knobs = false;
  const std::vector<std::function<void()>> narrower = {
      [] {},
      [&] {
        for (std::size_t i = 0; i < summaries.size(); ++i)
          if (summaries[i].index != 0) table.rows[i][3] = shows_on_cell(summaries[i], false);
      },
      [&] { count_knobs = true; },
      [&] {
        for (std::size_t i = 0; i < summaries.size(); ++i)
          table.rows[i][1] = tps_cell(summaries[i], false);
      },
  };
  for (const auto& step : narrower) {
    if (table.rendered_width("") <= width) break;
    step();
    cut_causes(count_knobs);
  }
  // The shown axis is cut before a knob's name, the effect last: it is what the row is for.
  table.fit(width, "", {3});
  table.fit(width, "", {4, 3});
  table.fit(width, "", {2});
  return table.render();
}

// A sweep's curves and the scenario's expectations, under the table: their titles after
// `indent`, their lines two columns further in, within `width`.
std::string curves_and_expectations(const Run& run, const std::string& indent, std::size_t width) {
  std::ostringstream out;
  const std::string inner = indent + "  ";
  const std::size_t room = width - display_width(inner);
  for (const auto& curve : sweep_curves(run)) {
    out << "\n"
        << indent << "sweep over " << dimension_label(curve.dimension)
        << (curve.series.empty() ? "" : " (" + curve.series + ")") << "\n";
    const CurveTable ct = curve_table(curve);
    TextTable t;
    t.header = ct.header;
    t.right.assign(ct.header.size(), true);
    t.right.back() = false;
    t.rows = ct.rows;
    t.fit(width, inner, {ct.header.size() - 1});
    out << t.render(inner);
    for (const auto& line : wrap_text(describe_knee(curve), room)) out << inner << line << "\n";
  }
  if (!run.expectations.empty()) {
    out << "\n" << indent << "expectations\n";
    for (const auto& e : run.expectations) {
      std::string text = std::string(e.passed ? "pass" : "FAIL") + "  " + e.text;
      if (!e.detail.empty()) text += " (" + e.detail + ")";
      for (const auto& line : wrap_text(text, room, "      ")) out << inner << line << "\n";
    }
  }
  return out.str();
}

// One line per stage, within `width` columns; what changes the reading (an error, a warning,
// few runs) as a numbered marker with its footnote under the table.
void render_console_compact(const Run& run, std::ostream& terminal, std::size_t width) {
  const auto summaries = summarize(run);
  const StageNotes notes(run, summaries);
  std::string out = facts_lines(run, width) + "\n" + stage_lines(run, summaries, notes, width) +
                    notes.lines(width);
  if (const std::string few = few_runs_note(run); !few.empty())
    for (const auto& line : wrap_text("few runs: " + few, width, "    ")) out += line + "\n";
  out += curves_and_expectations(run, "", width);
  out +=
      "\n" +
      cut_to_width("Every axis, the evidence, waits and the attribution: --detail, or report.md.",
                   width) +
      "\n";
  terminal << printable_lines(out);
}

}  // namespace

void render_console(const Run& run, std::ostream& out) {
  render_console(run, out, ConsoleOptions{false, output_columns()});
}

void render_console(const Run& run, std::ostream& out, const ConsoleOptions& options) {
  if (options.detail) {
    render_console_detail(run, out);
    return;
  }
  render_console_compact(run, out, options.width);
}

}  // namespace pgslow::report
