#pragma once
// Integration tests share one managed PostgreSQL cluster per test binary: created in a
// temporary workdir on first use, stopped and removed when the binary exits (normally, on a
// failed test, or killed: a watchdog process cleans up after a crash).

#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "server/managed_cluster.h"

namespace pgslow::testing {

// The binary's shared cluster, started on first use.
server::ManagedCluster& cluster();

// The shared cluster's conninfo for database `dbname`.
std::string conninfo(const std::string& dbname = "postgres");

// The shared cluster's workdir (where pgslow keeps its journal for it), data directory and
// postgresql.auto.conf.
std::filesystem::path cluster_workdir();
std::filesystem::path cluster_data_dir();
std::filesystem::path cluster_auto_conf();

// `SHOW name` on the shared cluster, in a new session ("?" when it has no value).
std::string show_setting(const std::string& name);

// A fresh copy of `template_db` under a unique name (CREATE DATABASE ... TEMPLATE ...
// STRATEGY FILE_COPY); returns its conninfo. The template must have no open connections.
std::string clone_database(const std::string& template_db);

// The pgslow command built alongside the tests.
#ifdef PGSLOW_BINARY
inline std::filesystem::path pgslow_binary() {
  return PGSLOW_BINARY;
}
#endif

// A cluster of one's own (e.g. with max_connections=5), in its own temporary workdir,
// started by the constructor and removed by the destructor (or by the watchdog after a crash).
class TemporaryCluster {
 public:
  explicit TemporaryCluster(std::vector<std::pair<std::string, std::string>> settings = {},
                            server::Envelope envelope = {});
  // Its workdir made in `parent` (a file system a test made: reflink_mount.h), of
  // `pg_version` (nullopt: PGSLOW_PG_VERSION's, else the default).
  TemporaryCluster(const std::filesystem::path& parent, std::optional<int> pg_version);
  ~TemporaryCluster();
  TemporaryCluster(const TemporaryCluster&) = delete;
  TemporaryCluster& operator=(const TemporaryCluster&) = delete;

  server::ManagedCluster& get() { return *cluster_; }
  const std::filesystem::path& workdir() const { return workdir_; }
  // Stops and removes the cluster now; the destructor then does nothing.
  void remove();

 private:
  void start(server::ManagedOptions options);

  std::filesystem::path workdir_;
  std::unique_ptr<server::ManagedCluster> cluster_;
  int watchdog_fd_ = -1;  // the watchdog cleans up when this closes (our exit, however it ends)
};

// A temporary workdir for managed clusters that pgslow commands create themselves, e.g. one per
// version (`pgslow --workdir W run --versions 15,18` makes W/cluster, the default cluster being
// 15's, and W/cluster-18). The destructor stops the cluster of each of `pg_versions` in it and
// removes the workdir; a watchdog does the same if the test binary dies first. The versions must be
// installed.
class TemporaryWorkdir {
 public:
  // Made in `parent` when given (a file system a test made), else in TMPDIR.
  explicit TemporaryWorkdir(const std::vector<int>& pg_versions,
                            const std::filesystem::path& parent = {});
  ~TemporaryWorkdir();
  TemporaryWorkdir(const TemporaryWorkdir&) = delete;
  TemporaryWorkdir& operator=(const TemporaryWorkdir&) = delete;

  const std::filesystem::path& path() const { return path_; }
  // The managed cluster of `pg_version` in this workdir (as `pgslow --pg-version N` opens it).
  server::ManagedCluster cluster(int pg_version) const;

 private:
  std::filesystem::path path_;
  std::vector<int> pg_versions_;
  std::vector<int> watchdog_fds_;
};

}  // namespace pgslow::testing
