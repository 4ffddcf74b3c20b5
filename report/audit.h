#pragma once
// A workload's audit (TPC-C-lite: what the tpmC label needs, docs/tpcc-lite.md "The audit")
// in every format: the full table for bench's console, run's Markdown and HTML, and one line
// for run's console and the CSV.

#include <string>
#include <vector>

#include "report/text.h"
#include "report/views.h"

namespace pgslow::report {

// A stage's audit, for the sections of report.md and report.html.
struct StageAudit {
  const StageResult* stage;
  const std::vector<AuditRow>* rows;  // the median repeat's
};
// Every stage that ran with an audit, in the run's order.
std::vector<StageAudit> stage_audits(const Run& run);

// One row per rule: PASS or FAIL, the clause, the rule and what the run measured.
TextTable audit_table(const std::vector<AuditRow>& audit);
// "all 22 rows pass", or "21 of 22 rows pass" followed by one part per failed row ("failed:
// payment share at least 43% (5.2.3): 40.6% of 1,234"); empty when the workload has no audit.
std::vector<std::string> audit_parts(const std::vector<AuditRow>& audit);
// The parts as one line, separated by "; ".
std::string audit_summary(const std::vector<AuditRow>& audit);

}  // namespace pgslow::report
