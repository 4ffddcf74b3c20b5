#include <fmt/format.h>

#include <ostream>
#include <sstream>

#include "report/attribution_view.h"
#include "report/audit.h"
#include "report/axes_view.h"
#include "report/bench_view.h"
#include "report/curve.h"
#include "report/load_columns.h"
#include "report/registry.h"
#include "report/text.h"
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

void render_console(const Run& run, std::ostream& terminal) {
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
  for (const auto& curve : sweep_curves(run)) {
    out << "\n  sweep over " << dimension_label(curve.dimension)
        << (curve.series.empty() ? "" : " (" + curve.series + ")") << "\n";
    const CurveTable ct = curve_table(curve);
    TextTable t;
    t.header = ct.header;
    t.right.assign(ct.header.size(), true);
    t.right.back() = false;
    t.rows = ct.rows;
    out << t.render("    ") << "    " << describe_knee(curve) << "\n";
  }
  if (!run.expectations.empty()) {
    out << "\n  expectations\n";
    for (const auto& e : run.expectations) {
      out << "    " << (e.passed ? "pass" : "FAIL") << "  " << e.text;
      if (!e.detail.empty()) out << " (" << e.detail << ")";
      out << "\n";
    }
  }
  terminal << printable_lines(out.str());
}

}  // namespace pgslow::report
