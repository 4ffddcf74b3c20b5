#pragma once
// `pgslow check-data`'s result (results/check_data.h) as console text, Markdown and JSON.

#include <iosfwd>
#include <nlohmann/json_fwd.hpp>

#include "results/check_data.h"

namespace pgslow::report {

// Each check with its clause and ok/FAILED, then each failure's detail.
void render_check_data_console(const results::CheckDataResult& result, std::ostream& out);
void render_check_data_markdown(const results::CheckDataResult& result, std::ostream& out);
nlohmann::ordered_json check_data_to_json(const results::CheckDataResult& result);

}  // namespace pgslow::report
