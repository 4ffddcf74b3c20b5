#include "search/result.h"

#include <fmt/format.h>

namespace pgslow::search {

std::string Candidate::describe() const {
  std::string from = good_value             ? *good_value
                     : server_value.empty() ? "(server value)"
                                            : fmt::format("(server value {})", server_value);
  std::string to =
      back_to_server_value ? fmt::format("(server value {})", change.value) : change.value;
  return fmt::format("{}: {} -> {}{}", change.name, from, to, needs_restart ? " [restart]" : "");
}

results::BisectResult to_report(const Result& r) {
  results::BisectResult out;
  static_cast<results::BisectFindings&>(out) = r;
  for (const Candidate& c : r.candidates)
    out.candidates.push_back({c.change.name, c.good_value, c.change.value, c.back_to_server_value,
                              c.needs_restart, c.server_value, c.change.where.str()});
  for (const Excluded& e : r.excluded)
    out.excluded.push_back(
        {e.setting.name, e.setting.value, e.setting.where.str(), e.reason, e.invalid});
  return out;
}

}  // namespace pgslow::search
