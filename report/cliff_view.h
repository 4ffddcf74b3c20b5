#pragma once
// What `pgslow cliff` found (results/cliff.h), in every format.

#include <cstdint>
#include <map>
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "report/views.h"
#include "results/cliff.h"

namespace pgslow::report {

// "safe down to 4MB; at 2MB: 18% slower [12%, 24%] (3 runs, 41,000 transactions)";
// "no cliff in the range: safe down to 64kB (the whole range)"; "not safe below 64MB: at 32MB:
// ..." when the first step is already harmful.
std::string cliff_headline(const CliffResult& r);
// The points that stayed uncertain, when any: "1MB and 512kB looked worse only at a looser
// confidence than 99.4%, even measured again: the search took them as safe". Empty otherwise.
std::string cliff_uncertain_note(const CliffResult& r);

// A point's progress line as the search measures it: "point  2  16MB   3 runs  -18.0% [...]
// harmful".
std::string cliff_point_line(const CliffPoint& p, Metric metric);

void render_cliff_console(const CliffResult& r, std::ostream& out);
void render_cliff_markdown(const CliffResult& r, std::ostream& out);
void render_cliff_csv(const CliffResult& r, std::ostream& out);
void render_cliff_html(const CliffResult& r, std::ostream& out);
nlohmann::json cliff_to_json(const CliffResult& r);

}  // namespace pgslow::report
