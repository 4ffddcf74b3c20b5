#include "report/knob_list.h"

#include <fmt/format.h>

#include <cctype>
#include <ostream>

#include "common/strings.h"
#include "report/text.h"

namespace pgslow::report {

namespace {

TextTable knob_table(const results::KnobList& list, bool upper_case) {
  const bool live = !list.server.empty();
  std::vector<std::string> header = {"knob", "category", "since", "healthy", "slow"};
  if (live) {
    for (const char* h : {"live", "available", "applies by"}) header.push_back(h);
  }
  if (upper_case) {  // the terminal's table heads its columns in capitals
    for (std::string& h : header)
      for (char& c : h) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  }
  TextTable t{header, {}, {}};
  for (const auto& k : list.knobs) {
    std::vector<std::string> row = {k.name, k.category, std::to_string(k.since), k.healthy,
                                    join(k.slow, ", ")};
    if (live) {
      const results::LiveKnob none{"-", "-", "-"};
      const results::LiveKnob& l = k.live ? *k.live : none;
      for (const std::string& cell : {l.value, l.available, l.applies_by}) row.push_back(cell);
    }
    t.rows.push_back(std::move(row));
  }
  return t;
}

std::string count_line(const results::KnobList& list) {
  const std::size_t n = list.knobs.size();
  std::string line = fmt::format("{} knob{}", n, n == 1 ? "" : "s");
  if (!list.server.empty())
    line += fmt::format("; live values from PostgreSQL {} ({})", list.server_major, list.server);
  return line;
}

}  // namespace

void render_knob_list_console(const results::KnobList& list, std::ostream& out) {
  out << knob_table(list, true).render() << "\n" << count_line(list) << "\n";
}

void render_knob_list_markdown(const results::KnobList& list, std::ostream& out) {
  out << "# The knob catalog" << (list.category.empty() ? "" : ": " + markdown_text(list.category))
      << "\n\n"
      << markdown_table(knob_table(list, false)) << "\n"
      << markdown_text(count_line(list)) << ".\n";
}

nlohmann::ordered_json knob_list_to_json(const results::KnobList& list) {
  nlohmann::ordered_json j;
  if (!list.category.empty()) j["category"] = list.category;
  if (!list.server.empty()) {
    j["server"] = list.server;
    j["server_major"] = list.server_major;
  }
  j["knobs"] = nlohmann::ordered_json::array();
  for (const auto& k : list.knobs) {
    nlohmann::ordered_json e;
    e["name"] = k.name;
    e["category"] = k.category;
    e["since"] = k.since;
    e["healthy"] = k.healthy;
    e["slow"] = k.slow;
    if (k.live) {
      e["live"] = k.live->value;
      e["available"] = k.live->available;
      e["applies_by"] = k.live->applies_by;
    }
    j["knobs"].push_back(std::move(e));
  }
  return j;
}

}  // namespace pgslow::report
