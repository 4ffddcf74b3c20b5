#pragma once
// Report renderers over the plain result structs, with the output stream injected so tests
// capture it (Google Benchmark's reporter shape). What each format says about a stage is
// decided once in summary.h; the renderers only lay it out.

#include <filesystem>
#include <iosfwd>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "report/views.h"

namespace pgslow::report {

class Reporter {
 public:
  virtual ~Reporter() = default;
  virtual void report(const Run& run, std::ostream& out) const = 0;
  virtual std::string_view extension() const = 0;  // "md", "json", ...
};

// Aligned plain text for a terminal, fits 100 columns.
class ConsoleReporter : public Reporter {
 public:
  void report(const Run& run, std::ostream& out) const override;
  std::string_view extension() const override { return "txt"; }
};

class MarkdownReporter : public Reporter {
 public:
  void report(const Run& run, std::ostream& out) const override;
  std::string_view extension() const override { return "md"; }
};

// Every number of the run, schema in docs/report-schema.md; read back by read_json.
class JsonReporter : public Reporter {
 public:
  void report(const Run& run, std::ostream& out) const override;
  std::string_view extension() const override { return "json"; }
};

// One row per stage, RFC 4180 quoting, for spreadsheets.
class CsvReporter : public Reporter {
 public:
  void report(const Run& run, std::ostream& out) const override;
  std::string_view extension() const override { return "csv"; }
};

// One self-contained file (inline CSS and JS, no network): TPS bars with a log-scale toggle,
// TPS over time per stage, the evidence table.
class HtmlReporter : public Reporter {
 public:
  void report(const Run& run, std::ostream& out) const override;
  std::string_view extension() const override { return "html"; }
};

// The names make_reporter accepts.
const std::vector<std::string>& report_formats();
// nullptr for an unknown name.
std::unique_ptr<Reporter> make_reporter(std::string_view format);

// A run's results folder: report.md/.json/.csv/.html and one server log excerpt per stage, in
// `dir`.
void write_results(const Run& run, const std::filesystem::path& dir);

// `pgslow compare`: the same scenario run twice, per stage side by side with the difference.
// Stages are matched by name. `markdown` picks a Markdown table instead of aligned text.
void render_comparison(const Run& a, const Run& b, const std::string& label_a,
                       const std::string& label_b, bool markdown, std::ostream& out);

}  // namespace pgslow::report
