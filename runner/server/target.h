#pragma once
// The three ways pgslow reaches a server (server_control.h), chosen by a TargetSpec (from a
// scenario's `server:` section or the command line).

#include <chrono>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>

#include "server/envelope.h"
#include "server/server_control.h"

namespace pgslow::server {

struct TargetSpec {
  TargetKind kind = TargetKind::kManaged;
  std::filesystem::path workdir;                // managed: where the cluster lives
  std::optional<std::filesystem::path> pg_bin;  // managed, pgctl: the server programs
  std::optional<int> pg_version;                // managed: the cluster of this major version
  std::filesystem::path data_dir;               // pgctl: required; command: optional
  std::string conninfo;                         // command: required; pgctl: derived if empty
  std::string reload_command;                   // command: empty means pg_reload_conf()
  std::string restart_command;                  // command: needed for restart-only settings
  // command: sets parameters itself (JSON on stdin) instead of ALTER SYSTEM; restore_command
  // puts the originals back (empty: apply_command with the original values).
  std::string apply_command;
  std::string restore_command;
  bool allow_changes = false;  // pgctl, command: may pgslow change it?
  // pgctl: where pg_ctl sends the server's log on restart (pg_ctl -l); empty means
  // <data_dir>/pgslow-server.log.
  std::filesystem::path log_file;
  // managed: the machine the server gets (a scenario's `server:`, run --memory/--cpus/--cpuset);
  // empty: unlimited, as before. Other kinds refuse one (docs/envelope.md).
  Envelope envelope;
};

// The target `spec` describes. Checks the spec (InputError naming the missing field); for the
// managed kind it starts the cluster when it is not running. (target_kind.h: per kind.)
std::unique_ptr<ServerControl> open_target(const TargetSpec& spec);

std::string_view to_string(TargetKind kind);  // "managed", "pgctl", "command"

// How pgslow reaches a pgctl target given no conninfo: the socket folder and port of its
// postmaster.pid (lines 5 and 4), which the server's user writes. Only an absolute folder and
// a port of digits count (else /var/run/postgresql and 5432), each one quoted conninfo value,
// and no password is sent (pg::local_socket_conninfo).
std::string pgctl_socket_conninfo(const std::string& socket_dir, const std::string& port);

// An existing local data directory, started and stopped with pg_ctl as its owner.
class PgctlServer : public ServerControl {
 public:
  explicit PgctlServer(TargetSpec spec);
  TargetKind kind() const override { return TargetKind::kPgctl; }
  std::string describe() const override;
  std::string conninfo() const override;
  void reload() override;
  void restart(std::chrono::seconds timeout) override;
  std::optional<std::filesystem::path> data_dir() const override { return spec_.data_dir; }
  std::optional<std::filesystem::path> log_file() const override { return spec_.log_file; }
  bool allows_changes() const override { return spec_.allow_changes; }

 private:
  TargetSpec spec_;
  std::filesystem::path pg_bin_;
  std::optional<std::string> run_as_;  // the data directory's owner, when we are root
};

// A server reached by conninfo only, reloaded and restarted by the user's shell commands
// (systemctl, docker compose, kubectl).
class CommandServer : public ServerControl {
 public:
  explicit CommandServer(TargetSpec spec);
  TargetKind kind() const override { return TargetKind::kCommand; }
  std::string describe() const override;
  std::string conninfo() const override { return spec_.conninfo; }
  void reload() override;
  void restart(std::chrono::seconds timeout) override;
  std::optional<std::filesystem::path> data_dir() const override;
  bool allows_changes() const override { return spec_.allow_changes; }
  bool sets_parameters() const override { return !spec_.apply_command.empty(); }
  void set_parameters(const ParameterChange& change, std::chrono::seconds timeout) override;

 private:
  TargetSpec spec_;
};

// The JSON a command target's apply or restore command reads on standard input.
std::string parameter_change_json(const ParameterChange& change);

// Waits until a server at `conninfo` answers a query, polling, for at most `timeout`. When
// `previous_start` is given (pg_postmaster_start_time() before a restart), waits for a server
// that started later, so an old server still shutting down does not count. Throws
// RuntimeError with the last connection error on timeout.
void wait_until_accepting(const std::string& conninfo, std::chrono::seconds timeout,
                          const std::optional<std::string>& previous_start = std::nullopt);

}  // namespace pgslow::server
