#pragma once
// Layout helpers shared by the text renderers (console, Markdown, comparison).

#include <cstdint>
#include <string>
#include <vector>

#include "common/text_width.h"

namespace pgslow::report {

using pgslow::cut_to_width;
using pgslow::display_width;
using pgslow::output_columns;
using pgslow::wrap_text;

// Pads with spaces to `width` columns, on the right (left-aligned) or on the left.
std::string pad_right(const std::string& s, std::size_t width);
std::string pad_left(const std::string& s, std::size_t width);

// A table whose columns are as wide as their widest cell; `right` marks numeric columns. Every
// aligned table of pgslow's output is one of these, on the terminal and in Markdown.
struct TextTable {
  std::vector<std::string> header;  // all empty: a key/value table, printed without a header
  std::vector<bool> right;
  std::vector<std::vector<std::string>> rows;
  // Every line starts with `indent`; columns are separated by two spaces.
  std::string render(const std::string& indent = "") const;
  std::vector<std::size_t> widths() const;
  // The columns of its widest line, rendered with `indent`.
  std::size_t rendered_width(const std::string& indent) const;
  // Cuts the cells of the columns `shrinkable` with "…", the widest of them first, until a
  // line rendered with `indent` fits `width` columns, no column below 8 (or its header).
  void fit(std::size_t width, const std::string& indent,
           const std::vector<std::size_t>& shrinkable);
};

// The table in Markdown: each cell through markdown_cell, right-aligned columns as `--:`.
std::string markdown_table(const TextTable& table);

// The table in HTML: a <table> of class `css_class`, every cell through html_escape, numeric
// columns of class "num".
std::string html_table(const TextTable& table, const std::string& css_class);

// Text for HTML: & < > " as entities.
std::string html_escape(const std::string& s);
// Markdown text that renders as itself: HTML (& < >) as entities, Markdown punctuation
// (\ ` * [ ] |) backslash-escaped, control characters shown as \xNN; newlines
// stay (a paragraph).
std::string markdown_text(const std::string& s);
// A Markdown table cell: markdown_text with newlines as <br>.
std::string markdown_cell(const std::string& s);

// A CSV field (csv.cpp): RFC 4180 quoting, printable_lines, and a text starting with
// = + - @ (or a tab or carriage return) gets a leading ' so a spreadsheet never runs it.
std::string csv_field(const std::string& raw);
// Plain numbers for spreadsheets: no thousands separators, full precision; "" when not finite.
std::string csv_number(double v);
// A table's count of transactions: "62,400"; "—" for none (nothing was measured).
std::string count_or_dash(std::uint64_t n);

// Every line of `text` safe for a terminal (common/strings printable), newlines kept.
std::string printable_lines(const std::string& text);

}  // namespace pgslow::report
