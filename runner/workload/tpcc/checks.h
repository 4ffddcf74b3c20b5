#pragma once
// The consistency conditions of clause 3.3.2, as a table keyed by clause.

#include <string_view>
#include <vector>

#include "pg/connection.h"
#include "workload/workload.h"

namespace pgslow::workload::tpcc {

struct Check {
  std::string_view clause;       // "3.3.2.1"
  std::string_view description;  // the condition, in the spec's terms
  // Returns one row per offender: (count of all offenders, text naming keys and values).
  std::string_view sql;
};

const std::vector<Check>& checks();

// Runs every check in one REPEATABLE READ snapshot, so a concurrent run cannot make two
// tables disagree between queries.
std::vector<CheckResult> run_checks(pg::Connection& conn);

// Condition 3.3.2.11, which holds only right after the initial load (the loader runs it):
// count(ORDER) - count(NEW-ORDER) = 2,100 per district.
const Check& load_check();
CheckResult run_load_check(pg::Connection& conn);

}  // namespace pgslow::workload::tpcc
