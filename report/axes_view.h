#pragma once
// A stage's axes (results/axes.h) as the views show them: the verdict's cell, one item per
// axis, and those items wrapped into lines. One place, so every format words them alike.

#include <string>
#include <vector>

#include "report/views.h"
#include "results/summary.h"

namespace pgslow::report {

// The "vs baseline" cell: the verdict naming its axis ("-85.2% (6.7x slower)", "costs +10.6%
// CPU/tx", "no measurable effect"), "—" without a comparison.
std::string verdict_cell(const StageSummary& s);
// The interval beside the verdict: of the axis the verdict names when it is a cost or the tail
// ("CPU/tx +11.0% [+2.0%, +22.0%]"), else TPS's ("[-18.0%, -6.1%]", "—").
std::string verdict_interval(const StageSummary& s);
// Whether the verdict's sentence says more than the cell and the TPS interval beside it.
bool verdict_needs_sentence(const StageSummary& s);
// "WAL/tx +25.0% [+19.1%, +31.2%]", "p99 within noise (could see ±8.0%)": every axis but TPS
// (the row's own columns) and, when `with_cpu` is false, CPU/tx (its own line).
std::vector<std::string> axis_items(const StageSummary& s, bool with_cpu);
std::vector<std::string> axis_items(const std::vector<AxisChange>& axes, bool with_cpu);
// A search's configuration on every axis in one line: the verdict's sentence, then each other
// axis that moved ("296x slower (237–371x); also CPU/tx 393x (304–507x), p95 +40% [...]"), then
// how many stayed within noise.
std::string every_axis_text(const std::vector<AxisChange>& axes);
// The items joined by "; " into lines of at most `width` characters (an item longer stays whole).
std::vector<std::string> wrap_items(const std::vector<std::string>& items, std::size_t width);

// The CSV's axis columns, five per axis in kAxes' order ("axis_tps_ratio", "_low", "_high",
// "_confidence", "_measurable"), and one row's cells of them (empty where an axis is missing).
std::vector<std::string> axis_csv_header();
std::vector<std::string> axis_csv_cells(const std::vector<AxisChange>& axes);

}  // namespace pgslow::report
