#pragma once
// docs/knobs.md, generated from the catalog (`pgslow knobs docs`); a unit test fails when the
// committed file differs from what the catalog renders.

#include <string>

#include "knobs/catalog.h"

namespace pgslow::knobs {

std::string render_markdown(const Catalog& catalog);

}  // namespace pgslow::knobs
