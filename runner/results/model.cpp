#include "results/model.h"

#include <array>
#include <utility>

namespace pgslow::results {

namespace {

constexpr std::array<std::pair<StageFailure, std::string_view>, 5> kFailureNames = {{
    {StageFailure::kNone, ""},
    {StageFailure::kRejected, "rejected"},
    {StageFailure::kRunFailed, "run failed"},
    {StageFailure::kStoppedEarly, "stopped early"},
    {StageFailure::kInterrupted, "interrupted"},
}};

}  // namespace

std::string_view failure_name(StageFailure failure) {
  for (const auto& [kind, name] : kFailureNames)
    if (kind == failure) return name;
  return "";
}

std::optional<StageFailure> parse_failure(std::string_view name) {
  for (const auto& [kind, known] : kFailureNames)
    if (known == name) return kind;
  return std::nullopt;
}

}  // namespace pgslow::results
