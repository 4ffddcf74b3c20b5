#pragma once
// `pgslow knobs list`'s result (results/knob_list.h) as console text, Markdown and JSON.

#include <iosfwd>
#include <nlohmann/json_fwd.hpp>

#include "results/knob_list.h"

namespace pgslow::report {

// One row per knob (name, category, since, healthy and slow values; with a server its live
// value, availability and how it applies), then the count and where the live values came from.
void render_knob_list_console(const results::KnobList& list, std::ostream& out);
void render_knob_list_markdown(const results::KnobList& list, std::ostream& out);
nlohmann::ordered_json knob_list_to_json(const results::KnobList& list);

}  // namespace pgslow::report
