#include "report/versions_view.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>
#include <optional>
#include <ostream>
#include <sstream>
#include <stdexcept>

#include "report/text.h"
#include "results/stats.h"
#include "results/summary.h"

namespace pgslow::report {

namespace {

// One version's figures for one stage.
struct Cell {
  bool present = false;  // the version's run has a stage of this name
  bool ran = false;
  double tps = 0;
  std::string tps_text;
  std::uint64_t transactions = 0;
  std::string note;                   // "12 transactions" when few
  std::optional<Change> vs_baseline;  // absent for the baseline itself
};

struct Table {
  std::vector<std::string> versions;     // labels, one per run
  std::vector<std::string> stages;       // names, first run's order, then the others'
  std::vector<std::vector<Cell>> cells;  // [stage][version]
};

Table tabulate(const VersionRuns& v) {
  if (v.runs.empty()) throw std::invalid_argument("versions report: no runs");
  Table t;
  std::vector<std::vector<StageSummary>> sums;
  for (const auto& run : v.runs) {
    t.versions.push_back(version_label(run));
    sums.push_back(summarize(run));
    for (const auto& st : run.stages) {
      if (std::find(t.stages.begin(), t.stages.end(), st.name) == t.stages.end())
        t.stages.push_back(st.name);
    }
  }
  for (const auto& name : t.stages) {
    std::vector<Cell> row;
    for (std::size_t r = 0; r < v.runs.size(); ++r) {
      Cell c;
      for (const auto& s : sums[r]) {
        if (v.runs[r].stages[s.index].name != name) continue;
        c.present = true;
        c.ran = s.ran;
        c.tps = s.tps;
        c.tps_text = s.tps_text;
        c.transactions = s.transactions;
        c.note = s.note;
        if (s.index > 0) c.vs_baseline = s.vs_baseline;
      }
      row.push_back(c);
    }
    t.cells.push_back(row);
  }
  return t;
}

std::string tps_cell(const Cell& c) {
  if (!c.present) return "—";
  if (!c.ran) return "failed";
  return c.note.empty() ? c.tps_text : c.tps_text + " (" + c.note + ")";
}

std::string effect_cell(const Cell& c, bool is_baseline) {
  if (!c.present || !c.ran) return "—";
  if (is_baseline) return "baseline";
  return c.vs_baseline ? c.vs_baseline->text : "—";
}

std::string interval_cell(const Cell& c, bool is_baseline) {
  if (!c.present || !c.ran || is_baseline || !c.vs_baseline) return "—";
  return format_interval(c.vs_baseline->interval);
}

// The effect and its interval in one cell (Markdown, HTML), with the confidence the interval
// is stated at: Holm's rule over the stage's axes states TPS's above 95% (97.5%, 99.4%, ...).
std::string effect_with_interval(const Cell& c) {
  const std::string interval = interval_cell(c, false);
  if (interval == "—") return effect_cell(c, false);
  return effect_cell(c, false) + " · " + format_percent(c.vs_baseline->interval.confidence) + " " +
         interval;
}

// What the intervals' confidence means, under every format's table.
const char* const kConfidenceNote =
    "Each interval is stated at the confidence Holm's rule tested it at over the stage's axes "
    "(TPS, CPU/tx, WAL/tx, ...), so that all of a stage's verdicts together are wrong at most 5% "
    "of the time.";

std::string header_line(const VersionRuns& v) {
  const Run& first = v.runs.front();
  return fmt::format("{}: {}, {}, {}", first.scenario, describe_workload(first),
                     describe_clients(first), describe_measure(first));
}

// Grouped bars, one group per stage and one bar per version, on a log scale when TPS spans
// more than two decades (the planner stage is often 100x slower). Inline SVG: no script.
std::string svg_chart(const Table& t) {
  static constexpr const char* kColours[] = {"#4c72b0", "#dd8452", "#55a868",
                                             "#c44e52", "#8172b3", "#937860"};
  double lo = 0, hi = 0;
  for (const auto& row : t.cells)
    for (const auto& c : row)
      if (c.ran && c.tps > 0) {
        lo = lo == 0 ? c.tps : std::min(lo, c.tps);
        hi = std::max(hi, c.tps);
      }
  if (hi <= 0) return "<p>No stage ran.</p>\n";
  const bool log_scale = hi / lo > 100;
  const double bar = 18, gap = 14, left = 150, width = 760, top = 30;
  const double group = bar * static_cast<double>(t.versions.size()) + gap;
  const double height = top + group * static_cast<double>(t.stages.size()) + 10;
  auto length = [&](double tps) {
    if (tps <= 0) return 0.0;
    const double span = width - left - 90;
    if (!log_scale) return span * tps / hi;
    const double floor = std::log10(lo) - 0.3;
    return span * (std::log10(tps) - floor) / (std::log10(hi) - floor);
  };
  std::string svg = fmt::format(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{0}\" height=\"{1}\" role=\"img\" "
      "aria-label=\"TPS per stage and version\" font-family=\"sans-serif\" font-size=\"12\">\n",
      width, height);
  for (std::size_t r = 0; r < t.versions.size(); ++r) {
    const double x = left + static_cast<double>(r) * 110;
    svg += fmt::format(
        "<rect x=\"{}\" y=\"6\" width=\"12\" height=\"12\" fill=\"{}\"/><text x=\"{}\" "
        "y=\"16\">PostgreSQL {}</text>\n",
        x, kColours[r % 6], x + 16, html_escape(t.versions[r]));
  }
  for (std::size_t s = 0; s < t.stages.size(); ++s) {
    const double y0 = top + group * static_cast<double>(s);
    svg += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"end\">{}</text>\n", left - 8,
                       y0 + group / 2, html_escape(t.stages[s]));
    for (std::size_t r = 0; r < t.versions.size(); ++r) {
      const Cell& c = t.cells[s][r];
      const double y = y0 + bar * static_cast<double>(r);
      const double w = c.ran ? std::max(1.0, length(c.tps)) : 0;
      svg += fmt::format(
          "<rect x=\"{}\" y=\"{}\" width=\"{:.1f}\" height=\"{}\" fill=\"{}\"><title>PostgreSQL "
          "{}: {} TPS</title></rect><text x=\"{:.1f}\" y=\"{}\">{}</text>\n",
          left, y, w, bar - 3, kColours[r % 6], html_escape(t.versions[r]),
          html_escape(tps_cell(c)), left + w + 4, y + bar - 6, html_escape(tps_cell(c)));
    }
  }
  svg += fmt::format("<text x=\"{}\" y=\"{}\" fill=\"#666\">TPS, {} scale</text>\n</svg>\n",
                     width - 150, height - 2, log_scale ? "log" : "linear");
  return svg;
}

}  // namespace

