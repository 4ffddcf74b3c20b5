#include "report/check_data_view.h"

#include <fmt/format.h>

#include <ostream>

#include "report/json_schema.h"
#include "report/text.h"

namespace pgslow::report {

// check-data's JSON as data (json_schema.h), as report.json's: a key is one line here.
namespace json_schema {

template <>
struct Fields<results::CheckResult> {
  using S = results::CheckResult;
  static constexpr auto failed = [](const S& c) { return !c.passed; };
  static constexpr auto list =
      std::tuple{field("clause", &S::clause), field("check", &S::description),
                 field("passed", &S::passed), field("detail", &S::detail, failed)};
};

// "passed" is derived from the checks: written for readers, never read.
static void write_all_passed(const results::CheckDataResult& r, Json& out) {
  out["passed"] = r.passed();
}

template <>
struct Fields<results::CheckDataResult> {
  using S = results::CheckDataResult;
  static constexpr auto list =
      std::tuple{field("workload", &S::workload), field("database", &S::database),
                 custom<S>(write_all_passed, written_only<S>), field("checks", &S::checks)};
};

}  // namespace json_schema

namespace {

TextTable checks_table(const results::CheckDataResult& result) {
  TextTable table;
  table.header = {"clause", "check", "result"};
  for (const auto& c : result.checks)
    table.rows.push_back({c.clause, c.description, c.passed ? "ok" : "FAILED"});
  return table;
}

}  // namespace

void render_check_data_console(const results::CheckDataResult& result, std::ostream& out) {
  out << checks_table(result).render();
  for (const auto& c : result.checks)
    if (!c.passed) out << fmt::format("{}: {}\n", c.clause, c.detail);
}

void render_check_data_markdown(const results::CheckDataResult& result, std::ostream& out) {
  out << fmt::format("# Consistency checks: {}\n\n", markdown_text(result.workload));
  out << fmt::format("Database `{}`: {}.\n\n", result.database,
                     result.passed() ? "every check passed" : "some checks FAILED");
  out << markdown_table(checks_table(result));
  bool heading = false;
  for (const auto& c : result.checks) {
    if (c.passed) continue;
    if (!heading) out << "\n## Failures\n\n";
    heading = true;
    out << fmt::format("- **{}** {}: {}\n", markdown_text(c.clause), markdown_text(c.description),
                       markdown_text(c.detail));
  }
}

nlohmann::ordered_json check_data_to_json(const results::CheckDataResult& result) {
  return json_schema::write_value(result);
}

}  // namespace pgslow::report
