#include "report/axes_view.h"

#include <fmt/format.h>

#include "common/strings.h"
#include "report/text.h"

namespace pgslow::report {

std::string verdict_cell(const StageSummary& s) {
  if (!s.verdict.cell.empty()) return s.verdict.cell;
  return s.vs_baseline ? s.vs_baseline->text : "—";
}

std::string verdict_interval(const StageSummary& s) {
  if (s.verdict.axis != nullptr && s.verdict.axis != &kTpsAxis)
    for (const auto& a : s.axes)
      if (a.axis == s.verdict.axis) return std::string(a.axis->label) + " " + axis_change_text(a);
  return interval_text(s.vs_baseline);
}

bool verdict_needs_sentence(const StageSummary& s) {
  return s.vs_baseline && !s.verdict.sentence.empty() && s.verdict.cell != s.vs_baseline->text;
}

std::vector<std::string> axis_items(const StageSummary& s, bool with_cpu) {
  return axis_items(s.axes, with_cpu);
}

std::vector<std::string> axis_items(const std::vector<AxisChange>& axes, bool with_cpu) {
  std::vector<std::string> out;
  for (const auto& a : axes) {
    if (a.axis == &kTpsAxis || (a.axis == &kCpuAxis && !with_cpu)) continue;
    out.push_back(std::string(a.axis->label) + " " + axis_change_text(a));
  }
  return out;
}

std::vector<std::string> wrap_items(const std::vector<std::string>& items, std::size_t width) {
  std::vector<std::string> lines;
  for (const auto& item : items) {
    if (!lines.empty() && lines.back().size() + 2 + item.size() <= width)
      lines.back() += "; " + item;
    else
      lines.push_back(item);
  }
  return lines;
}

std::string every_axis_text(const std::vector<AxisChange>& axes) {
  const AxesVerdict v = axes_verdict(axes);
  std::vector<std::string> also;
  int quiet = 0;
  for (const auto& a : axes) {
    const std::string label(a.axis->label);
    if (!a.change.interval.known || a.axis == v.axis || v.sentence.find(label) != std::string::npos)
      continue;
    if (a.change.measurable)
      also.push_back(label + " " + axis_change_text(a));
    else
      ++quiet;
  }
  std::string text = v.sentence;
  if (!also.empty()) text += "; also " + join(also, ", ");
  if (quiet > 0 && v.cell != "no measurable effect")
    text += fmt::format("; {} other axis{} within noise", quiet, quiet == 1 ? "" : "es");
  return text;
}

std::vector<std::string> axis_csv_header() {
  std::vector<std::string> header;
  for (const Axis& a : kAxes)
    for (const char* part : {"_ratio", "_low", "_high", "_confidence", "_measurable"})
      header.push_back("axis_" + std::string(a.key) + part);
  return header;
}

std::vector<std::string> axis_csv_cells(const std::vector<AxisChange>& changes) {
  std::vector<std::string> cells;
  for (const Axis& axis : kAxes) {
    const AxisChange* found = nullptr;
    for (const auto& a : changes)
      if (a.axis == &axis) found = &a;
    const bool known = found != nullptr && found->change.interval.known;
    cells.insert(cells.end(),
                 {found != nullptr ? csv_number(found->change.ratio) : "",
                  known ? csv_number(found->change.interval.low) : "",
                  known ? csv_number(found->change.interval.high) : "",
                  known ? csv_number(found->change.interval.confidence) : "",
                  found != nullptr ? (found->change.measurable ? "true" : "false") : ""});
  }
  return cells;
}

}  // namespace pgslow::report
