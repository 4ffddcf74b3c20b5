#include "report/plan_view.h"

#include <fmt/format.h>

#include <algorithm>
#include <nlohmann/json.hpp>
#include <ostream>

#include "report/json_fields.h"
#include "report/text.h"
#include "results/axes.h"
#include "results/load_fields.h"

namespace pgslow::report {

namespace {

std::string measure_text(const PlanResult& p) {
  return fmt::format("warm-up {:g} s, {:g} s per run, {} repeat{}, mode {}", p.warmup_s,
                     p.duration_s, p.repeats, p.repeats == 1 ? "" : "s", p.mode);
}

std::string workload_text(const PlanResult& p) {
  return fmt::format("{}, scale {}, {} clients", p.workload, p.scale, p.clients);
}

// "tested first: TPS, CPU/tx, server log/tx": the axes its verdict tests first and headlines.
std::string own_axes_text(const PlanStage& st) {
  std::string labels;
  for (const auto& key : st.own_axes)
    if (const Axis* a = find_axis(key))
      labels += (labels.empty() ? "" : ", ") + std::string(a->label);
  return "tested first: " + labels + " (the axes its changes are known to move)";
}

std::string attribution_text(const PlanStage& st) {
  return fmt::format(
      "attribute: {} knobs as {} units, about {} extra runs (at most {}) to name each one's part",
      st.changes.size(), st.attribution_units, st.attribution_runs, st.attribution_max_runs);
}

std::string estimate_text(const PlanResult& p) {
  return fmt::format(
      "Estimated time: about {:.0f} s of measuring (the baseline again after each stage "
      "included; plus loading the data once; attributions often need fewer runs)",
      p.estimated_seconds);
}

std::string attribution_share_text(const PlanResult& p) {
  return fmt::format("of which attribution: about {} extra runs, {:.0f} s", p.attribution_runs,
                     p.attribution_seconds);
}

std::string envelope_line(const PlanStage& st) {
  return fmt::format("the server's envelope: {} (set in place before the stage)", st.envelope_text);
}

constexpr const char* kNothingChanged =
    "Nothing was changed: `pgslow run` applies this plan and always restores the configuration.";

}  // namespace

void render_plan_console(const PlanResult& p, std::ostream& out) {
  out << fmt::format("Scenario   {}  ({})\n", p.scenario, p.file);
  if (!p.description.empty()) out << fmt::format("           {}\n", p.description);
  out << fmt::format("Server     PostgreSQL {}\n", p.server_version);
  out << fmt::format("Workload   {}\n", workload_text(p));
  out << fmt::format("Measure    {}\n", measure_text(p));
  out << "\n";
  for (std::size_t i = 0; i < p.stages.size(); ++i) {
    const PlanStage& st = p.stages[i];
    out << fmt::format("{}. {}  [{}{}]\n", i, st.name, results::describe_load(st.load),
                       st.needs_restart ? ", restart" : "");
    if (!st.description.empty() && !st.is_baseline) out << fmt::format("   {}\n", st.description);
    std::size_t width = 0;
    for (const auto& c : st.changes) width = std::max(width, c.name.size());
    for (const auto& c : st.changes) {
      out << fmt::format("   {:<{}}  {} -> {}  ({})\n", c.name, width, c.old_value, c.new_value,
                         c.apply_by);
    }
    if (!st.envelope_text.empty()) out << "   " << envelope_line(st) << "\n";
    if (st.changes.empty() && st.envelope_text.empty() && !st.is_baseline)
      out << "   no configuration change\n";
    for (const auto& k : st.skipped) {
      out << fmt::format("   skipped {} = {}: {}\n", k.name, k.value, k.reason);
    }
    for (const auto& w : st.warnings) out << fmt::format("   warning: {}\n", w);
    if (!st.is_baseline && !st.design_why.empty()) out << fmt::format("   {}\n", st.design_why);
    if (!st.own_axes.empty()) out << "   " << own_axes_text(st) << "\n";
    if (st.attribute) out << "   " << attribution_text(st) << "\n";
  }
  out << "\n" << estimate_text(p) << "\n";
  if (p.attribution_runs > 0) out << "  " << attribution_share_text(p) << "\n";
  out << kNothingChanged << "\n";
}

void render_plan_markdown(const PlanResult& p, std::ostream& out) {
  out << "# Plan: " << markdown_text(p.scenario) << "\n\n";
  if (!p.description.empty()) out << markdown_text(p.description) << "\n\n";
  TextTable head;
  head.header = {"", ""};
  head.right = {false, false};
  head.rows = {{"scenario file", p.file},
               {"server", "PostgreSQL " + p.server_version},
               {"workload", workload_text(p)},
               {"measure", measure_text(p)}};
  out << markdown_table(head) << "\n";
  for (std::size_t i = 0; i < p.stages.size(); ++i) {
    const PlanStage& st = p.stages[i];
    out << fmt::format("## {}. {}\n\n", i, markdown_text(st.name));
    if (!st.description.empty() && !st.is_baseline) out << markdown_text(st.description) << "\n\n";
    out << "Load: " << markdown_text(results::describe_load(st.load))
        << (st.needs_restart ? "; the server restarts for it" : "") << ".\n\n";
    if (!st.changes.empty()) {
      TextTable t;
      t.header = {"knob", "from", "to", "applied by"};
      t.right = {false, false, false, false};
      for (const auto& c : st.changes)
        t.rows.push_back({c.name, c.old_value, c.new_value, c.apply_by});
      out << markdown_table(t) << "\n";
    } else if (st.envelope_text.empty() && !st.is_baseline) {
      out << "No configuration change.\n\n";
    }
    std::vector<std::string> notes;
    if (!st.envelope_text.empty()) notes.push_back(envelope_line(st));
    for (const auto& k : st.skipped)
      notes.push_back(fmt::format("skipped {} = {}: {}", k.name, k.value, k.reason));
    for (const auto& w : st.warnings) notes.push_back("warning: " + w);
    if (!st.is_baseline && !st.design_why.empty()) notes.push_back(st.design_why);
    if (!st.own_axes.empty()) notes.push_back(own_axes_text(st));
    if (st.attribute) notes.push_back(attribution_text(st));
    for (const auto& n : notes) out << "- " << markdown_text(n) << "\n";
    if (!notes.empty()) out << "\n";
  }
  out << markdown_text(estimate_text(p));
  if (p.attribution_runs > 0) out << "; " << markdown_text(attribution_share_text(p));
  // Our own sentence: its backticks are code, not text to escape.
  out << ".\n\n" << kNothingChanged << "\n";
}

nlohmann::ordered_json plan_to_json(const PlanResult& p) {
  using nlohmann::ordered_json;
  ordered_json j;
  j["scenario"] = p.scenario;
  j["file"] = p.file;
  j["description"] = p.description;
  j["server_version"] = p.server_version;
  j["workload"] = {{"name", p.workload}, {"scale", p.scale}, {"clients", p.clients}};
  j["measure"] = {{"warmup_s", p.warmup_s},
                  {"duration_s", p.duration_s},
                  {"repeats", p.repeats},
                  {"mode", p.mode}};
  ordered_json stages = ordered_json::array();
  for (const PlanStage& st : p.stages) {
    ordered_json s;
    s["name"] = st.name;
    s["description"] = st.description;
    s["baseline"] = st.is_baseline;
    // The load, knob changes and skipped knobs under report.json's keys (json_fields.h), so
    // a plan and the run's report name them alike.
    s["load"] = json_schema::write_value(st.load);
    s["needs_restart"] = st.needs_restart;
    if (!st.envelope_text.empty()) s["envelope"] = st.envelope_text;
    s["changes"] = json_schema::write_value(st.changes);
    s["skipped"] = json_schema::write_value(st.skipped);
    s["warnings"] = st.warnings;
    s["design"] = st.design_why;
    if (!st.own_axes.empty()) s["own_axes"] = st.own_axes;
    if (st.attribute)
      s["attribution"] = {{"units", st.attribution_units},
                          {"expected_runs", st.attribution_runs},
                          {"max_runs", st.attribution_max_runs}};
    stages.push_back(s);
  }
  j["stages"] = stages;
  j["estimated_seconds"] = p.estimated_seconds;
  j["attribution_runs"] = p.attribution_runs;
  j["attribution_seconds"] = p.attribution_seconds;
  return j;
}

}  // namespace pgslow::report
