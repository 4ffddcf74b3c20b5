#pragma once
// `pgslow bisect`'s result (results/bisect.h) rendered like every other result: console tables
// through report/text.h, Markdown, JSON.

#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "report/views.h"
#include "results/bisect.h"

namespace pgslow::report {

// --isolate's tally of bad's changes, in the metric's own terms with each effect's 95%
// interval: "pgtune.conf's 14 changes: 3 helped (effective_io_concurrency TPS +9% [+3%, +15%],
// ...), 11 no measurable effect, 0 hurt". A change helped (or hurt) when its interval alone
// against good lies wholly on that side; the rest, and the changes measured only as a harmless
// group, had no measurable effect. Empty without an attribution.
std::string attribution_tally(const BisectResult& r);

// The conclusion, the tally, good/bad/noise/drift, the culprits, --isolate's attribution, every run
// and what was not bisected, as console tables (report/text.h) or Markdown.
void render_bisect_console(const BisectResult& r, std::ostream& out);
void render_bisect_markdown(const BisectResult& r, std::ostream& out);
nlohmann::json bisect_to_json(const BisectResult& r);

}  // namespace pgslow::report
