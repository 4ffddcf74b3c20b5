#include <arpa/inet.h>
#include <fcntl.h>
#include <fmt/format.h>
#include <netinet/in.h>
#include <signal.h>
#include <spdlog/spdlog.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <ctime>
#include <fstream>
#include <functional>
#include <thread>

#include "common/clock.h"
#include "common/errors.h"
#include "common/paths.h"
#include "common/process.h"
#include "common/safe_fs.h"
#include "common/strings.h"
#include "pg/connection.h"
#include "pg/data_dir.h"
#include "server/managed_cluster.h"
#include "server/pg_binaries.h"
#include "server/pg_versions.h"
#include "server/server_log.h"

// The managed cluster's snapshots: a copy of its data directory taken while it is stopped, and
// a start from one (copy-on-write where the workdir can reflink).

namespace pgslow::server {

namespace fs = std::filesystem;

namespace {

constexpr const char* kSnapshotsFolder = "snapshots";

void require_snapshot_name(const std::string& name) {
  const bool ok =
      !name.empty() && name.size() <= 64 && name[0] != '.' &&
      std::all_of(name.begin(), name.end(), [](char c) {
        return std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.';
      });
  if (!ok) {
    throw InputError(fmt::format(
        "snapshot name '{}': use up to 64 letters, digits, '-', '_' or '.', not starting with '.'",
        name));
  }
}

double seconds_since(std::int64_t t0_us) {
  return static_cast<double>(now_us() - t0_us) / 1e6;
}

}  // namespace

std::string ManagedCluster::SnapshotCopy::how() const {
  if (copy.files > 0 && copy.cloned == copy.files) return "cloned copy-on-write (reflink)";
  if (copy.cloned == 0) return "copied byte for byte (this file system cannot clone files)";
  return fmt::format("{} of {} files cloned copy-on-write, the rest copied", copy.cloned,
                     copy.files);
}

void ManagedCluster::require_no_change_on(const std::string& why) const {
  UniqueFd data = open_folder(data_dir_);
  if (read_file_in(data.get(), "pgslow.owner", data_dir_ / "pgslow.owner", 4096)) {
    throw RuntimeError(fmt::format(
        "pgslow's settings are on the cluster in {} (pgslow.owner): {}. Run `pgslow restore` "
        "(or let the run that holds them finish), then try again",
        cluster_dir_.string(), why));
  }
}

std::vector<std::string> ManagedCluster::snapshots() const {
  const fs::path folder = options_.workdir / kSnapshotsFolder / cluster_dir_.filename();
  std::error_code ec;
  if (!fs::is_directory(folder, ec)) return {};
  UniqueFd dir = open_folder(folder);
  std::vector<std::string> names;
  for (const std::string& n : names_in(dir.get(), folder))
    if (!n.starts_with(".")) names.push_back(n);
  std::sort(names.begin(), names.end());
  return names;
}

ManagedCluster::SnapshotCopy ManagedCluster::snapshot(const std::string& name) {
  require_snapshot_name(name);
  if (!is_initialized()) {
    throw RuntimeError(fmt::format(
        "there is no cluster in {} to snapshot: run `pgslow server start` and `pgslow load` first",
        cluster_dir_.string()));
  }
  const bool was_running = is_running();
  require_no_change_on("a snapshot would keep them");
  // A clean shutdown: the copy starts without recovery, and nothing writes while it is made.
  if (was_running) stop();
  const std::int64_t t0 = now_us();
  UniqueFd workdir = open_folder(options_.workdir);
  UniqueFd all =
      make_folder_in(workdir.get(), kSnapshotsFolder, options_.workdir / kSnapshotsFolder);
  const fs::path folder = options_.workdir / kSnapshotsFolder / cluster_dir_.filename();
  UniqueFd mine = make_folder_in(all.get(), cluster_dir_.filename(), folder);
  std::string staging;
  UniqueFd staged = make_private_folder_in(mine.get(), ".new-", staging, folder);
  UniqueFd cluster = open_folder(cluster_dir_);
  SnapshotCopy out;
  out.path = folder / name;
  // The snapshot is pgslow's own: the server's user may not change what later runs start from.
  const FileOwnership ours{::geteuid(), ::getegid(), 0700};
  try {
    out.copy = copy_tree_in(cluster.get(), "data", staged.get(), "data", ours, true, data_dir_);
    if (move_folder_in(staged.get(), "data", mine.get(), name, out.path))
      spdlog::info("replaced the snapshot {}", out.path.string());
  } catch (...) {
    remove_tree_in(mine.get(), staging, folder / staging);
    if (was_running) start();
    throw;
  }
  remove_tree_in(mine.get(), staging, folder / staging);  // empty, or the old snapshot
  out.seconds = seconds_since(t0);
  if (was_running) start();
  return out;
}

void ManagedCluster::require_snapshot(const std::string& name) const {
  require_snapshot_name(name);
  const std::vector<std::string> there = snapshots();
  if (std::find(there.begin(), there.end(), name) == there.end()) {
    throw RuntimeError(fmt::format(
        "the cluster in {} has no snapshot '{}' ({}): make one with `pgslow{} server snapshot {}`",
        cluster_dir_.string(), name,
        there.empty() ? std::string("it has none") : "it has: " + join(there, ", "),
        options_.pg_version ? fmt::format(" --pg-version {}", *options_.pg_version) : "", name));
  }
}

std::filesystem::path ManagedCluster::remove_snapshot(const std::string& name) {
  require_snapshot(name);
  const fs::path folder = options_.workdir / kSnapshotsFolder / cluster_dir_.filename();
  // The snapshot is root's, in root's folder: removed one descriptor step at a time all the
  // same, as every tree pgslow removes. A start from it made its own copy: nothing uses it.
  UniqueFd mine = open_folder(folder);
  remove_tree_in(mine.get(), name, folder / name);
  return folder / name;
}

ManagedCluster::SnapshotCopy ManagedCluster::start_from_snapshot(const std::string& name,
                                                                 std::chrono::seconds timeout) {
  require_snapshot(name);
  const fs::path folder = options_.workdir / kSnapshotsFolder / cluster_dir_.filename();
  // The journal's originals belong to the data directory they were read from.
  if (is_initialized()) require_no_change_on("the snapshot's data would replace them");
  if (is_running()) stop();
  prepare_workdir();  // the cluster folder, when it was destroyed since
  const std::int64_t t0 = now_us();
  UniqueFd mine = open_folder(folder);
  std::string staging;
  UniqueFd staged = make_private_folder_in(mine.get(), ".new-", staging, folder);
  FileOwnership owner{::geteuid(), ::getegid(), 0700};
  if (auto user_name = server_user()) {
    if (auto user = find_system_user(*user_name)) owner = FileOwnership{user->uid, user->gid, 0700};
  }
  SnapshotCopy out;
  out.path = folder / name;
  try {
    out.copy = copy_tree_in(mine.get(), name, staged.get(), "data", owner, true, out.path);
    UniqueFd cluster = open_folder(cluster_dir_);
    // One rename: the server's data is the old folder or the new one, never half of each.
    move_folder_in(staged.get(), "data", cluster.get(), "data", data_dir_);
  } catch (...) {
    remove_tree_in(mine.get(), staging, folder / staging);
    throw;
  }
  remove_tree_in(mine.get(), staging, folder / staging);  // the old data directory
  out.seconds = seconds_since(t0);
  start(timeout);
  return out;
}

}  // namespace pgslow::server
