#include "knobs/docs.h"

#include <fmt/format.h>

#include "common/strings.h"

namespace pgslow::knobs {

namespace {

// Markdown table cells may not hold '|' or line breaks.
std::string cell(std::string_view text) {
  std::string out;
  for (char c : text) {
    if (c == '|') {
      out += "\\|";
    } else if (c == '\n') {
      out += ' ';
    } else {
      out += c;
    }
  }
  return out;
}

std::string code_list(const std::vector<std::string>& values) {
  std::vector<std::string> quoted;
  for (const auto& v : values) quoted.push_back("`" + cell(v) + "`");
  return join(quoted, ", ");
}

std::string versions(const Knob& k) {
  std::string out = k.since <= 9 ? "all supported versions" : fmt::format("{} and later", k.since);
  if (k.until) out += fmt::format(" (removed in {})", *k.until);
  return out;
}

std::string by_version(const std::map<int, std::string>& table) {
  std::vector<std::string> parts;
  for (const auto& [version, value] : table)
    parts.push_back(fmt::format("{}: `{}`", version, value));
  return join(parts, ", ");
}

}  // namespace

std::string render_markdown(const Catalog& catalog) {
  std::string out;
  out += "# The knob catalog\n\n";
  out +=
      "<!-- Generated from knobs/*.yaml by `pgslow knobs docs > docs/knobs.md`; do not edit "
      "by hand. The format is in docs/knob-format.md. -->\n\n";
  out += fmt::format(
      "{} knobs in {} categories, and {} presets. A knob is one PostgreSQL "
      "parameter pgslow can turn to make the server slower; a preset is a named "
      "bundle of knobs.\n\n",
      catalog.knobs().size(), catalog.categories().size(), catalog.presets().size());
  out += "## Contents\n\n";
  for (const auto& c : catalog.categories()) {
    std::vector<std::string> names;
    for (const auto& k : catalog.knobs()) {
      if (k.category == c) names.push_back(fmt::format("[{}](#{})", k.name, k.name));
    }
    out += fmt::format("- **{}**: {}\n", c, join(names, ", "));
  }
  out += "- [Presets](#presets)\n\n";

  for (const auto& c : catalog.categories()) {
    out += fmt::format("## {}\n\n", c);
    if (const CategoryInfo* info = catalog.category(c); info && !info->description.empty()) {
      out += info->description + "\n\n";
    }
    for (const auto& k : catalog.knobs()) {
      if (k.category != c) continue;
      out += fmt::format("### {}\n\n", k.name);
      out += k.why + "\n\n";
      out += "| | |\n|---|---|\n";
      out += fmt::format("| versions | {} |\n", versions(k));
      out += fmt::format("| healthy | `{}` |\n", cell(k.healthy));
      out += fmt::format("| slow | {} |\n", code_list(k.slow));
      out += fmt::format("| watch | {} |\n", cell(join(k.watch, ", ")));
      if (!k.moves.empty())
        out +=
            fmt::format("| moves (tested first, beside TPS) | {} |\n", cell(join(k.moves, ", ")));
      out += fmt::format("| carryover | {} |\n", k.carryover_per_connection
                                                     ? std::string("a connection's life")
                                                     : fmt::format("{:g} s", k.carryover_s));
      if (!k.min_by_version.empty()) {
        out += fmt::format("| minimum by version | {} |\n", cell(by_version(k.min_by_version)));
      }
      if (!k.max_by_version.empty()) {
        out += fmt::format("| maximum by version | {} |\n", cell(by_version(k.max_by_version)));
      }
      out += fmt::format("| docs | <{}> |\n\n", k.refs);
      if (!k.pitfalls.empty()) {
        out += "Pitfalls:\n\n";
        for (const auto& p : k.pitfalls) out += "- " + p + "\n";
        out += "\n";
      }
    }
  }

  out += "## Presets\n\n";
  out +=
      "`pgslow presets show PRESET` checks a preset against the live server when one runs (it "
      "never starts the managed cluster: `pgslow server start` does).\n\n";
  for (const auto& p : catalog.presets()) {
    out += fmt::format("### {}\n\n{}\n\n", p.name, p.description);
    if (!p.includes.empty()) {
      out += fmt::format("Includes: {}.\n\n", join(p.includes, ", "));
    }
    if (!p.settings.empty()) {
      out += "| knob | value |\n|---|---|\n";
      for (const auto& s : p.settings) {
        out += fmt::format("| [{}](#{}) | `{}` |\n", s.name, s.name, cell(s.value));
      }
      out += "\n";
    }
    if (!p.pooler.empty()) {
      out += "Settings of pgslow's PgBouncer (a scenario's `pooler:`, docs/pooler.md):\n\n";
      out += "| PgBouncer setting | value |\n|---|---|\n";
      for (const auto& s : p.pooler) out += fmt::format("| `{}` | `{}` |\n", s.name, cell(s.value));
      out += "\n";
    }
  }
  // One trailing newline, as editors save files.
  while (out.size() >= 2 && out[out.size() - 1] == '\n' && out[out.size() - 2] == '\n') {
    out.pop_back();
  }
  return out;
}

}  // namespace pgslow::knobs
