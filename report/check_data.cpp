#include "report/check_data.h"

#include <fmt/format.h>

#include <ostream>

#include "report/text.h"

namespace pgslow::report {

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
  nlohmann::ordered_json j;
  j["workload"] = result.workload;
  j["database"] = result.database;
  j["passed"] = result.passed();
  j["checks"] = nlohmann::ordered_json::array();
  for (const auto& c : result.checks) {
    nlohmann::ordered_json e;
    e["clause"] = c.clause;
    e["check"] = c.description;
    e["passed"] = c.passed;
    if (!c.passed) e["detail"] = c.detail;
    j["checks"].push_back(std::move(e));
  }
  return j;
}

}  // namespace pgslow::report
