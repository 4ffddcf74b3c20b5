#pragma once
// The settings type bisect passes across the Measurer seam: the catalog's own.

#include "knobs/catalog.h"

namespace pgslow::search {

using Setting = knobs::Setting;

}  // namespace pgslow::search
