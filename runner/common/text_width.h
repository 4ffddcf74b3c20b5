#pragma once
// How wide a text is on a terminal, and fitting it there: shared by the renderers (report/
// text.h) and whatever else must fit the output's width.

#include <cstddef>
#include <string>
#include <vector>

namespace pgslow {

// Terminal columns of a UTF-8 string (one per code point: "→" and "µ" are one column each).
std::size_t display_width(const std::string& s);
// `s` cut to `width` columns, its last one "…" when anything was cut.
std::string cut_to_width(const std::string& s, std::size_t width);
// `text` broken at spaces into lines of at most `width` columns, the lines after the first
// starting with `hanging` (a word longer than a line is cut).
std::vector<std::string> wrap_text(const std::string& text, std::size_t width,
                                   const std::string& hanging = "");
// The columns the console output should fit: $COLUMNS when set (40 at least), else the
// terminal's width when standard output is one, else 100.
std::size_t output_columns();

}  // namespace pgslow
