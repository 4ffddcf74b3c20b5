#pragma once
// `pgslow knobs show` and `pgslow presets list|show` (results/catalog.h) as console text,
// Markdown and JSON.

#include <iosfwd>
#include <nlohmann/json_fwd.hpp>

#include "results/catalog.h"

namespace pgslow::report {

// The knob's catalog entry (versions, why, healthy and slow values, what to watch, minimums,
// docs, pitfalls), then its live pg_settings row when a server was asked.
void render_knob_detail_console(const results::KnobDetail& knob, std::ostream& out);
void render_knob_detail_markdown(const results::KnobDetail& knob, std::ostream& out);
nlohmann::ordered_json knob_detail_to_json(const results::KnobDetail& knob);

// One line per preset: its name, its knob count and the first sentence of its description
// (the whole description in Markdown and JSON).
void render_preset_list_console(const results::PresetList& list, std::ostream& out);
void render_preset_list_markdown(const results::PresetList& list, std::ostream& out);
nlohmann::ordered_json preset_list_to_json(const results::PresetList& list);

// The preset's knobs from the catalog, or with a server each knob's verdict and the problems.
void render_preset_detail_console(const results::PresetDetail& preset, std::ostream& out);
void render_preset_detail_markdown(const results::PresetDetail& preset, std::ostream& out);
nlohmann::ordered_json preset_detail_to_json(const results::PresetDetail& preset);
// The verdict table alone (`pgslow check` prints one per group of settings).
void render_setting_checks_console(const std::vector<results::SettingCheck>& checks,
                                   std::ostream& out);

}  // namespace pgslow::report
