#include "report/knob_list_view.h"

#include <fmt/format.h>

#include <cctype>
#include <ostream>

#include "common/strings.h"
#include "report/json_schema.h"
#include "report/text.h"

namespace pgslow::report {

// The knob list's JSON as data (json_schema.h), as report.json's: a key is one line here. The
// live columns and the server appear only when a server was asked.
namespace json_schema {

template <>
struct Fields<results::LiveKnob> {
  using S = results::LiveKnob;
  static constexpr auto list =
      std::tuple{field("value", &S::value), field("available", &S::available),
                 field("applies_by", &S::applies_by)};
};

template <>
struct Fields<results::KnobListRow> {
  using S = results::KnobListRow;
  static constexpr auto live = [](const S& k) { return k.live.has_value(); };
  static constexpr auto list =
      std::tuple{field("name", &S::name),   field("category", &S::category),
                 field("since", &S::since), field("healthy", &S::healthy),
                 field("slow", &S::slow),   field("live", &S::live, live)};
};

template <>
struct Fields<results::KnobList> {
  using S = results::KnobList;
  static constexpr auto filtered = [](const S& l) { return !l.category.empty(); };
  static constexpr auto with_server = [](const S& l) { return !l.server.empty(); };
  static constexpr auto list = std::tuple{
      field("category", &S::category, filtered), field("server", &S::server, with_server),
      field("server_major", &S::server_major, with_server), field("knobs", &S::knobs)};
};

}  // namespace json_schema

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
  return json_schema::write_value(list);
}

}  // namespace pgslow::report
