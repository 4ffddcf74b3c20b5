#pragma once
// Where the PostgreSQL server programs (initdb, pg_ctl, postgres) are.

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace pgslow::server {

// The search order of the issue: --pg-bin, else `pg_config --bindir`, else the newest
// /usr/lib/postgresql/*/bin, else PATH. Each input is injectable so tests can use fake folders.
struct PgBinSearch {
  std::optional<std::filesystem::path> explicit_dir;  // --pg-bin: used alone when given
  std::string pg_config = "pg_config";                // program asked for --bindir; "" skips
  std::filesystem::path versions_root = "/usr/lib/postgresql";
  std::optional<std::string> path_env;  // $PATH (nullopt: the process's own)
};

// Whether `dir` holds executable initdb, pg_ctl and postgres.
bool has_server_programs(const std::filesystem::path& dir);

// The folder of the server programs. Throws RuntimeError saying everything it tried and how
// to fix it (install the server package or pass --pg-bin) when none is found.
std::filesystem::path find_pg_bin(const PgBinSearch& search = {});

// The system user the server's programs run as: "postgres" when pgslow runs as root (the
// server refuses root, and root runs nothing the server's user could have replaced), else
// nullopt (the invoking user).
std::optional<std::string> server_os_user();

// "15.8" from `postgres --version`, run as server_os_user(); empty when it cannot be run.
std::string server_program_version(const std::filesystem::path& bin_dir);

}  // namespace pgslow::server
