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

// Setting the managed cluster up: its folders (private to the server's user), initdb, the
// settings file pgslow writes, and its port.

namespace pgslow::server {

namespace fs = std::filesystem;

namespace {

// A postgresql.conf value: always single-quoted (valid for every type), quotes doubled.
std::string conf_value(const std::string& v) {
  std::string out = "'";
  for (char c : v) {
    if (c == '\'') out += '\'';
    out += c;
  }
  return out + "'";
}

}  // namespace

// A folder only the server's user (and root) may enter: the cluster and its socket.
void make_server_private(int folder, const fs::path& shown_as,
                         const std::optional<SystemUser>& user) {
  struct stat st {};
  if (::fstat(folder, &st) != 0)
    throw RuntimeError(fmt::format("cannot read {}: {}", shown_as.string(), std::strerror(errno)));
  // One left by someone else (a name in /tmp taken ahead of pgslow) is not taken over.
  if (st.st_uid != 0 && st.st_uid != ::geteuid() && (!user || st.st_uid != user->uid)) {
    throw RuntimeError(fmt::format(
        "pgslow refuses {}: it belongs to uid {}, not to root or the server's user. Remove it, "
        "or pass --workdir with a folder of your own",
        shown_as.string(), st.st_uid));
  }
  ::fchmod(folder, 0700);
  if (user && ::fchown(folder, user->uid, user->gid) != 0) {
    throw RuntimeError(fmt::format("cannot give {} to the postgres user: {}", shown_as.string(),
                                   std::strerror(errno)));
  }
}

void ManagedCluster::prepare_workdir() {
  std::optional<SystemUser> user;
  if (auto name = server_user()) {
    user = find_system_user(*name);
    if (!user) {
      throw RuntimeError(
          "pgslow runs as root, PostgreSQL refuses to run as root, and there is no `postgres` "
          "system user to run it as: create one (adduser --system --group postgres; the "
          "postgresql package does) or run pgslow as an ordinary user");
    }
  }
  // Judged before anything is made; every step below goes through descriptors: the cluster
  // folder belongs to the server's user, who could put a symlink where the socket folder
  // should be (common/safe_fs.h).
  UniqueFd workdir = create_workdir(options_.workdir);
  if (::faccessat(workdir.get(), ".", W_OK | X_OK, 0) != 0) {
    throw RuntimeError(fmt::format(
        "the workdir {} is not writable ({}): pass --workdir with a folder you can write to",
        options_.workdir.string(), std::strerror(errno)));
  }
  UniqueFd cluster = make_folder_in(workdir.get(), cluster_dir_.filename(), cluster_dir_);
  make_server_private(cluster.get(), cluster_dir_, user);
  // The socket folder is private: local connections are trusted, so only the server's user
  // (and root) may reach the socket. It is in the cluster folder, or elsewhere for a deep
  // workdir (socket_folder).
  UniqueFd socket_parent = socket_dir_.parent_path() == cluster_dir_
                               ? UniqueFd(::dup(cluster.get()))
                               : open_socket_parent(socket_dir_);
  UniqueFd socket = make_folder_in(socket_parent.get(), socket_dir_.filename(), socket_dir_);
  make_server_private(socket.get(), socket_dir_, user);
  if (!user) return;

  // The postgres user must traverse every folder above the cluster. pgslow's own workdir may
  // lack o+x (a umask of 077, mkdtemp): give it traversal (not listing) rights.
  struct stat st {};
  if (::fstat(workdir.get(), &st) == 0 && st.st_uid == ::geteuid() && (st.st_mode & S_IXOTH) == 0) {
    ::fchmod(workdir.get(), (st.st_mode & 07777) | S_IXOTH);
  }
  ProcessOptions o;
  o.run_as = server_user();
  o.timeout = std::chrono::seconds(10);
  if (run_process({"test", "-w", cluster_dir_.string()}, o).ok()) return;
  // Name the first folder on the way that the postgres user cannot enter.
  fs::path blocked = cluster_dir_;
  fs::path walk;
  for (const auto& part : cluster_dir_) {
    walk /= part;
    if (!run_process({"test", "-x", walk.string()}, o).ok()) {
      blocked = walk;
      break;
    }
  }
  struct stat bst {};
  ::stat(blocked.c_str(), &bst);
  throw RuntimeError(fmt::format(
      "the postgres system user cannot reach {}: it may not enter {} (mode {:04o}). PostgreSQL "
      "refuses to run as root, so its data must be where the postgres user can go: pass "
      "--workdir under a folder it can enter (e.g. /var/tmp/pgslow), or allow it with "
      "`chmod o+x {}`",
      cluster_dir_.string(), blocked.string(), bst.st_mode & 07777, blocked.string()));
}

void ManagedCluster::initdb() {
  if (is_initialized()) return;
  std::error_code ec;
  if (fs::exists(data_dir_, ec) && !fs::is_empty(data_dir_, ec)) {
    throw RuntimeError(fmt::format(
        "{} exists but is not a PostgreSQL data directory (no PG_VERSION): remove it, or run "
        "`pgslow server destroy` to start over",
        data_dir_.string()));
  }
  spdlog::info("creating the managed cluster in {} (initdb, a few seconds)", data_dir_.string());
  std::vector<std::string> argv = {(bin() / "initdb").string(), "-D", data_dir_.string(), "-U",
                                   "postgres", "--auth-local=trust", "--auth-host=scram-sha-256",
                                   "--encoding=UTF8", "--locale=C",
                                   // Skips only initdb's final flush of a throwaway cluster;
                                   // the server itself keeps fsync on.
                                   "--no-sync"};
  ProcessOptions o;
  o.run_as = server_user();
  o.timeout = std::chrono::seconds(300);
  auto r = run_process(argv, o);
  if (!r.ok()) {
    remove_tree(data_dir_);
    throw RuntimeError(fmt::format("initdb failed ({}): {}\n{}", r.describe_status(),
                                   shell_quote(argv), last_lines(r.output, 20)));
  }
  // The managed settings live in pgslow.conf, rewritten at each start; ALTER SYSTEM
  // (postgresql.auto.conf) still wins over both.
  // initdb ran as the server's user, who owns the folder: appended through a descriptor that
  // follows no link of theirs.
  const std::string include =
      "\n# Added by pgslow: the managed cluster's port, socket and logging live in\n"
      "# pgslow.conf, which pgslow rewrites at each start.\n"
      "include_if_exists = 'pgslow.conf'\n";
  UniqueFd data = open_folder(data_dir_);
  UniqueFd conf = open_file_in(data.get(), "postgresql.conf", O_WRONLY | O_APPEND,
                               data_dir_ / "postgresql.conf");
  if (!conf ||
      ::write(conf.get(), include.data(), include.size()) != static_cast<ssize_t>(include.size()))
    throw RuntimeError(fmt::format("cannot write {}/postgresql.conf", data_dir_.string()));
}

void ManagedCluster::write_settings() {
  std::string text =
      "# Written by pgslow at each start of the managed cluster: edits here are lost.\n"
      "# Change settings with ALTER SYSTEM (postgresql.auto.conf) or in postgresql.conf.\n";
  auto add = [&](const std::string& name, const std::string& value) {
    text += fmt::format("{} = {}\n", name, conf_value(value));
  };
  add("listen_addresses", "127.0.0.1");
  add("port", std::to_string(port_));
  add("unix_socket_directories", socket_dir_.string());
  add("unix_socket_permissions", "0700");
  // A log that explains: timestamps and pids, checkpoints and lock waits (evidence).
  add("log_line_prefix", "%m [%p] %q%a ");
  add("log_checkpoints", "on");
  add("log_lock_waits", "on");
  if (options_.unsafe_fast) {
    add("fsync", "off");
    add("synchronous_commit", "off");
    add("full_page_writes", "off");
  }
  for (const auto& [name, value] : options_.settings) add(name, value);
  // The data directory belongs to the server's user: the file is written through a
  // descriptor, under a fresh name, and given to that user through the descriptor.
  UniqueFd data = open_folder(data_dir_);
  FileOwnership owner{::geteuid(), ::getegid(), 0600};
  if (auto name = server_user()) {
    if (auto user = find_system_user(*name)) owner = FileOwnership{user->uid, user->gid, 0600};
  }
  replace_file_in(data.get(), "pgslow.conf", text, owner, data_dir_ / "pgslow.conf",
                  "pgslow.conf.tmp.");
}

void ManagedCluster::choose_port() {
  if (options_.port != 0) {
    port_ = options_.port;
    if (port_in_use(port_)) {
      throw RuntimeError(fmt::format(
          "port {} on 127.0.0.1 is taken by another program: choose another port, or let "
          "pgslow pick a free one",
          port_));
    }
    return;
  }
  if (port_ != 0 && !port_in_use(port_)) return;
  int old = port_;
  port_ = pick_free_port();
  if (old != 0) spdlog::info("port {} is taken by another program; using port {}", old, port_);
}

}  // namespace pgslow::server
