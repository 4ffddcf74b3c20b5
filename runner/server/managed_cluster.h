#pragma once
// The managed cluster: a throwaway PostgreSQL server that pgslow initdb's into its workdir and
// starts, stops and destroys itself. The default target, and what the integration tests use.
//
// Layout (docs/server.md):
//   <workdir>/cluster/data/        the data directory (initdb'd once, then reused)
//   <workdir>/cluster/socket/      the Unix socket, in a private (0700) folder
//   <workdir>/cluster/server.log   the server log (pg_ctl -l), rotated between stages into
//                                  server.log.1 past 64 MB
//   <workdir>/cluster.state        what pgslow remembers: port, binaries (in the workdir, which
//                                  is pgslow's, not in the cluster folder, which is the server's)
// A cluster of a chosen major version (--pg-version 17) lives in <workdir>/cluster-17 instead,
// so clusters of several versions live side by side.
// When pgslow runs as root, initdb and the server run as the `postgres` system user, which
// owns <workdir>/cluster.

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/process.h"
#include "common/safe_fs.h"
#include "server/envelope.h"
#include "server/server_control.h"

namespace pgslow::server {

struct ManagedOptions {
  std::filesystem::path workdir;
  std::optional<std::filesystem::path> pg_bin;  // --pg-bin; else found (pg_binaries.h)
  // --pg-version: the cluster of this major version, with that version's programs
  // (pg_versions.h); nullopt: the default cluster, <workdir>/cluster, with the programs found.
  // A major version names one cluster: the default cluster's own version is <workdir>/cluster,
  // any other <workdir>/cluster-<major> (cluster_folder).
  std::optional<int> pg_version;
  int port = 0;  // 0: pick a free one and remember it
  // Extra server settings (name, value), written to the cluster's pgslow.conf at each start,
  // e.g. {"max_connections", "5"} for a test.
  std::vector<std::pair<std::string, std::string>> settings;
  // fsync=off, synchronous_commit=off, full_page_writes=off: for tests only, since it would
  // distort any benchmark.
  bool unsafe_fast = false;
  // The server's machine (envelope.h): the postmaster starts in a cgroup with these limits.
  Envelope envelope;
};

struct ClusterStatus {
  bool initialized = false;  // the data directory exists
  bool running = false;
  std::string version;  // "15.8": the running server's, else the binaries'
  int port = 0;
  std::filesystem::path socket_dir;
  std::filesystem::path data_dir;
  std::filesystem::path log_file;
  std::filesystem::path pg_bin;
  std::uint64_t size_bytes = 0;                // of the data directory
  std::optional<std::chrono::seconds> uptime;  // when running
  std::optional<int> pid;                      // the postmaster's, when running
};

class ManagedCluster : public ServerControl {
 public:
  explicit ManagedCluster(ManagedOptions options);

  // initdb on first use, then starts the server and waits until it accepts queries. When it is
  // already running (logged), only waits until it accepts queries.
  void start(std::chrono::seconds timeout = std::chrono::seconds(60));
  // Fast shutdown; a no-op when it is not running.
  void stop();
  // Stops the server and removes <workdir>/cluster.
  void destroy();
  bool is_running() const;
  bool is_initialized() const;
  ClusterStatus status() const;
  int port() const { return port_; }  // 0 until started or read from the state file
  std::filesystem::path socket_dir() const { return socket_dir_; }
  std::filesystem::path cluster_dir() const { return cluster_dir_; }
  // The folder of initdb/pg_ctl/postgres this cluster uses (found on first use).
  std::filesystem::path pg_bin() const { return bin(); }
  std::optional<int> pg_version() const { return options_.pg_version; }

