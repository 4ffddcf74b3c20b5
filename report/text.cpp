#include "report/text.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>

#include "common/format.h"
#include "runner/common/printable.h"

namespace pgslow::report {

std::string pad_right(const std::string& s, std::size_t width) {
  const std::size_t w = display_width(s);
  return w >= width ? s : s + std::string(width - w, ' ');
}

std::string pad_left(const std::string& s, std::size_t width) {
  const std::size_t w = display_width(s);
  return w >= width ? s : std::string(width - w, ' ') + s;
}

std::vector<std::size_t> TextTable::widths() const {
  std::vector<std::size_t> w(header.size(), 0);
  for (std::size_t c = 0; c < header.size(); ++c) w[c] = display_width(header[c]);
  for (const auto& row : rows) {
    for (std::size_t c = 0; c < row.size() && c < w.size(); ++c) {
      w[c] = std::max(w[c], display_width(row[c]));
    }
  }
  return w;
}

std::string TextTable::render(const std::string& indent) const {
  const auto w = widths();
  auto line = [&](const std::vector<std::string>& cells) {
    std::string out = indent;
    for (std::size_t c = 0; c < w.size(); ++c) {
      const std::string cell = c < cells.size() ? cells[c] : "";
      const bool is_last = c + 1 == w.size();
      if (c < right.size() && right[c]) {
        out += pad_left(cell, w[c]);
      } else {
        out += is_last ? cell : pad_right(cell, w[c]);
      }
      if (!is_last) out += "  ";
    }
    while (!out.empty() && out.back() == ' ') out.pop_back();
    return out + "\n";
  };
  const bool key_value =
      std::all_of(header.begin(), header.end(), [](const std::string& h) { return h.empty(); });
  std::string out = key_value ? "" : line(header);
  for (const auto& row : rows) out += line(row);
  return out;
}

std::size_t TextTable::rendered_width(const std::string& indent) const {
  const auto w = widths();
  std::size_t total = display_width(indent) + (w.empty() ? 0 : 2 * (w.size() - 1));
  for (std::size_t x : w) total += x;
  return total;
}

void TextTable::fit(std::size_t width, const std::string& indent,
                    const std::vector<std::size_t>& shrinkable) {
  constexpr std::size_t kNarrowest = 8;
  // One column at a time, always the widest of those that may still give: the cut is shared
  // rather than taken from one column down to nothing.
  for (std::size_t total = rendered_width(indent); total > width;) {
    const auto w = widths();
    std::size_t widest = header.size();
    for (std::size_t c : shrinkable) {
      if (c >= header.size() || w[c] <= std::max(kNarrowest, display_width(header[c]))) continue;
      if (widest == header.size() || w[c] > w[widest]) widest = c;
    }
    if (widest == header.size()) return;  // nothing may give more
    const std::size_t floor = std::max(kNarrowest, display_width(header[widest]));
    std::size_t second = floor;
    for (std::size_t c : shrinkable)
      if (c != widest && c < header.size()) second = std::max(second, std::min(w[c], w[widest]));
    const std::size_t keep =
        std::max({floor, second, w[widest] - std::min(w[widest], total - width)});
    const std::size_t cut_to = keep < w[widest] ? keep : w[widest] - 1;
    for (auto& row : rows)
      if (widest < row.size()) row[widest] = cut_to_width(row[widest], cut_to);
    total = rendered_width(indent);
  }
}

std::string markdown_table(const TextTable& table) {
  auto line = [](const std::vector<std::string>& cells) {
    std::string out = "|";
    for (const auto& cell : cells) out += " " + markdown_cell(cell) + " |";
    return out + "\n";
  };
  std::string out = line(table.header) + "|";
  for (std::size_t c = 0; c < table.header.size(); ++c)
    out += c < table.right.size() && table.right[c] ? "--:|" : "---|";
  out += "\n";
  for (const auto& row : table.rows) out += line(row);
  return out;
}

std::string html_table(const TextTable& table, const std::string& css_class) {
  auto cell = [&](const char* tag, std::size_t c, const std::string& text) {
    const bool num = c < table.right.size() && table.right[c];
    return fmt::format("<{}{}>{}</{}>", tag, num ? " class=\"num\"" : "", html_escape(text), tag);
  };
  std::string out = "<table class=\"" + html_escape(css_class) + "\">\n<thead><tr>";
  for (std::size_t c = 0; c < table.header.size(); ++c) out += cell("th", c, table.header[c]);
  out += "</tr></thead>\n<tbody>\n";
  for (const auto& row : table.rows) {
    out += "<tr>";
    for (std::size_t c = 0; c < row.size(); ++c) out += cell("td", c, row[c]);
    out += "</tr>\n";
  }
  return out + "</tbody>\n</table>\n";
}

std::string html_escape(const std::string& s) {
  std::string out;
  for (char c : s) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

std::string markdown_text(const std::string& s) {
  std::string out;
  for (char c : html_escape(s)) {
    switch (c) {
      case '\\':
      case '`':
      case '*':
      case '[':
      case ']':
      case '|':
        out += '\\';
        out += c;
        break;
      default:
        out += c;
    }
  }
  return printable_lines(out);
}

std::string markdown_cell(const std::string& s) {
  std::string out;
  for (char c : markdown_text(s)) {
    if (c == '\n') {
      out += "<br>";
    } else {
      out += c;
    }
  }
  return out;
}

std::string printable_lines(const std::string& text) {
  std::string out;
  std::size_t start = 0;
  while (start <= text.size()) {
    std::size_t nl = text.find('\n', start);
    if (nl == std::string::npos) {
      out += printable(std::string_view(text).substr(start));
      break;
    }
    out += printable(std::string_view(text).substr(start, nl - start));
    out += '\n';
    start = nl + 1;
  }
  return out;
}

std::string count_or_dash(std::uint64_t n) {
  return n == 0 ? "—" : format_count(n);
}

}  // namespace pgslow::report
