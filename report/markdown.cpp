#include <fmt/format.h>

#include <algorithm>
#include <ostream>
#include <set>

#include "report/attribution_view.h"
#include "report/audit.h"
#include "report/axes_view.h"
#include "report/curve.h"
#include "report/load_columns.h"
#include "report/registry.h"
#include "report/text.h"
#include "results/evidence_info.h"
#include "results/stats.h"
#include "results/summary.h"

namespace pgslow::report {

namespace {

std::string knobs_cell(const StageResult& stage) {
  if (stage.changes.empty()) return "—";
  std::string text;
  for (const auto& c : stage.changes)
    text += (text.empty() ? "" : "<br>") + markdown_cell(describe_change(c));
  return text;
}

// One row per stage: its knobs, throughput, verdict, load columns and the evidence that moved.
void stages_table(const Run& run, const std::vector<StageSummary>& summaries, std::ostream& out) {
  const bool cumulative = run.mode != "isolated";
  const auto columns = load_columns(run);
  // The server's CPU per transaction, when a local server gave it.
  const bool cpu = std::any_of(summaries.begin(), summaries.end(),
                               [](const StageSummary& s) { return s.cpu_vs_baseline.has_value(); });
  out << "\n## Stages\n\n"
      << "| Stage | Knobs changed | TPS | Transactions | vs baseline | TPS interval |"
      << (cpu ? " CPU/tx vs baseline |" : "") << (cumulative ? " vs previous |" : "") << " p99 |";
  for (const auto& c : columns) out << " " << markdown_cell(c.header) << " |";
  out << " Evidence that moved most |\n|---|---|--:|--:|--:|--:|" << (cpu ? "--:|" : "")
      << (cumulative ? "--:|" : "") << "--:|";
  for (std::size_t i = 0; i < columns.size(); ++i) out << "--:|";
  out << "---|\n";
  for (const auto& s : summaries) {
    const StageResult& stage = run.stages[s.index];
    std::string tps = s.ran ? s.tps_text : "**failed**";
    if (!s.note.empty()) tps += "<br>(" + s.note + ")";
    if (!s.headline_text.empty()) tps += "<br>" + markdown_cell(s.headline_text);
    if (!s.retries_text.empty()) tps += "<br>retries: " + markdown_cell(s.retries_text);
    for (const auto& w : s.headline_warnings) tps += "<br>**warning:** " + markdown_cell(w);
    std::string evidence;
    for (const auto& m : s.movers)
      evidence += (evidence.empty() ? "" : "<br>") + markdown_cell(m.text);
    out << "| " << markdown_cell(stage.name) << " | " << knobs_cell(stage) << " | " << tps << " | "
        << (s.ran ? s.transactions_text : "—") << " | " << markdown_cell(verdict_cell(s))
        << (s.design.empty() ? "" : "<br>(" + s.design + ")") << " | "
        << interval_text(s.vs_baseline) << " | ";
    if (cpu) out << (s.cpu_vs_baseline ? cost_change_text(*s.cpu_vs_baseline) : "—") << " | ";
    if (cumulative) out << (s.vs_previous ? s.vs_previous->text : "—") << " | ";
    out << (s.ran ? format_latency_us(s.p99_us) : "—") << " | ";
    const Measurement* m = s.ran ? median_repeat(stage) : nullptr;
    for (const auto& c : columns) out << markdown_cell(c.cell(stage, m)) << " | ";
    out << (evidence.empty() ? "—" : evidence) << " |\n";
  }
}

// Every axis of the stages measured on more than one, and where each stage's time went.
void axes_and_waits(const Run& run, const std::vector<StageSummary>& summaries, std::ostream& out) {
  if (std::any_of(summaries.begin(), summaries.end(),
                  [](const StageSummary& s) { return s.axes.size() > 1; })) {
    out << "\n## Every axis\n\nEach stage against the baseline on every axis it measured, "
           "from the stage's own design; Holm's rule over a stage's axes keeps the chance of any "
           "wrong verdict at 5% (docs/reading-the-report.md \"The axes\").\n\n";
    for (const auto& s : summaries) {
      if (s.axes.size() <= 1) continue;
      out << "- **" << markdown_cell(run.stages[s.index].name)
          << "**: " << markdown_cell(s.verdict.sentence);
      for (const auto& item : axis_items(s, true)) out << "<br>" << markdown_cell(item);
      out << "\n";
    }
  }
  if (std::any_of(summaries.begin(), summaries.end(),
                  [](const StageSummary& s) { return !s.waits_text.empty(); })) {
    out << "\n## Where the time went\n\nShare of the backends' time in each wait, sampled from "
           "pg_stat_activity (CPU: running, no wait; (/proc): a sleep PostgreSQL does not report, "
           "read from /proc); see docs/evidence.md.\n\n";
    for (const auto& s : summaries)
      if (!s.waits_text.empty())
        out << "- **" << markdown_cell(run.stages[s.index].name)
            << "**: " << markdown_cell(s.waits_text) << "\n";
  }
}

// A sweep's curve table per dimension (and series), with its knee.
void sweep_sections(const Run& run, std::ostream& out) {
  for (const auto& curve : sweep_curves(run)) {
    out << "\n## Sweep over " << markdown_cell(dimension_label(curve.dimension))
        << (curve.series.empty() ? "" : " (" + markdown_cell(curve.series) + ")") << "\n\n";
    const CurveTable ct = curve_table(curve);
    TextTable t{ct.header, std::vector<bool>(ct.header.size(), true), ct.rows};
    if (!t.right.empty()) t.right.back() = false;  // the knee's note
    out << markdown_table(t);
    out << "\n" << markdown_cell(describe_knee(curve)) << "\n";
  }
}

// The stages' attributions, a table each.
void attribution_sections(const Run& run, std::ostream& out) {
  bool any_attribution = false;
  for (const auto& stage : run.stages) any_attribution = any_attribution || stage.attribution;
  if (any_attribution) {
    out << "\n## Which knob did it\n\nEach knob alone against the reference, with its 95% "
           "interval from the repeated runs; knobs found harmless together share one "
           "measurement (docs/reading-the-report.md).\n";
    for (const auto& stage : run.stages) {
      if (!stage.attribution) continue;
      const Attribution& a = *stage.attribution;
      out << "\n### " << markdown_cell(stage.name) << "\n\n**" << markdown_cell(a.headline)
          << "**\n\n";
      out << markdown_table(attribution_table(a));
      out << "\nvs " << markdown_cell(a.reference) << "; " << describe_attribution_cost(a)
          << (a.note.empty() ? "" : "; " + markdown_cell(a.note)) << "\n";
    }
  }
}

// What did not go as planned: skipped knobs, warnings, failed stages, and the expectations.
void skipped_warnings_failures(const Run& run, std::ostream& out) {
  bool any_skipped = false;
  for (const auto& stage : run.stages) any_skipped = any_skipped || !stage.skipped.empty();
  if (any_skipped) {
    TextTable table;
    table.header = {"Stage", "Knob", "Value", "Reason"};
    for (const auto& stage : run.stages) {
      for (const auto& k : stage.skipped)
        table.rows.push_back({stage.name, k.name, k.value, k.reason});
    }
    out << "\n## Skipped knobs\n\n" << markdown_table(table);
  }
  bool any_warning = false;
  for (const auto& stage : run.stages) any_warning = any_warning || !stage.warnings.empty();
  if (any_warning) {
    out << "\n## Warnings\n\n";
    for (const auto& stage : run.stages) {
      for (const auto& w : stage.warnings)
        out << "- **" << markdown_cell(stage.name) << "**: " << markdown_cell(w) << "\n";
    }
  }
  bool any_error = false;
  for (const auto& stage : run.stages) any_error = any_error || !stage.error.empty();
  if (any_error) {
    out << "\n## Failed stages\n\n";
    for (const auto& stage : run.stages) {
      if (!stage.error.empty())
        out << "- **" << markdown_cell(stage.name) << "**: " << markdown_cell(stage.error) << "\n";
    }
  }
  if (!run.expectations.empty()) {
    out << "\n## Expectations\n\n";
    for (const auto& e : run.expectations) {
      out << "- " << (e.passed ? "pass" : "**FAIL**") << ": " << markdown_cell(e.text);
      if (!e.detail.empty()) out << " (" << markdown_cell(e.detail) << ")";
      out << "\n";
    }
  }
}

void evidence_table(const Run& run, std::ostream& out) {
  // Every evidence key any stage has, normalised so stages of different lengths compare.
  std::map<std::string, double> all_keys;
  for (const auto& stage : run.stages) {
    for (const auto& [key, v] : stage.evidence) {
      if (evidence_info(key).scale != EvidenceScale::kDriver) all_keys[key] = v;
    }
  }
  if (!all_keys.empty()) {
    TextTable table;
    table.header = {"Evidence"};
    table.right = {false};
    for (const auto& stage : run.stages) {
      table.header.push_back(stage.name);
      table.right.push_back(true);
    }
    for (const auto& key : ordered_keys(all_keys)) {
      std::vector<std::string> row{evidence_label(key)};
      for (const auto& stage : run.stages) {
        const auto v = normalised_evidence(stage, key);
        row.push_back(v ? format_evidence_value(key, *v) : "—");
      }
      table.rows.push_back(row);
    }
    out << "\n## Evidence\n\nPer transaction (/tx), per minute (/min), or over the whole window "
           "(ratios and levels); see docs/evidence.md.\n\n"
        << markdown_table(table);
  }
}

}  // namespace

void render_markdown(const Run& run, std::ostream& out) {
  out << "# pgslow report: " << markdown_cell(run.scenario.empty() ? "(unnamed)" : run.scenario)
      << "\n\n";
  if (!run.description.empty()) out << markdown_text(run.description) << "\n\n";
  out << "| | |\n|---|---|\n";
  for (const auto& [label, value] : run_facts(run)) {
    out << "| " << label << " | " << markdown_cell(value) << " |\n";
  }

  const auto summaries = summarize(run);
  stages_table(run, summaries, out);
  axes_and_waits(run, summaries, out);
  sweep_sections(run, out);
  attribution_sections(run, out);
  // The workload's audit of each stage (TPC-C-lite: the rules the tpmC label needs).
  for (const auto& a : stage_audits(run))
    out << "\n## Audit: " << markdown_cell(a.stage->name) << "\n\n"
        << markdown_cell(audit_summary(*a.rows)) << " (docs/tpcc-lite.md \"The audit\")\n\n"
        << markdown_table(audit_table(*a.rows));

  skipped_warnings_failures(run, out);
  evidence_table(run, out);
}

}  // namespace pgslow::report