  // ServerControl
  TargetKind kind() const override { return TargetKind::kManaged; }
  std::string describe() const override;
  std::string conninfo() const override;
  void reload() override;
  void restart(std::chrono::seconds timeout) override;
  std::optional<std::filesystem::path> data_dir() const override { return data_dir_; }
  std::optional<std::filesystem::path> log_file() const override { return log_file_; }
  // server.log past kLogCapBytes: its older part to server.log.1 (server_log.h cap_log).
  void keep_log_bounded() override;
  bool allows_changes() const override { return true; }
  std::string envelope() const override;
  std::optional<std::uint64_t> out_of_memory_kills() const override;
  Envelope current_envelope() const override { return options_.envelope; }
  // Writes `envelope`'s limits into the group the server runs in; it must need the same
  // controllers as the server's (RuntimeError naming the restart it would need otherwise).
  // A later start() writes the options' envelope again, whatever a killed run left.
  void set_envelope(const Envelope& envelope) override;
  // Snapshots of the loaded cluster (docs/server.md, "Snapshots"): its data directory copied,
  // stopped, into <workdir>/snapshots/<cluster folder>/<name>, a copy that is pgslow's (root's
  // when root), so the server's user cannot change what later runs start from. Each file is
  // cloned copy-on-write where the file system can (XFS reflink=1, btrfs), else copied.
  struct SnapshotCopy {
    std::filesystem::path path;  // the snapshot
    TreeCopy copy;
    double seconds = 0;
    // "cloned (reflink)", "copied (this file system cannot clone)", "partly cloned"
    std::string how() const;
  };
  // Stops the server (a clean shutdown: the snapshot needs no recovery), copies the data
  // directory, and starts it again when it was running. A snapshot of that name is replaced.
  // Refused while a pgslow change is on the cluster (pgslow.owner): restore it first.
  SnapshotCopy snapshot(const std::string& name);
  // Replaces the data directory with a copy of the snapshot (the cluster stopped first; the
  // old data removed), then starts the server; refused while a pgslow change is on it. RuntimeError
  // naming the snapshots there are when it has none of that name.
  SnapshotCopy start_from_snapshot(const std::string& name,
                                   std::chrono::seconds timeout = std::chrono::seconds(60));
  // The snapshots of this cluster, by name.
  std::vector<std::string> snapshots() const;
  // Removes the snapshot `name` (RuntimeError naming those there are when it has none of that
  // name); returns where it was. The cluster and its data are left alone.
  std::filesystem::path remove_snapshot(const std::string& name);

  // The cgroup the server runs in (named after the cluster folder, so a run that was
  // interrupted leaves one that the next start reuses and the next stop removes).
  CgroupGroup envelope_group() const;

 private:
  std::string group_name() const;
  // Throws RuntimeError, with `why`, when a pgslow change is on the cluster (pgslow.owner).
  // RuntimeError when this cluster has no snapshot `name`, naming those it has.
  void require_snapshot(const std::string& name) const;
  void require_no_change_on(const std::string& why) const;
  void prepare_workdir();
  void initdb();
  void write_settings();
  void choose_port();
  void remove_stale_pid_file();
  // Starts the server in `group` (when the envelope is not empty).
  void start_server(std::chrono::seconds timeout, const CgroupGroup& group);
  void load_state();
  void save_state() const;
  std::filesystem::path bin() const;
  std::optional<std::string> server_user() const;  // "postgres" when we are root
  std::optional<int> running_pid() const;

  ManagedOptions options_;
  std::filesystem::path cluster_dir_;
  std::filesystem::path data_dir_;
  std::filesystem::path socket_dir_;
  std::filesystem::path log_file_;
  std::filesystem::path state_file_;
  mutable std::optional<std::filesystem::path> pg_bin_;
  int port_ = 0;
};

// The folder in the workdir of the cluster of `major`, the default cluster being of
// `default_major`: "cluster" for the default (no major, or the default's own), else
// "cluster-<major>". One major version, one cluster, one set of templates.
std::string cluster_folder(std::optional<int> major, std::optional<int> default_major);
// The major version of the workdir's default cluster: its data directory's PG_VERSION, else
// that of the programs it would be created with (`pg_bin`, else found); nullopt when neither
// can be read. Throws RuntimeError (the refusal) when PG_VERSION, or a folder on the way, is a
// link the server's user could have placed, or the file is far longer than a version.
std::optional<int> default_cluster_major(const std::filesystem::path& workdir,
                                         const std::optional<std::filesystem::path>& pg_bin);
// The clusters in the workdir, the default first, then cluster-<major> by major (the options to
// open each; a workdir without any gives none).
std::vector<ManagedOptions> workdir_clusters(const std::filesystem::path& workdir);

// Makes the open folder `folder` private to the server's user `user` (and root): mode 0700,
// owned by them (by us when `user` is empty). One another user left (a name in /tmp taken
// ahead of pgslow) is refused, naming it. For the cluster's folders and the pooler's.
void make_server_private(int folder, const std::filesystem::path& shown_as,
                         const std::optional<SystemUser>& user);

// Where a server listening in `folder` puts its Unix socket: `folder` when its longest socket
// path fits sun_path, else a private folder named after `key` (a deep workdir): in
// /run/pgslow as root, where nobody else can take that name first, else in /tmp. For the
// cluster's socket and the pooler's.
std::filesystem::path socket_folder(const std::filesystem::path& folder, const std::string& key,
                                    std::string_view tag);

// The folder a socket_folder outside the workdir is made in, open; created (as
// create_trusted_folders does) when it is /run/pgslow.
UniqueFd open_socket_parent(const std::filesystem::path& socket_dir);

// Whether something (any process) listens on 127.0.0.1:port.
bool port_in_use(int port);
// A port the kernel says is free on 127.0.0.1 right now (never 5432).
int pick_free_port();

}  // namespace pgslow::server
