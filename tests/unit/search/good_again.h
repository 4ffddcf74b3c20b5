#pragma once
// Runs spent measuring good again (between rounds, near the threshold): drift control, not
// search. The tests' run-count bounds are on the search; these come on top.

#include "search/result.h"

namespace pgslow::search {

inline int good_again(const Result& r) {
  int n = 0;
  for (const auto& run : r.runs)
    if (run.purpose == "good" && run.number > 1) n += run.new_runs;
  return n;
}

}  // namespace pgslow::search
