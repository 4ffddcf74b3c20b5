#pragma once
// Every result pgslow renders, by result type and format, in one table (report/registry.cpp).
// A command asks the registry for a format by name; a results folder writes every registered
// file format of its result. A new format is its renderer plus one line in that table.

#include <filesystem>
#include <span>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "report/views.h"
#include "report/workshop.h"
#include "results/bench.h"
#include "results/bisect.h"
#include "results/catalog.h"
#include "results/check_data.h"
#include "results/cliff.h"
#include "results/knob_list.h"
#include "results/plan.h"
#include "results/versions.h"

namespace pgslow::report {

// `pgslow report --compare`: the same scenario run twice, per stage side by side with the
// difference. Stages are matched by name.
struct RunComparison {
  const Run& a;
  const Run& b;
  std::string label_a;
  std::string label_b;
};

template <typename Result>
struct Renderer {
  std::string_view format;     // the name commands take: "console", "md", "json", "csv", "html"
  std::string_view extension;  // a file of this format: "txt", "md", ...
  void (*render)(const Result&, std::ostream&);
};

// The renderers of one result type, console first, then the files a results folder holds.
template <typename Result>
std::span<const Renderer<Result>> renderers();
template <>
std::span<const Renderer<Run>> renderers();
template <>
std::span<const Renderer<RunComparison>> renderers();
template <>
std::span<const Renderer<VersionRuns>> renderers();
template <>
std::span<const Renderer<BisectResult>> renderers();
template <>
std::span<const Renderer<BenchResult>> renderers();
template <>
std::span<const Renderer<CliffResult>> renderers();
template <>
std::span<const Renderer<PlanResult>> renderers();
template <>
std::span<const Renderer<CheckDataResult>> renderers();
template <>
std::span<const Renderer<KnobList>> renderers();
template <>
std::span<const Renderer<KnobDetail>> renderers();
template <>
std::span<const Renderer<PresetList>> renderers();
template <>
std::span<const Renderer<PresetDetail>> renderers();
template <>
std::span<const Renderer<Reveal>> renderers();
template <>
std::span<const Renderer<CliffReveal>> renderers();
template <>
std::span<const Renderer<LessonList>> renderers();
template <>
std::span<const Renderer<MysteryClues>> renderers();
template <>
std::span<const Renderer<MysteryReveal>> renderers();
template <>
std::span<const Renderer<FixResult>> renderers();
template <>
std::span<const Renderer<FixScoreboard>> renderers();
template <>
std::span<const Renderer<SessionRecord>> renderers();

// "markdown" is taken for "md". nullptr: not a format of this result.
template <typename Result>
const Renderer<Result>* find_renderer(std::string_view format) {
  if (format == "markdown") format = "md";
  for (const auto& r : renderers<Result>()) {
    if (r.format == format) return &r;
  }
  return nullptr;
}

template <typename Result>
std::vector<std::string> formats() {
  std::vector<std::string> out;
  for (const auto& r : renderers<Result>()) out.emplace_back(r.format);
  return out;
}

// An unknown format: an InputError naming the formats this result has, the closest as a hint.
[[noreturn]] void unknown_format(std::string_view format, const std::vector<std::string>& known);

// --format: one of the result's formats, checked before a command reads or measures anything.
template <typename Result>
void check_format(std::string_view format) {
  if (find_renderer<Result>(format) == nullptr) unknown_format(format, formats<Result>());
}

template <typename Result>
void render(const Result& result, std::string_view format, std::ostream& out) {
  const Renderer<Result>* r = find_renderer<Result>(format);
  if (r == nullptr) unknown_format(format, formats<Result>());
  r->render(result, out);
}

template <typename Result>
std::string rendered(const Result& result, std::string_view format) {
  std::ostringstream out;
  render(result, format, out);
  return out.str();
}

// A results folder: every file format the registry has for the result (the console's text
// goes to the terminal). A run's folder also gets one server log excerpt per stage in logs/.
void write_results(const Run& run, const std::filesystem::path& dir);              // report.md, ...
void write_versions(const VersionRuns& runs, const std::filesystem::path& dir);    // versions.md
void write_reveal(const Reveal& reveal, const std::filesystem::path& dir);         // reveal.md
void write_reveal(const CliffReveal& reveal, const std::filesystem::path& dir);    // reveal.md
void write_record(const SessionRecord& record, const std::filesystem::path& dir);  // record.md

// How the console shows a run: one line per stage fitting `width` columns, or with `detail`
// every axis, the evidence, waits, warnings and the attribution under each stage.
struct ConsoleOptions {
  bool detail = false;
  std::size_t width = 100;
};

// One run: aligned plain text for a terminal (one line per stage, as wide as the terminal:
// output_columns()); Markdown; every number of the run (docs/report-schema.md, read back by
// read_json); one CSV row per stage (RFC 4180); one self-contained HTML file (inline CSS and
// JS, no network).
void render_console(const Run& run, std::ostream& out);
void render_console(const Run& run, std::ostream& out, const ConsoleOptions& options);
void render_markdown(const Run& run, std::ostream& out);
void render_json(const Run& run, std::ostream& out);
void render_csv(const Run& run, std::ostream& out);
void render_html(const Run& run, std::ostream& out);

}  // namespace pgslow::report
