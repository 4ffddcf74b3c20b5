#include "experiment/lab.h"

namespace pgslow::experiment {

bool rejected(const results::StageResult& stage) {
  return stage.error.starts_with(kRejectedError);
}

}  // namespace pgslow::experiment
