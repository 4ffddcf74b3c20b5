#include "stage/lab.h"

namespace pgslow::stage {

bool rejected(const results::StageResult& stage) {
  return stage.error.starts_with(kRejectedError);
}

}  // namespace pgslow::stage
