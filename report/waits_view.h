#pragma once
// The HTML report's wait bars; the shares and the report line are the results' (results/waits.h).

#include <string>

#include "report/views.h"
#include "results/waits.h"

namespace pgslow::report {

// One horizontal bar per sampled stage, split by wait (the run's seven largest waits, the rest
// as "other"), with a legend: the HTML report's "Where the time went". Empty when no stage was
// sampled.
std::string waits_svg(const Run& run);

}  // namespace pgslow::report
