#pragma once
// The scenario library: the named scenarios in <data root>/scenarios (a build tree's
// scenarios/, an installed pgslow's <prefix>/share/pgslow/scenarios). Every command that takes
// a scenario (run, plan, check, bisect, cliff, a lesson's `scenario:`) finds it here, so a name
// means the same file everywhere and a misspelt one gets the same "did you mean".

#include <filesystem>
#include <string>
#include <vector>

#include "knobs/catalog.h"

namespace pgslow::scenario {

// The names of the library's scenarios ("quick", "wal-hell", the workshop's), sorted.
std::vector<std::string> scenario_names();

// One scenario of the library as `pgslow scenarios` lists it.
struct LibraryScenario {
  std::string name;                // as `pgslow run` takes it ("quick", "01-cache")
  std::string description;         // the scenario's whole description
  double estimated_seconds = 0;    // plan.h's estimate_seconds_offline; data load not included
  std::vector<std::string> needs;  // "PgBouncer", "root", "PG 18+" (library.cpp, needs_of)
  std::string problem;             // the file does not parse: its first error (the rest empty)
};

// Every scenario of the library, in scenario_names() order, read and estimated without a server.
std::vector<LibraryScenario> library_scenarios(const knobs::Catalog& catalog);

// A scenario argument: a file when names_a_file (relative to `base` when given, else to the
// current folder) and it exists, or the name of one in the library ("quick", "quick.yaml",
// "workshop/01-cache"). A bare name never reads the current folder. Throws an InputError naming
// the closest library name and listing them all.
std::filesystem::path resolve_scenario(const std::string& arg,
                                       const std::filesystem::path& base = {});

}  // namespace pgslow::scenario
