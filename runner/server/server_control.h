#pragma once
// How pgslow reaches the server under test and how it changes it. Three implementations:
//   managed  an initdb'd throwaway cluster in the workdir (the default)
//   pgctl    an existing local data directory, restarted with pg_ctl as its owner
//   command  user-supplied reload/restart commands (systemctl, docker compose, kubectl);
//            the server is reached by conninfo only

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <string>

#include "server/envelope.h"

namespace pgslow::server {

enum class TargetKind { kManaged, kPgctl, kCommand };

// Parameters for a target that sets them itself (sets_parameters()), as the JSON its command
// reads on standard input: {"settings": {"shared_buffers": "16MB", "work_mem": null},
// "restart_needed": true, "restore": false}. A null value means "remove your entry": the
// parameter goes back to the server's own default.
struct ParameterChange {
  std::map<std::string, std::optional<std::string>> settings;
  bool restart_needed = false;  // a postmaster-context value differs from what runs
  bool restore = false;         // the original values, put back
};

class ServerControl {
 public:
  virtual ~ServerControl() = default;
  virtual TargetKind kind() const = 0;
  // A one-line description for reports and errors ("managed cluster in .pgslow/cluster").
  virtual std::string describe() const = 0;
  // For pg::Connection::open; dbname=postgres unless pg::with_database() changes it.
  virtual std::string conninfo() const = 0;
  // pg_reload_conf() or the user's reload command.
  virtual void reload() = 0;
  // Restarts (or starts, when it is down) and waits until the server accepts queries; throws
  // RuntimeError with the last lines of the server log when it does not come back within
  // `timeout`.
  virtual void restart(std::chrono::seconds timeout) = 0;
  // The data directory, for a local server only (postgresql.auto.conf lives there).
  virtual std::optional<std::filesystem::path> data_dir() const = 0;
  // The server log (for log tails in errors and per-stage excerpts), when pgslow can read it.
  virtual std::optional<std::filesystem::path> log_file() const { return std::nullopt; }
  // Keeps the log bounded where it is pgslow's to keep (the managed cluster's, rotated past a
  // size: docs/server.md). Called between stages, where no one holds an offset into it.
  virtual void keep_log_bounded() {}
  // Whether pgslow may change this server's configuration: always for the managed cluster,
  // otherwise only with `allow_changes: true` / --allow-changes.
  virtual bool allows_changes() const = 0;
  // Whether this target sets parameters with its own command (the command target's `apply:`)
  // instead of ALTER SYSTEM: Kubernetes operators, Patroni, cloud parameter groups.
  virtual bool sets_parameters() const { return false; }
  // The server's envelope as the run's header shows it ("memory 512MB, cpus 1.5 (cgroup v1
  // pgslow-...)"); "" when it runs unlimited.
  virtual std::string envelope() const { return ""; }
  // The envelope the server runs in now (empty: unlimited, or not one pgslow made).
  virtual Envelope current_envelope() const { return {}; }
  // Gives the running server another envelope in place, with the same controllers as the one
  // it runs in (a stage of a sweep of server.memory or server.cpus): cgroups apply a new limit
  // to the processes already in them, and a smaller memory limit reclaims page cache at once.
  // Only the managed cluster has one; throws RuntimeError otherwise, or when the host refuses
  // the limit (a v1 memory limit below what the server cannot give back).
  virtual void set_envelope(const Envelope& envelope);
  // How many server processes the envelope's memory limit has killed (out of memory) since
  // the envelope was made; nullopt without a memory limit, or when the host does not count.
  virtual std::optional<std::uint64_t> out_of_memory_kills() const { return std::nullopt; }
  // Hands `change` to that command, which makes the values effective (reload or restart as it
  // must); returns once the server accepts queries again. Throws RuntimeError naming the
  // command, its exit status and the last lines of its output.
  virtual void set_parameters(const ParameterChange& change, std::chrono::seconds timeout);
};

}  // namespace pgslow::server
