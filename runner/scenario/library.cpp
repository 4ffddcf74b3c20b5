#include "scenario/library.h"

#include <fmt/format.h>

#include <algorithm>

#include "common/errors.h"
#include "common/paths.h"
#include "common/strings.h"

namespace pgslow::scenario {

namespace fs = std::filesystem;

namespace {

// The folders that hold named scenarios, searched in this order.
std::vector<fs::path> library_dirs() {
  return {data_root() / "scenarios", data_root() / "scenarios" / "workshop"};
}

}  // namespace

std::vector<std::string> scenario_names() {
  std::vector<std::string> names;
  for (const fs::path& dir : library_dirs()) {
    std::error_code ec;
    for (const auto& e : fs::directory_iterator(dir, ec)) {
      if (e.path().extension() == ".yaml") names.push_back(e.path().stem().string());
    }
  }
  std::sort(names.begin(), names.end());
  names.erase(std::unique(names.begin(), names.end()), names.end());
  return names;
}

fs::path resolve_scenario(const std::string& arg, const fs::path& base) {
  const fs::path p(arg);
  const fs::path file = base.empty() || p.is_absolute() ? p : base / p;
  // A bare name never reads the current folder: `cd /tmp && pgslow run quick` as root would
  // otherwise run a `quick` that anyone could have put there. A path is read only when no one
  // else could have written it (read_trusted_file).
  if (names_a_file(arg) && fs::is_regular_file(file)) return file;
  // A name ("quick", "quick.yaml", "workshop/01-cache"): relative to the library.
  if (p.is_relative()) {
    for (const fs::path& dir : library_dirs()) {
      for (const fs::path& candidate : {dir / (arg + ".yaml"), dir / arg}) {
        if (fs::is_regular_file(candidate)) return candidate;
      }
    }
  }
  const std::vector<std::string> names = scenario_names();
  const auto suggestion = closest_match(p.stem().string(), names);
  throw InputError(fmt::format(
      "'{}' is neither a scenario file nor a named scenario{}; the named ones (in {}) are: {}",
      file.string(), suggestion ? fmt::format(" (did you mean '{}'?)", *suggestion) : "",
      (data_root() / "scenarios").string(), join(names, ", ")));
}

}  // namespace pgslow::scenario
