#include "report/registry.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cctype>
#include <nlohmann/json.hpp>
#include <ostream>
#include <sstream>
#include <stdexcept>
#include <type_traits>

#include "common/errors.h"
#include "common/paths.h"
#include "common/safe_fs.h"
#include "common/strings.h"
#include "report/bench_view.h"
#include "report/bisect_view.h"
#include "report/catalog_view.h"
#include "report/check_data_view.h"
#include "report/cliff_view.h"
#include "report/knob_list_view.h"
#include "report/plan_view.h"
#include "report/text.h"
#include "report/versions_view.h"
#include "results/stats.h"
#include "results/summary.h"

namespace pgslow::report {

namespace {

// Console and Markdown share the matching of stages and differ only in the layout.
void render_comparison(const RunComparison& c, bool markdown, std::ostream& out) {
  const Run& a = c.a;
  const Run& b = c.b;
  const std::string& label_a = c.label_a;
  const std::string& label_b = c.label_b;
  const auto sa = summarize(a);
  const auto sb = summarize(b);
  auto find = [](const Run& run, const std::vector<StageSummary>& sums,
                 const std::string& name) -> const StageSummary* {
    for (const auto& s : sums) {
      if (run.stages[s.index].name == name) return &s;
    }
    return nullptr;
  };
  // Stage order of A, then stages only B has.
  std::vector<std::string> names;
  for (const auto& st : a.stages) names.push_back(st.name);
  for (const auto& st : b.stages) {
    if (std::find(names.begin(), names.end(), st.name) == names.end()) names.push_back(st.name);
  }
  auto tps = [](const StageSummary* s) {
    if (s == nullptr) return std::string("—");
    if (!s->ran) return std::string("failed");
    return s->note.empty() ? s->tps_text : s->tps_text + " (" + s->note + ")";
  };
  auto p99 = [](const StageSummary* s) {
    return s != nullptr && s->ran ? format_latency_us(s->p99_us) : std::string("—");
  };
  TextTable table;
  table.header = {"stage", "TPS A", "TPS B", "B vs A", "p99 A", "p99 B"};
  table.right = {false, true, true, true, true, true};
  for (const auto& name : names) {
    const StageSummary* x = find(a, sa, name);
    const StageSummary* y = find(b, sb, name);
    std::string diff = "—";
    if (x != nullptr && y != nullptr && x->ran && y->ran) {
      const StageResult& stage_a = a.stages[x->index];
      const StageResult& stage_b = b.stages[y->index];
      diff = compare_stages(stage_b, stage_a).text;
    }
    table.rows.push_back({name, tps(x), tps(y), diff, p99(x), p99(y)});
  }
  auto describe = [](const Run& run) {
    return fmt::format(
        "{}, {}, {}, {}", run.server_version.empty() ? "unknown server" : run.server_version,
        describe_workload(run), describe_clients(run), describe_machine(run.machine));
  };
  if (a.scenario != b.scenario) {
    out << (markdown ? "> " : "") << "note: different scenarios (" << a.scenario << " and "
        << b.scenario << "): stages are matched by name\n\n";
  }
  if (a.server_major != b.server_major) {
    out << (markdown ? "> " : "") << "note: different PostgreSQL versions ("
        << (a.server_version.empty() ? std::to_string(a.server_major) : a.server_version) << " and "
        << (b.server_version.empty() ? std::to_string(b.server_major) : b.server_version)
        << "): the difference includes the versions' own, not only the configuration's\n\n";
  }
  if (a.envelope != b.envelope) {
    auto shown = [](const Run& run) {
      return run.envelope.empty() ? std::string("none") : run.envelope;
    };
    out << (markdown ? "> " : "") << "note: different envelopes (" << shown(a) << " and "
        << shown(b) << "): the server had a different machine in each run\n\n";
  }
  if (markdown) {
    out << "# pgslow compare: " << markdown_cell(a.scenario) << "\n\n"
        << "- **A** " << markdown_cell(label_a) << ": " << markdown_cell(describe(a)) << "\n"
        << "- **B** " << markdown_cell(label_b) << ": " << markdown_cell(describe(b)) << "\n\n";
    out << markdown_table(table);
    return;
  }
  out << "pgslow compare: " << a.scenario << "\n"
      << "  A  " << label_a << ": " << describe(a) << "\n"
      << "  B  " << label_b << ": " << describe(b) << "\n\n"
      << table.render("  ");
}

// The JSON renderers of the searches and bench: their document, pretty-printed.
template <auto document>
void json_file(const auto& result, std::ostream& out) {
  out << document(result).dump(2) << "\n";
}

}  // namespace

// The table: every result type and its formats, console first.
template <>
std::span<const Renderer<Run>> renderers() {
  static constexpr Renderer<Run> table[] = {{"console", "txt", render_console},
                                            {"md", "md", render_markdown},
                                            {"json", "json", render_json},
                                            {"csv", "csv", render_csv},
                                            {"html", "html", render_html}};
  return table;
}

template <>
std::span<const Renderer<RunComparison>> renderers() {
  static constexpr Renderer<RunComparison> table[] = {
      {"console", "txt",
       [](const RunComparison& c, std::ostream& out) { render_comparison(c, false, out); }},
      {"md", "md",
       [](const RunComparison& c, std::ostream& out) { render_comparison(c, true, out); }}};
  return table;
}

template <>
std::span<const Renderer<VersionRuns>> renderers() {
  static constexpr Renderer<VersionRuns> table[] = {{"console", "txt", render_versions_console},
                                                    {"md", "md", render_versions_markdown},
                                                    {"json", "json", render_versions_json},
                                                    {"csv", "csv", render_versions_csv},
                                                    {"html", "html", render_versions_html}};
  return table;
}

template <>
std::span<const Renderer<BisectResult>> renderers() {
  static constexpr Renderer<BisectResult> table[] = {{"console", "txt", render_bisect_console},
                                                     {"md", "md", render_bisect_markdown},
                                                     {"json", "json", json_file<bisect_to_json>}};
  return table;
}

template <>
std::span<const Renderer<BenchResult>> renderers() {
  static constexpr Renderer<BenchResult> table[] = {{"console", "txt", render_bench_console},
                                                    {"json", "json", json_file<bench_to_json>}};
  return table;
}

template <>
std::span<const Renderer<PlanResult>> renderers() {
  static constexpr Renderer<PlanResult> table[] = {{"console", "txt", render_plan_console},
                                                   {"md", "md", render_plan_markdown},
                                                   {"json", "json", json_file<plan_to_json>}};
  return table;
}

template <>
std::span<const Renderer<CheckDataResult>> renderers() {
  static constexpr Renderer<CheckDataResult> table[] = {
      {"console", "txt", render_check_data_console},
      {"md", "md", render_check_data_markdown},
      {"json", "json", json_file<check_data_to_json>}};
  return table;
}

template <>
std::span<const Renderer<KnobList>> renderers() {
  static constexpr Renderer<KnobList> table[] = {{"console", "txt", render_knob_list_console},
                                                 {"md", "md", render_knob_list_markdown},
                                                 {"json", "json", json_file<knob_list_to_json>}};
  return table;
}

template <>
std::span<const Renderer<KnobDetail>> renderers() {
  static constexpr Renderer<KnobDetail> table[] = {
      {"console", "txt", render_knob_detail_console},
      {"md", "md", render_knob_detail_markdown},
      {"json", "json", json_file<knob_detail_to_json>}};
  return table;
}

template <>
std::span<const Renderer<PresetList>> renderers() {
  static constexpr Renderer<PresetList> table[] = {
      {"console", "txt", render_preset_list_console},
      {"md", "md", render_preset_list_markdown},
      {"json", "json", json_file<preset_list_to_json>}};
  return table;
}

template <>
std::span<const Renderer<PresetDetail>> renderers() {
  static constexpr Renderer<PresetDetail> table[] = {
      {"console", "txt", render_preset_detail_console},
      {"md", "md", render_preset_detail_markdown},
      {"json", "json", json_file<preset_detail_to_json>}};
  return table;
}

template <>
std::span<const Renderer<Reveal>> renderers() {
  static constexpr Renderer<Reveal> table[] = {{"console", "txt", render_reveal},
                                               {"md", "md", render_reveal_markdown},
                                               {"json", "json", json_file<reveal_to_json>}};
  return table;
}

template <>
std::span<const Renderer<CliffReveal>> renderers() {
  static constexpr Renderer<CliffReveal> table[] = {
      {"console", "txt", render_cliff_reveal},
      {"md", "md", render_cliff_reveal_markdown},
      {"json", "json", json_file<cliff_reveal_to_json>}};
  return table;
}

template <>
std::span<const Renderer<LessonList>> renderers() {
  static constexpr Renderer<LessonList> table[] = {
      {"console", "txt", render_lesson_list_console},
      {"md", "md", render_lesson_list_markdown},
      {"json", "json", json_file<lesson_list_to_json>}};
  return table;
}

template <>
std::span<const Renderer<MysteryClues>> renderers() {
  static constexpr Renderer<MysteryClues> table[] = {{"console", "txt", render_clues_console},
                                                     {"md", "md", render_clues_markdown},
                                                     {"json", "json", json_file<clues_to_json>}};
  return table;
}

template <>
std::span<const Renderer<MysteryReveal>> renderers() {
  static constexpr Renderer<MysteryReveal> table[] = {
      {"console", "txt", render_mystery_reveal_console},
      {"md", "md", render_mystery_reveal_markdown},
      {"json", "json", json_file<mystery_reveal_to_json>}};
  return table;
}

template <>
std::span<const Renderer<FixResult>> renderers() {
  static constexpr Renderer<FixResult> table[] = {{"console", "txt", render_fix_console},
                                                  {"md", "md", render_fix_markdown},
                                                  {"json", "json", json_file<fix_to_json>}};
  return table;
}

template <>
std::span<const Renderer<FixScoreboard>> renderers() {
  static constexpr Renderer<FixScoreboard> table[] = {
      {"console", "txt", render_scoreboard_console},
      {"md", "md", render_scoreboard_markdown},
      {"json", "json", json_file<scoreboard_to_json>}};
  return table;
}

template <>
std::span<const Renderer<SessionRecord>> renderers() {
  static constexpr Renderer<SessionRecord> table[] = {{"console", "txt", render_record_console},
                                                      {"md", "md", render_record_markdown},
                                                      {"json", "json", json_file<record_to_json>}};
  return table;
}

template <>
std::span<const Renderer<CliffResult>> renderers() {
  static constexpr Renderer<CliffResult> table[] = {{"console", "txt", render_cliff_console},
                                                    {"md", "md", render_cliff_markdown},
                                                    {"json", "json", json_file<cliff_to_json>},
                                                    {"csv", "csv", render_cliff_csv},
                                                    {"html", "html", render_cliff_html}};
  return table;
}

namespace {

// A results folder is checked as the workdir is, and made if missing, before anything is written
// (a `results` another user planted as a link is refused); each file is written as a new file
// and renamed into place, so a symlink planted under its name is replaced, never written
// through; a write that fails is an error, not a short file. What holds the server log (the log
// excerpts, a run's report.json) is 0600 as server.log is: bind parameters are in it.
void write_report_file(const std::filesystem::path& path, const std::string& text,
                       unsigned mode = 0644) {
  write_file_durably(path, text, mode);
}

template <typename Result>
constexpr bool holds_server_log(std::string_view format) {
  return format == "json" && (std::is_same_v<Result, Run> || std::is_same_v<Result, VersionRuns>);
}

template <typename Result>
void write_every_file(const Result& result, const std::filesystem::path& dir,
                      const std::string& stem) {
  create_output_folders(dir, "the results folder");
  for (const auto& r : renderers<Result>()) {
    if (r.format == "console") continue;
    std::ostringstream out;
    r.render(result, out);
    write_report_file(dir / fmt::format("{}.{}", stem, r.extension), out.str(),
                      holds_server_log<Result>(r.format) ? 0600 : 0644);
  }
}

}  // namespace

void write_results(const Run& run, const std::filesystem::path& dir) {
  write_every_file(run, dir, "report");
  create_output_folders(dir / "logs", "the results folder");
  for (std::size_t i = 0; i < run.stages.size(); ++i) {
    const auto& st = run.stages[i];
    std::string name = fmt::format("{:02}-{}.log", i, st.name);
    for (char& c : name) {
      if (!std::isalnum(static_cast<unsigned char>(c)) && c != '.' && c != '-') c = '_';
    }
    write_report_file(dir / "logs" / name, st.log_excerpt, 0600);
  }
}

void write_versions(const VersionRuns& runs, const std::filesystem::path& dir) {
  write_every_file(runs, dir, "versions");
}

void write_reveal(const Reveal& reveal, const std::filesystem::path& dir) {
  write_every_file(reveal, dir, "reveal");
}

void write_reveal(const CliffReveal& reveal, const std::filesystem::path& dir) {
  write_every_file(reveal, dir, "reveal");
}

void write_record(const SessionRecord& record, const std::filesystem::path& dir) {
  write_every_file(record, dir, "record");
}

void unknown_format(std::string_view format, const std::vector<std::string>& known) {
  const auto hint = closest_match(format, known);
  throw InputError(fmt::format("--format {}: unknown format (one of: {}){}",
                               printable(std::string(format)), join(known, ", "),
                               hint ? "; did you mean " + *hint + "?" : ""));
}

}  // namespace pgslow::report
