#pragma once
// `pgslow plan`'s result (results/plan.h) as console text, Markdown and JSON.

#include <iosfwd>
#include <nlohmann/json_fwd.hpp>

#include "report/views.h"
#include "results/plan.h"

namespace pgslow::report {

// The scenario, server, workload and measuring; per stage its load, its knobs with old and new
// values and how each is applied, skipped knobs with reasons, warnings and the design; the
// estimated time; and that nothing was changed.
void render_plan_console(const PlanResult& plan, std::ostream& out);
void render_plan_markdown(const PlanResult& plan, std::ostream& out);
nlohmann::ordered_json plan_to_json(const PlanResult& plan);

}  // namespace pgslow::report
