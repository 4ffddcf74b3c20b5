#pragma once
// The settings type bisect passes across the Measurer seam: the catalog's own.

#include "knobs/catalog.h"

namespace pgslow::bisect {

using Setting = knobs::Setting;

}  // namespace pgslow::bisect
