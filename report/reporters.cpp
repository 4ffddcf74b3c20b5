#include <fmt/format.h>

#include <algorithm>
#include <ostream>

#include "report/reporter.h"
#include "report/stats.h"
#include "report/summary.h"
#include "report/text.h"

namespace pgslow::report {

const std::vector<std::string>& report_formats() {
  static const std::vector<std::string> formats = {"console", "md", "json", "csv", "html"};
  return formats;
}

std::unique_ptr<Reporter> make_reporter(std::string_view format) {
  if (format == "console") return std::make_unique<ConsoleReporter>();
  if (format == "md" || format == "markdown") return std::make_unique<MarkdownReporter>();
  if (format == "json") return std::make_unique<JsonReporter>();
  if (format == "csv") return std::make_unique<CsvReporter>();
  if (format == "html") return std::make_unique<HtmlReporter>();
  return nullptr;
}

void render_comparison(const Run& a, const Run& b, const std::string& label_a,
                       const std::string& label_b, bool markdown, std::ostream& out) {
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
        << "- **B** " << markdown_cell(label_b) << ": " << markdown_cell(describe(b)) << "\n\n|";
    for (const auto& h : table.header) out << " " << h << " |";
    out << "\n|---|";
    for (std::size_t i = 1; i < table.header.size(); ++i) out << "--:|";
    out << "\n";
    for (const auto& row : table.rows) {
      out << "|";
      for (const auto& cell : row) out << " " << markdown_cell(cell) << " |";
      out << "\n";
    }
    return;
  }
  out << "pgslow compare: " << a.scenario << "\n"
      << "  A  " << label_a << ": " << describe(a) << "\n"
      << "  B  " << label_b << ": " << describe(b) << "\n\n"
      << table.render("  ");
}

}  // namespace pgslow::report
