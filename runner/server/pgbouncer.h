#pragma once
// pgslow's own PgBouncer in front of the managed cluster (docs/pooler.md), started and stopped
// like the server: as the `postgres` user when pgslow is root, listening only on a Unix socket
// in a private (0700) folder, named after a free port. Auth mirrors the cluster's own socket:
// `trust` on a socket only the server's user and root can reach; the user list names users
// with no password, so no file holds one.
//
// Layout:
//   <workdir>/pooler/              the server's user's, 0700: pgbouncer.ini, users.txt,
//                                  pgbouncer.log, pgbouncer.pid and the socket
//   <workdir>/pooler.state         pid and port, in pgslow's own workdir: a run killed with
//                                  its PgBouncer running leaves one, and the next start stops
//                                  that PgBouncer first (its settings die with it)

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <set>
#include <string>

namespace pgslow::server {

struct PgBouncerOptions {
  std::filesystem::path workdir;
  // The server it pools: the managed cluster's socket folder and port.
  std::filesystem::path server_socket_dir;
  int server_port = 0;
  std::map<std::string, std::string> settings;  // [pgbouncer] settings (pooler.h's table)
  std::filesystem::path program = "/usr/sbin/pgbouncer";
};

// What SHOW POOLS and SHOW STATS say of one database (times in microseconds).
struct PoolerStats {
  std::int64_t clients_active = 0;
  std::int64_t clients_waiting = 0;
  std::int64_t servers_active = 0;
  std::int64_t servers_idle = 0;
  std::int64_t servers_used = 0;
  std::int64_t max_wait_us = 0;
  std::int64_t total_xact_count = 0;
  std::int64_t total_query_count = 0;
  std::int64_t total_wait_time_us = 0;  // clients' total time waiting for a server connection
  // The waits under way (SHOW CLIENTS of the clients waiting now): SHOW STATS counts a wait
  // only once the client gets its server connection, so a client that waits out a whole window
  // (session mode, more clients than the pool) would count nothing.
  std::int64_t current_wait_us = 0;

  // The clients' time waiting for a server connection so far, the waits under way included:
  // its difference between two readings is the wait within them, each wait counted for its
  // part between them.
  std::int64_t accrued_wait_us() const { return total_wait_time_us + current_wait_us; }
};

class PgBouncer {
 public:
  explicit PgBouncer(PgBouncerOptions options);
  // Stops it when it runs; never throws (errors logged).
  ~PgBouncer();
  PgBouncer(const PgBouncer&) = delete;
  PgBouncer& operator=(const PgBouncer&) = delete;

  // Stops one a killed run left, writes the configuration, starts PgBouncer and waits until its
  // admin console answers. RuntimeError with the log's last lines when it does not start.
  void start(std::chrono::seconds timeout = std::chrono::seconds(30));
  // Stops it (SIGTERM, then SIGKILL after 10 s); a no-op when it is not running.
  void stop();
  bool is_running() const;
  std::optional<int> pid() const { return pid_; }
  int port() const { return port_; }
  std::filesystem::path folder() const { return folder_; }
  // Where its socket is: the folder, or a private folder in /tmp when that path is too long.
  std::filesystem::path socket_dir() const;
  std::filesystem::path log_file() const { return folder_ / "pgbouncer.log"; }
  // "1.18.0", from `pgbouncer --version`.
  const std::string& version() const { return version_; }

  // The conninfo of database `dbname` through the pooler.
  std::string conninfo(const std::string& dbname) const;
  // The admin console (database `pgbouncer`).
  std::string admin_conninfo() const;
  // Rewrites the configuration with `settings` (replacing the options'), sends RELOAD on the
  // admin console and reads each value back with SHOW CONFIG; a mismatch is a RuntimeError.
  // When it is not running: the settings its next start() takes.
  void set(const std::map<std::string, std::string>& settings);
  const std::map<std::string, std::string>& settings() const { return settings_; }
  // SHOW POOLS + SHOW STATS for `dbname`; zeros for a database it has not seen.
  PoolerStats stats(const std::string& dbname) const;
  // KILL `dbname` on the admin console: its client and server connections are dropped and new
  // clients wait until resume_database(). For a data reset that drops and recreates the
  // database: a login while it is gone fails, and PgBouncer then refuses every client of that
  // database for server_login_retry (15 s). A database it has not seen is left alone.
  void hold_database(const std::string& dbname);
  // RESUME `dbname` after hold_database(); a database that is not held is left alone.
  void resume_database(const std::string& dbname);
  // RECONNECT `dbname`: each of its server connections closes when it is next released, and
  // new ones open as the pool's size now allows. A smaller default_pool_size alone closes only
  // idle connections, which a busy pool never has. A database it has not seen is left alone.
  void reconnect_database(const std::string& dbname);
  // The log's last `lines` lines (bounded read).
  std::string log_tail(std::size_t lines = 20) const;

 private:
  void prepare_folder();
  void write_config();
  void save_state() const;
  void stop_left_over();
  std::string ini() const;
  // What the configuration file says: the settings, max_client_conn's default when they leave
  // it out, and the default of every setting an earlier set() gave and this one drops
  // (PgBouncer keeps a value whose line is gone on RELOAD).
  std::map<std::string, std::string> written_settings() const;

  PgBouncerOptions options_;
  std::map<std::string, std::string> settings_;
  std::set<std::string> ever_set_;  // every setting a set() gave, for written_settings()
  std::filesystem::path folder_;
  std::filesystem::path state_file_;
  std::string version_;
  int port_ = 0;
  std::optional<int> pid_;
};

// Stops the PgBouncer a killed pgslow left running in `workdir` (its pooler.state names it, and
// the pgslow that started it is gone); true when there was one. Every command runs it first.
bool stop_left_over_pgbouncer(const std::filesystem::path& workdir);

// Whether `pid` is a live PgBouncer process.
bool is_live_pgbouncer(int pid);

// The PgBouncer version installed at `program` ("1.18.0"); empty when it cannot be run.
std::string pgbouncer_version(const std::filesystem::path& program = "/usr/sbin/pgbouncer");

}  // namespace pgslow::server
