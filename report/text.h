#pragma once
// Layout helpers shared by the text renderers (console, Markdown, comparison).

#include <string>
#include <vector>

namespace pgslow::report {

// Terminal columns of a UTF-8 string (one per code point: "→" and "µ" are one column each).
std::size_t display_width(const std::string& s);
// Pads with spaces to `width` columns, on the right (left-aligned) or on the left.
std::string pad_right(const std::string& s, std::size_t width);
std::string pad_left(const std::string& s, std::size_t width);

// A table whose columns are as wide as their widest cell; `right` marks numeric columns.
struct TextTable {
  std::vector<std::string> header;
  std::vector<bool> right;
  std::vector<std::vector<std::string>> rows;
  // Every line starts with `indent`; columns are separated by two spaces.
  std::string render(const std::string& indent = "") const;
  std::vector<std::size_t> widths() const;
};

// RFC 4180: a CSV field quoted when it holds a comma, quote or line break; inner quotes doubled.
std::string csv_field(const std::string& s);

// Text for HTML: &, <, > and " as entities.
std::string html_escape(const std::string& s);

// A Markdown table cell: pipes escaped, newlines as <br>.
std::string markdown_cell(const std::string& s);

}  // namespace pgslow::report
