#include "experiment/lab.h"

#include <fmt/format.h>

namespace pgslow::experiment {

void fail_stage(results::StageResult& stage, results::StageFailure kind, std::string_view why) {
  std::string_view words;
  switch (kind) {
    case results::StageFailure::kRejected:
      words = "the server rejected this configuration: ";
      break;
    case results::StageFailure::kStoppedEarly:
      words = "stopped early: ";
      break;
    case results::StageFailure::kInterrupted:
      words = "interrupted: ";
      break;
    case results::StageFailure::kNone:
    case results::StageFailure::kRunFailed:
      break;
  }
  stage.failure = kind;
  stage.error = fmt::format("{}{}", words, why);
}

void mark_interrupted(results::StageResult& stage) {
  fail_stage(stage, results::StageFailure::kInterrupted, "the measurement stopped early");
}

}  // namespace pgslow::experiment
