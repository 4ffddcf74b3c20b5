#include "server/pg_binaries.h"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>

#include "common/errors.h"
#include "common/process.h"
#include "common/strings.h"

namespace pgslow::server {

namespace fs = std::filesystem;

namespace {
bool is_executable(const fs::path& p) {
  std::error_code ec;
  return fs::is_regular_file(p, ec) && ::access(p.c_str(), X_OK) == 0;
}

// "15" < "16" < "9.6" would be wrong as strings: compare the numbers.
std::vector<int> version_key(const std::string& name) {
  std::vector<int> key;
  for (const auto& part : split(name, '.')) {
    char* end = nullptr;
    long v = std::strtol(part.c_str(), &end, 10);
    if (end == part.c_str() || *end != '\0') return {};
    key.push_back(static_cast<int>(v));
  }
  return key;
}
}  // namespace

bool has_server_programs(const fs::path& dir) {
  return is_executable(dir / "initdb") && is_executable(dir / "pg_ctl") &&
         is_executable(dir / "postgres");
}

fs::path find_pg_bin(const PgBinSearch& search) {
  if (search.explicit_dir) {
    if (has_server_programs(*search.explicit_dir)) return *search.explicit_dir;
    throw RuntimeError(fmt::format(
        "--pg-bin {}: no PostgreSQL server programs there (initdb, pg_ctl and postgres must all "
        "be in that folder); pass the folder that holds them, e.g. /usr/lib/postgresql/15/bin",
        search.explicit_dir->string()));
  }
  std::vector<std::string> tried;

  if (!search.pg_config.empty()) {
    std::string what = fmt::format("`{} --bindir`", search.pg_config);
    try {
      ProcessOptions o;
      o.timeout = std::chrono::seconds(10);
      auto r = run_process({search.pg_config, "--bindir"}, o);
      fs::path dir = trim(r.output);
      if (r.ok() && has_server_programs(dir)) return dir;
      tried.push_back(r.ok() ? fmt::format("{} said {}, which has no initdb/pg_ctl/postgres", what,
                                           dir.string())
                             : fmt::format("{} failed ({})", what, r.describe_status()));
    } catch (const RuntimeError&) {
      tried.push_back(fmt::format("{}: pg_config is not installed", what));
    }
  }

  std::error_code ec;
  std::vector<std::pair<std::vector<int>, fs::path>> versions;
  for (const auto& entry : fs::directory_iterator(search.versions_root, ec)) {
    auto key = version_key(entry.path().filename().string());
    if (!key.empty() && has_server_programs(entry.path() / "bin"))
      versions.emplace_back(key, entry.path() / "bin");
  }
  if (!versions.empty()) return std::max_element(versions.begin(), versions.end())->second;
  tried.push_back(fmt::format("{}/*/bin: none", search.versions_root.string()));

  std::string path_env =
      search.path_env ? *search.path_env : (std::getenv("PATH") ? std::getenv("PATH") : "");
  for (const auto& dir : split(path_env, ':')) {
    if (dir.empty()) continue;
    // PATH often holds symlinks to the programs (/usr/local/bin/initdb -> ...): use the
    // folder the real initdb lives in, so pg_ctl finds its own postgres.
    fs::path initdb = fs::path(dir) / "initdb";
    if (!is_executable(initdb)) continue;
    fs::path real = fs::canonical(initdb, ec);
    if (!ec && has_server_programs(real.parent_path())) return real.parent_path();
    if (has_server_programs(dir)) return dir;
  }
  tried.push_back("initdb in PATH: not found");

  throw RuntimeError(fmt::format(
      "no PostgreSQL server programs found (tried: {}). Install them (Debian/Ubuntu: "
      "apt-get install postgresql-15) or pass --pg-bin DIR with the folder holding initdb, "
      "pg_ctl and postgres",
      join(tried, "; ")));
}

std::optional<std::string> server_os_user() {
  if (!running_as_root()) return std::nullopt;
  return std::string("postgres");
}

std::string server_program_version(const fs::path& bin_dir) {
  try {
    ProcessOptions o;
    o.run_as = server_os_user();
    o.timeout = std::chrono::seconds(10);
    auto r = run_process({(bin_dir / "postgres").string(), "--version"}, o);
    if (!r.ok()) return "";
    // "postgres (PostgreSQL) 15.8 (Debian 15.8-0+deb12u1)"
    auto words = split(trim(r.output), ' ');
    return words.size() >= 3 ? words[2] : trim(r.output);
  } catch (const RuntimeError&) {
    return "";
  }
}

}  // namespace pgslow::server