void render_versions_console(const VersionRuns& v, std::ostream& terminal) {
  const Table t = tabulate(v);
  // Names come from files anyone may write: no control character reaches the terminal
  // (as render_console).
  std::ostringstream out;
  out << "pgslow run " << header_line(v) << "\n";
  out << "machine: " << describe_machine(v.runs.front().machine) << "\n\n";
  TextTable table;
  table.header = {"stage", "PostgreSQL", "TPS", "transactions", "effect vs baseline", "interval"};
  table.right = {false, false, true, true, true, true};
  for (std::size_t s = 0; s < t.stages.size(); ++s) {
    for (std::size_t r = 0; r < t.versions.size(); ++r) {
      const Cell& c = t.cells[s][r];
      table.rows.push_back({r == 0 ? t.stages[s] : "", t.versions[r], tps_cell(c),
                            c.present && c.ran ? format_count(c.transactions) : "—",
                            effect_cell(c, s == 0), interval_cell(c, s == 0)});
    }
  }
  out << table.render();
  out << "\nEach effect is against the same version's baseline, measured in the same run.\n"
      << kConfidenceNote << "\n";
  terminal << printable_lines(out.str());
}

void render_versions_markdown(const VersionRuns& v, std::ostream& out) {
  const Table t = tabulate(v);
  out << "# pgslow: " << markdown_cell(v.runs.front().scenario) << " on " << t.versions.size()
      << " PostgreSQL versions\n\n"
      << "- " << markdown_cell(header_line(v)) << "\n"
      << "- machine: " << markdown_cell(describe_machine(v.runs.front().machine)) << "\n\n";
  TextTable table;
  table.header = {"stage"};
  table.right = {false};
  for (const auto& label : t.versions) {
    table.header.push_back("PostgreSQL " + label);
    table.right.push_back(true);
  }
  for (std::size_t s = 0; s < t.stages.size(); ++s) {
    std::vector<std::string> row{t.stages[s]};
    for (const Cell& c : t.cells[s]) {
      std::string text = tps_cell(c);
      if (c.present && c.ran) {
        text = c.tps_text + " TPS" + (c.note.empty() ? "" : " (" + c.note + ")");
        if (s > 0) text += "\n" + effect_with_interval(c);  // markdown_cell: a <br>
      }
      row.push_back(text);
    }
    table.rows.push_back(row);
  }
  out << markdown_table(table);
  out << "\nTPS per version (transactions behind each figure in the JSON and CSV); the line "
         "below is the stage's effect against that version's own baseline, with its interval. "
      << kConfidenceNote << "\n";
  for (const auto& run : v.runs) {
    for (const auto& st : run.stages) {
      for (const auto& k : st.skipped) {
        out << "\n- " << markdown_cell(version_label(run)) << ", " << markdown_cell(st.name)
            << ": skipped " << markdown_cell(describe_skipped(k));
      }
    }
  }
  out << "\n";
}

