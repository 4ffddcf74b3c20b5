#pragma once
// Options every pgslow command shares, parsed once in main.

#include <filesystem>
#include <optional>
#include <string>

#include "common/log.h"

namespace pgslow::cli {

struct Context {
  std::filesystem::path workdir = ".pgslow";    // --workdir: managed cluster, journal, lock
  std::optional<std::filesystem::path> pg_bin;  // --pg-bin: PostgreSQL server binaries
  std::optional<int> pg_version;                // --pg-version: the managed cluster's major
  Verbosity verbosity = Verbosity::kNormal;     // -v / --quiet
  std::string program = "pgslow";               // as invoked (argv[0]), for commands we suggest
};

}  // namespace pgslow::cli
