#pragma once
// The evidence catalog (what each key means to a reader and how it is compared across stages)
// is the engine's: runner/knobs/evidence_keys.h. The views use it under these names.

#include "knobs/evidence_keys.h"

namespace pgslow::results {

using knobs::evidence_catalog;
using knobs::evidence_info;
using knobs::EvidenceInfo;
using knobs::EvidenceScale;
using knobs::ordered_keys;

}  // namespace pgslow::results
