#pragma once
// report.json: the whole Run as JSON (docs/report-schema.md), and back.

#include <stdexcept>
#include <string>

#include "report/model.h"

namespace pgslow::report {

inline constexpr int kSchemaVersion = 1;

// A report.json that cannot be read: the message names the source, the field path
// ("stages[2].repeats[0].tps") and what was expected.
class ReadError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

std::string to_json(const Run& run);  // pretty-printed, ends with a newline
// Parses `text`; `source` names it in errors (the file name). Throws ReadError.
Run read_json(const std::string& text, const std::string& source);

}  // namespace pgslow::report
