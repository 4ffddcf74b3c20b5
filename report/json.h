#pragma once
// report.json: the whole Run as JSON (docs/report-schema.md), and back.

#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>

#include "report/json_schema.h"
#include "report/views.h"
#include "results/summary.h"

namespace pgslow::report {

// 2: Run::references (the interleaved baseline runs); 3: StageResult::attribution (per-knob
// attribution). Reports of schema 1 and 2 still read.
inline constexpr int kSchemaVersion = 3;

// One measurement as JSON: report.json's repeats, and bench's --json.
nlohmann::ordered_json measurement_json(const Measurement& m);
// One stage's attribution as report.json writes it (also `pgslow bisect --isolate --json`).
nlohmann::json attribution_json(const Attribution& a);

// Every axis of a comparison (results/summary.h AxisChange) as report.json's `effects` lists
// them: key, label, ratio, interval, could_see, measurable, text.
nlohmann::ordered_json axes_json(const std::vector<AxisChange>& axes);

std::string to_json(const Run& run);  // pretty-printed, ends with a newline
// Parses `text`; `source` names it in errors (the file name). Throws ReadError.
Run read_json(const std::string& text, const std::string& source);

}  // namespace pgslow::report