void render_versions_json(const VersionRuns& v, std::ostream& out) {
  const Table t = tabulate(v);
  nlohmann::json versions = nlohmann::json::array();
  for (const auto& run : v.runs) {
    versions.push_back({{"server_version", run.server_version},
                        {"server_major", run.server_major},
                        {"target", run.target},
                        {"started_at", run.started_at},
                        {"wall_seconds", run.wall_seconds}});
  }
  nlohmann::json stages = nlohmann::json::array();
  for (std::size_t s = 0; s < t.stages.size(); ++s) {
    nlohmann::json by = nlohmann::json::array();
    for (std::size_t r = 0; r < t.versions.size(); ++r) {
      const Cell& c = t.cells[s][r];
      nlohmann::json cell = {
          {"server_major", v.runs[r].server_major}, {"present", c.present}, {"ran", c.ran}};
      if (c.present && c.ran) {
        cell["tps"] = c.tps;
        cell["transactions"] = c.transactions;
        if (c.vs_baseline) {
          cell["vs_baseline"] = {{"ratio", c.vs_baseline->ratio},
                                 {"interval_known", c.vs_baseline->interval.known},
                                 {"interval_low", c.vs_baseline->interval.low},
                                 {"interval_high", c.vs_baseline->interval.high},
                                 {"measurable", c.vs_baseline->measurable},
                                 {"text", c.vs_baseline->text}};
        }
      }
      by.push_back(cell);
    }
    stages.push_back({{"name", t.stages[s]}, {"by_version", by}});
  }
  nlohmann::json doc = {{"kind", "pgslow versions"},
                        {"schema_version", 1},
                        {"scenario", v.runs.front().scenario},
                        {"versions", versions},
                        {"stages", stages}};
  out << doc.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
}

void render_versions_csv(const VersionRuns& v, std::ostream& out) {
  const Table t = tabulate(v);
  out << "stage,server_version,server_major,ran,tps,transactions,ratio_vs_baseline,"
         "ratio_low,ratio_high,measurable,effect\n";
  for (std::size_t s = 0; s < t.stages.size(); ++s) {
    for (std::size_t r = 0; r < t.versions.size(); ++r) {
      const Cell& c = t.cells[s][r];
      if (!c.present) continue;
      const bool has = c.ran && c.vs_baseline.has_value();
      out << csv_field(t.stages[s]) << "," << csv_field(t.versions[r]) << ","
          << v.runs[r].server_major << "," << (c.ran ? "true" : "false") << ","
          << (c.ran ? fmt::format("{:.3f}", c.tps) : "") << ","
          << (c.ran ? std::to_string(c.transactions) : "") << ","
          << (has ? fmt::format("{:.6g}", c.vs_baseline->ratio) : "") << ","
          << (has && c.vs_baseline->interval.known
                  ? fmt::format("{:.6g},{:.6g}", c.vs_baseline->interval.low,
                                c.vs_baseline->interval.high)
                  : ",")
          << "," << (has ? (c.vs_baseline->measurable ? "true" : "false") : "") << ","
          << csv_field(has ? c.vs_baseline->text : "") << "\n";
    }
  }
}

void render_versions_html(const VersionRuns& v, std::ostream& out) {
  const Table t = tabulate(v);
  const std::string title = "pgslow: " + v.runs.front().scenario + " on " +
                            std::to_string(t.versions.size()) + " PostgreSQL versions";
  out << "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>"
      << html_escape(title) << "</title>\n<style>body{font-family:sans-serif;margin:2em}"
      << "table{border-collapse:collapse}td,th{border:1px solid #ccc;padding:4px 8px}"
      << ".num{text-align:right}.effect{color:#555;font-size:90%}</style>\n</head>\n<body>\n"
      << "<h1>" << html_escape(title) << "</h1>\n<p>" << html_escape(header_line(v))
      << "<br>machine: " << html_escape(describe_machine(v.runs.front().machine)) << "</p>\n"
      << svg_chart(t) << "<table>\n<thead><tr><th>Stage</th>";
  for (const auto& label : t.versions)
    out << "<th class=\"num\">PostgreSQL " << html_escape(label) << "</th>";
  out << "</tr></thead>\n<tbody>\n";
  for (std::size_t s = 0; s < t.stages.size(); ++s) {
    out << "<tr><td>" << html_escape(t.stages[s]) << "</td>";
    for (std::size_t r = 0; r < t.versions.size(); ++r) {
      const Cell& c = t.cells[s][r];
      out << "<td class=\"num\">" << html_escape(tps_cell(c));
      if (c.present && c.ran)
        out << "<br><span class=\"effect\">"
            << html_escape(s == 0 ? effect_cell(c, true) : effect_with_interval(c)) << "</span>";
      out << "</td>";
    }
    out << "</tr>\n";
  }
  out << "</tbody>\n</table>\n<p>TPS per version; below it, the stage's effect against that "
         "version's own baseline, with its interval. "
      << kConfidenceNote << "</p>\n</body>\n</html>\n";
}

std::string version_label(const Run& run) {
  const std::string prefix = "PostgreSQL ";
  if (run.server_version.rfind(prefix, 0) == 0) return run.server_version.substr(prefix.size());
  if (!run.server_version.empty()) return run.server_version;
  return std::to_string(run.server_major);
}

}  // namespace pgslow::report
