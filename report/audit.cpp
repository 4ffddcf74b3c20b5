#include "report/audit.h"

#include <fmt/format.h>

#include <algorithm>

#include "results/summary.h"

namespace pgslow::report {

std::vector<StageAudit> stage_audits(const Run& run) {
  std::vector<StageAudit> out;
  for (const auto& s : summarize(run)) {
    const StageResult& stage = run.stages[s.index];
    const Measurement* m = s.ran ? median_repeat(stage) : nullptr;
    if (m != nullptr && !m->audit.empty()) out.push_back({&stage, &m->audit});
  }
  return out;
}

TextTable audit_table(const std::vector<AuditRow>& audit) {
  TextTable t;
  t.header = {"audit", "clause", "rule", "measured"};
  t.right = {false, false, false, false};
  for (const auto& r : audit)
    t.rows.push_back({r.passed ? "PASS" : "FAIL", r.clause, r.rule, r.measured});
  return t;
}

std::vector<std::string> audit_parts(const std::vector<AuditRow>& audit) {
  if (audit.empty()) return {};
  const auto passed = static_cast<std::size_t>(
      std::count_if(audit.begin(), audit.end(), [](const AuditRow& r) { return r.passed; }));
  if (passed == audit.size()) return {fmt::format("all {} rows pass", audit.size())};
  std::vector<std::string> parts = {fmt::format("{} of {} rows pass", passed, audit.size())};
  for (const auto& r : audit)
    if (!r.passed)
      parts.push_back(fmt::format("failed: {} ({}): {}", r.rule, r.clause, r.measured));
  return parts;
}

std::string audit_summary(const std::vector<AuditRow>& audit) {
  std::string out;
  for (const auto& part : audit_parts(audit)) out += (out.empty() ? "" : "; ") + part;
  return out;
}

}  // namespace pgslow::report
