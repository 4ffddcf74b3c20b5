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
#include "server/pg_versions.h"

// An unpacked PostgreSQL package, checked before any of it runs: nothing in it leads outside it,
// and the links its programs need are made inside it.

namespace pgslow::server {

namespace fs = std::filesystem;

namespace {

std::string joined(const std::vector<std::string>& steps) {
  return join(steps, "/");
}

// Whether the symlink `target`, in the package folder `at` (its steps from the package root
// `root`), leads to a place inside the package: relative, never `..` above the root, and every
// step it passes through a real folder (no link), so the kernel resolves it as read here.
bool link_stays_inside(int root, std::vector<std::string> at, const std::string& target) {
  if (target.empty() || target.front() == '/') return false;
  auto steps = split(target, '/');
  for (std::size_t i = 0; i < steps.size(); ++i) {
    const std::string& step = steps[i];
    if (step.empty() || step == ".") continue;
    if (step == "..") {
      if (at.empty()) return false;
      at.pop_back();
      continue;
    }
    at.push_back(step);
    if (i + 1 == steps.size()) break;
    struct stat st {};
    if (::fstatat(root, joined(at).c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0 || !S_ISDIR(st.st_mode))
      return false;
  }
  return true;
}

// check_unpacked_package below `dir`, the folder `at` of the package `root`.
void check_package_folder(int root, int dir, std::vector<std::string>& at, const fs::path& shown) {
  if (::fchmod(dir, 0755) != 0)
    throw RuntimeError(fmt::format("cannot chmod {}: {}", shown.string(), std::strerror(errno)));
  for (const std::string& name : names_in(dir, shown)) {
    fs::path here = shown / name;
    struct stat st {};
    if (::fstatat(dir, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0)
      throw RuntimeError(fmt::format("cannot read {}: {}", here.string(), std::strerror(errno)));
    if (S_ISLNK(st.st_mode)) {
      std::string target(PATH_MAX, '\0');
      ssize_t n = ::readlinkat(dir, name.c_str(), target.data(), target.size());
      target.resize(n < 0 ? 0 : static_cast<std::size_t>(n));
      if (n < 0 || !link_stays_inside(root, at, target))
        throw RuntimeError(fmt::format(
            "pgslow refuses the package: {} is a symbolic link to \"{}\", which leads out of "
            "the package (or through another link); nothing was installed",
            here.string(), target));
    } else if (S_ISDIR(st.st_mode)) {
      UniqueFd sub = open_folder_in(dir, name, here);
      at.push_back(name);
      check_package_folder(root, sub.get(), at, here);
      at.pop_back();
    } else if (S_ISREG(st.st_mode)) {
      UniqueFd fd = open_file_in(dir, name, O_RDONLY | O_NONBLOCK, here);  // one name only
      mode_t mode = (st.st_mode & S_IXUSR) ? 0755 : 0644;
      if (::fchmod(fd.get(), mode) != 0)
        throw RuntimeError(fmt::format("cannot chmod {}: {}", here.string(), std::strerror(errno)));
    } else {
      throw RuntimeError(fmt::format(
          "pgslow refuses the package: {} is a device, pipe or socket; nothing was installed",
          here.string()));
    }
  }
}

// The folder `steps` below `dir`, each step a real folder opened without following a link.
UniqueFd open_steps(int dir, const fs::path& steps, const fs::path& shown) {
  UniqueFd here(::dup(dir));
  fs::path reached = shown;
  for (const auto& step : steps) {
    reached /= step;
    UniqueFd next = open_folder_in(here.get(), step.string(), reached);
    if (!next) throw RuntimeError(fmt::format("{} is missing in the package", reached.string()));
    here = std::move(next);
  }
  return here;
}

}  // namespace

void check_unpacked_package(int package_dir, const fs::path& shown_as) {
  std::vector<std::string> at;
  check_package_folder(package_dir, package_dir, at, shown_as);
}

void create_package_symlinks(int package_dir, const fs::path& shown_as,
                             const std::string& symlinks_json) {
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
    fs::path at = fs::path(target).lexically_normal();
    // Relative, so the cache folder can move.
    std::string to = fs::path(source).lexically_normal().lexically_relative(at.parent_path());
    std::string name = at.filename().string();
    try {
      UniqueFd folder = open_steps(package_dir, at.parent_path(), shown_as);
      std::vector<std::string> steps;
      for (const auto& step : at.parent_path()) steps.push_back(step.string());
      if (!link_stays_inside(package_dir, steps, to))
        throw RuntimeError("the link would lead out of the package or through another link");
      remove_file_in(folder.get(), name, shown_as / at);  // a folder there is not removed
      if (::symlinkat(to.c_str(), folder.get(), name.c_str()) != 0)
        throw RuntimeError(std::strerror(errno));
    } catch (const RuntimeError& e) {
      throw RuntimeError(fmt::format("native/pg-symlinks.json: cannot create {} -> {}: {}",
                                     (shown_as / at).string(), to, e.what()));
    }
  }
}

}  // namespace pgslow::server
