#include "common/errors.h"

#include <algorithm>

namespace pgslow {

std::string SourceLocation::str() const {
  std::string out = file.empty() ? std::string("<input>") : file;
  if (line > 0) {
    out += ":" + std::to_string(line);
    if (column > 0) out += ":" + std::to_string(column);
  }
  return out;
}

std::string ConfigError::str() const {
  std::string out = where.str();
  out += severity == Severity::kError ? ": error: " : ": warning: ";
  out += message;
  if (!hint.empty()) out += " (" + hint + ")";
  return out;
}

bool has_errors(const std::vector<ConfigError>& problems) {
  return std::any_of(problems.begin(), problems.end(), [](const ConfigError& p) {
    return p.severity == ConfigError::Severity::kError;
  });
}

namespace {
std::string join_problems(const std::vector<ConfigError>& problems) {
  std::string out;
  for (const auto& p : problems) {
    if (!out.empty()) out += "\n";
    out += p.str();
  }
  return out;
}
}  // namespace

InputError::InputError(std::vector<ConfigError> problems)
    : Error(kExitBadInput, join_problems(problems)), problems_(std::move(problems)) {}

}  // namespace pgslow
