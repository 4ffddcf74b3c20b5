#include "server/target.h"

#include <fmt/format.h>
#include <pwd.h>
#include <spdlog/spdlog.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <thread>

#include "common/clock.h"
#include "common/errors.h"
#include "common/process.h"
#include "common/safe_fs.h"
#include "common/strings.h"
#include "pg/connection.h"
#include "pg/data_dir.h"
#include "pg/error.h"
#include "server/managed_cluster.h"
#include "server/pg_binaries.h"
#include "server/server_log.h"

namespace pgslow::server {

namespace fs = std::filesystem;

namespace {

std::optional<std::string> postmaster_start_time(const std::string& conninfo) {
  try {
    auto conn = pg::Connection::open(conninfo);
    return conn.query_value("SELECT pg_postmaster_start_time()::text");
  } catch (const pg::Error&) {
    return std::nullopt;
  }
}

// When the server last read its configuration files, as a new session sees it (the
// postmaster's time: a reload or a start changes it); nullopt when the server is down.
std::optional<std::string> config_load_time(const std::string& conninfo) {
  try {
    auto conn = pg::Connection::open(conninfo);
    return conn.query_value(
        "SELECT pg_conf_load_time()::text || ' ' || pg_postmaster_start_time()::text");
  } catch (const pg::Error&) {
    return std::nullopt;
  }
}

// A user's command is a shell command line by design (systemctl ..., docker compose ...).
ProcessResult run_user_command(const std::string& what, const std::string& command,
                               std::chrono::seconds timeout) {
  ProcessOptions o;
  o.timeout = timeout;
  spdlog::info("running the {} command: {}", what, command);
  auto r = run_process({"/bin/sh", "-c", command}, o);
  if (!r.ok()) {
    throw RuntimeError(fmt::format("the {} command failed ({}): {}\n{}", what, r.describe_status(),
                                   command, last_lines(r.output, 20)));
  }
  return r;
}

}  // namespace

void wait_until_accepting(const std::string& conninfo, std::chrono::seconds timeout,
                          const std::optional<std::string>& previous_start) {
  const std::int64_t deadline = now_us() + std::chrono::microseconds(timeout).count();
  std::string last_error = "no attempt";
  for (;;) {
    try {
      auto conn = pg::Connection::open(conninfo);
      auto started = conn.query_value("SELECT pg_postmaster_start_time()::text");
      if (!previous_start || started != previous_start) return;
      last_error = "the old server is still running (its start time has not changed)";
    } catch (const pg::Error& e) {
      last_error = e.what();
    }
    if (now_us() >= deadline) {
      throw RuntimeError(fmt::format("the server at {} did not accept queries within {} s: {}",
                                     pg::redact_conninfo(conninfo), timeout.count(), last_error));
    }
    // Waiting for another program (a service manager) to bring the server up: poll.
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
}

// ---- pgctl ----

PgctlServer::PgctlServer(TargetSpec spec) : spec_(std::move(spec)) {
  if (spec_.data_dir.empty()) {
    throw InputError("the pgctl target needs data_dir: the data directory of the local server");
  }
  spec_.data_dir = fs::absolute(spec_.data_dir).lexically_normal();
  // The server's user writes PG_VERSION, and its major names a folder of programs below: read
  // it like postmaster.pid, and only digits count.
  std::optional<std::string> version_text;
  try {
    UniqueFd data = open_folder(spec_.data_dir);
    version_text =
        read_file_in(data.get(), "PG_VERSION", spec_.data_dir / "PG_VERSION", pg::kMaxServerFile);
  } catch (const RuntimeError& e) {
    spdlog::debug("{}", e.what());
  }
  const std::string major = version_text ? trim(*version_text) : "";
  if (major.empty() || major.find_first_not_of("0123456789") != std::string::npos) {
    throw InputError(fmt::format(
        "data_dir {} is not a PostgreSQL data directory (no PG_VERSION there, it cannot be read, "
        "or it holds no major version number such as 15)",
        spec_.data_dir.string()));
  }
  if (spec_.log_file.empty()) spec_.log_file = spec_.data_dir / "pgslow-server.log";

  // The programs of the data directory's own version, when installed the Debian way.
  PgBinSearch search;
  search.explicit_dir = spec_.pg_bin;
  fs::path versioned = fs::path("/usr/lib/postgresql") / major / "bin";
  pg_bin_ = !spec_.pg_bin && has_server_programs(versioned) ? versioned : find_pg_bin(search);

  // pg_ctl must run as the data directory's owner (PostgreSQL refuses any other user).
  struct stat st {};
  if (::stat(spec_.data_dir.c_str(), &st) != 0) {
    throw InputError(fmt::format("cannot read data_dir {}", spec_.data_dir.string()));
  }
  if (st.st_uid != ::geteuid()) {
    struct passwd pw {};
    struct passwd* found = nullptr;
    std::vector<char> buf(16384);
    ::getpwuid_r(st.st_uid, &pw, buf.data(), buf.size(), &found);
    std::string owner = found ? found->pw_name : std::to_string(st.st_uid);
    if (!running_as_root()) {
      throw InputError(fmt::format(
          "data_dir {} belongs to {}: run pgslow as {} (or as root) to restart it with pg_ctl",
          spec_.data_dir.string(), owner, owner));
    }
    if (!found) {
      throw InputError(fmt::format("data_dir {} belongs to uid {}, which has no user name",
                                   spec_.data_dir.string(), st.st_uid));
    }
    run_as_ = owner;
  }
}

std::string PgctlServer::describe() const {
  return fmt::format("local server in {} (pg_ctl)", spec_.data_dir.string());
}

std::string pgctl_socket_conninfo(const std::string& socket_dir, const std::string& port) {
  const bool port_ok = !port.empty() && port.size() <= 5 &&
                       port.find_first_not_of("0123456789") == std::string::npos &&
                       std::stoi(port) > 0 && std::stoi(port) <= 65535;
  // A host name there would send the login over TCP to wherever it names.
  const bool folder_ok = socket_dir.starts_with('/');
  return pg::local_socket_conninfo(folder_ok ? socket_dir : "/var/run/postgresql",
                                   port_ok ? port : "5432", "postgres");
}

std::string PgctlServer::conninfo() const {
  if (!spec_.conninfo.empty()) return spec_.conninfo;
  const std::optional<pg::PostmasterPidFile> f = pg::read_postmaster_pid(spec_.data_dir);
  return pgctl_socket_conninfo(f ? f->socket_dir : "", f ? f->port : "");
}

void PgctlServer::reload() {
  std::vector<std::string> argv = {(pg_bin_ / "pg_ctl").string(), "reload", "-D",
                                   spec_.data_dir.string()};
  ProcessOptions o;
  o.run_as = run_as_;
  o.timeout = std::chrono::seconds(60);
  auto r = run_process(argv, o);
  if (!r.ok()) {
    throw RuntimeError(fmt::format("cannot reload the server in {} ({}):\n{}",
                                   spec_.data_dir.string(), r.describe_status(),
                                   last_lines(r.output, 10)));
  }
}

void PgctlServer::restart(std::chrono::seconds timeout) {
  auto log_offset = log_size(spec_.log_file);
  // pg_ctl restart reuses the server's options (postmaster.opts) and also starts a server
  // that is down.
  std::vector<std::string> argv = {(pg_bin_ / "pg_ctl").string(),
                                   "restart",
                                   "-D",
                                   spec_.data_dir.string(),
                                   "-l",
                                   spec_.log_file.string(),
                                   "-m",
                                   "fast",
                                   "-w",
                                   "-t",
                                   std::to_string(timeout.count())};
  ProcessOptions o;
  o.run_as = run_as_;
  o.timeout = timeout + std::chrono::seconds(10);
  auto r = run_process(argv, o);
  if (!r.ok()) {
    std::string log = read_log_since(spec_.log_file, log_offset);
    throw RuntimeError(
        fmt::format("the server in {} did not come back after a restart ({}). "
                    "Last lines of {}:\n{}",
                    spec_.data_dir.string(), r.describe_status(), spec_.log_file.string(),
                    last_lines(log.empty() ? r.output : log, 20)));
  }
  wait_until_accepting(conninfo(), timeout);
}

void ServerControl::set_envelope(const Envelope& envelope) {
  throw RuntimeError(fmt::format(
      "pgslow cannot change the envelope of {} to {}: it makes one only for the managed cluster "
      "(docs/envelope.md)",
      describe(), envelope.describe()));
}

void ServerControl::set_parameters(const ParameterChange&, std::chrono::seconds) {
  throw RuntimeError(describe() + " sets parameters with ALTER SYSTEM, not with a command");
}

// ---- command ----

namespace {

// The program an apply or restore command line starts must be there before pgslow records a
// journal whose restore depends on it: its first word (after VAR=value assignments), found as
// a path or in PATH, and executable. Shell syntax beyond that is left to the shell.
void require_program(std::string_view what, const std::string& command) {
  std::istringstream words(command);
  std::string program;
  while (words >> program && program.find('=') != std::string::npos &&
         program.find('/') == std::string::npos) {
  }
  if (program.empty()) throw InputError(fmt::format("the {} command is empty", what));
  if (program.find_first_of("'\"$`(){};|&<>") != std::string::npos) return;
  std::vector<fs::path> candidates;
  if (program.find('/') != std::string::npos) {
    candidates.push_back(program);
  } else {
    const char* path = std::getenv("PATH");
    for (const std::string& dir : split(path ? path : "/usr/bin:/bin", ':'))
      candidates.push_back(fs::path(dir.empty() ? "." : dir) / program);
  }
  for (const fs::path& c : candidates) {
    if (::access(c.c_str(), X_OK) == 0 && !fs::is_directory(c)) return;
  }
  const bool exists = program.find('/') != std::string::npos && fs::exists(program);
  throw InputError(fmt::format(
      "the {} command cannot run: {} {}. Nothing was changed", what, program,
      exists ? "is not executable (chmod +x it)" : "is not found (give its full path)"));
}

}  // namespace

CommandServer::CommandServer(TargetSpec spec) : spec_(std::move(spec)) {
  if (spec_.conninfo.empty()) {
    throw InputError("the command target needs conninfo: how pgslow reaches the server");
  }
  if (!spec_.apply_command.empty()) require_program("apply", spec_.apply_command);
  if (!spec_.restore_command.empty()) require_program("restore", spec_.restore_command);
}

std::string CommandServer::describe() const {
  return fmt::format("server at {} (user commands)", pg::redact_conninfo(spec_.conninfo));
}

std::optional<fs::path> CommandServer::data_dir() const {
  if (spec_.data_dir.empty()) return std::nullopt;
  return spec_.data_dir;
}

void CommandServer::reload() {
  if (spec_.reload_command.empty()) {
    auto conn = pg::Connection::open(spec_.conninfo);
    conn.exec("SELECT pg_reload_conf()");
    return;
  }
  run_user_command("reload", spec_.reload_command, std::chrono::seconds(120));
}

std::string parameter_change_json(const ParameterChange& change) {
  nlohmann::ordered_json settings = nlohmann::ordered_json::object();
  for (const auto& [name, value] : change.settings)
    settings[name] = value ? nlohmann::ordered_json(*value) : nlohmann::ordered_json(nullptr);
  nlohmann::ordered_json doc = {{"settings", settings},
                                {"restart_needed", change.restart_needed},
                                {"restore", change.restore}};
  return doc.dump(2) + "\n";
}

void CommandServer::set_parameters(const ParameterChange& change, std::chrono::seconds timeout) {
  const bool own_restore = change.restore && !spec_.restore_command.empty();
  const std::string what = own_restore ? "restore" : "apply";
  const std::string& command = own_restore ? spec_.restore_command : spec_.apply_command;
  const std::int64_t deadline = now_us() + std::chrono::microseconds(timeout).count();
  const std::optional<std::string> loaded_before = config_load_time(spec_.conninfo);
  ProcessOptions o;
  o.timeout = timeout;
  o.input = parameter_change_json(change);
  spdlog::info("running the {} command: {}", what, command);
  ProcessResult r = run_process({"/bin/sh", "-c", command}, o);
  if (!r.ok()) {
    // The shell's own 126/127: the command is not there or not executable.
    std::string hint = r.exit_code == 127   ? " (command not found: check the path and PATH)"
                       : r.exit_code == 126 ? " (not executable: chmod +x it)"
                                            : "";
    throw RuntimeError(fmt::format("the {} command failed ({}{}): {}\nits output ends with:\n{}",
                                   what, r.describe_status(), hint, command,
                                   last_lines(r.output, 20)));
  }
  auto left = std::chrono::seconds(std::max<std::int64_t>(1, (deadline - now_us()) / 1000000));
  wait_until_accepting(spec_.conninfo, left);
  // A reload (pg_ctl reload, SIGHUP) returns before the postmaster has read the files: wait
  // until it has (or the server restarted), so that pgslow reads back what the command set.
  // A command that neither reloads nor restarts gets a few seconds, then its values are read
  // back as they are.
  const std::int64_t reload_deadline = std::min(deadline, now_us() + 5'000'000);
  while (loaded_before && config_load_time(spec_.conninfo) == loaded_before &&
         now_us() < reload_deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
}

void CommandServer::restart(std::chrono::seconds timeout) {
  if (spec_.restart_command.empty()) {
    throw RuntimeError(
        "this change needs a server restart, and the command target has no restart_command: "
        "give one (e.g. `systemctl restart postgresql`, `docker compose restart db`)");
  }
  const std::int64_t deadline = now_us() + std::chrono::microseconds(timeout).count();
  auto before = postmaster_start_time(spec_.conninfo);
  run_user_command("restart", spec_.restart_command, timeout);
  auto left = std::chrono::seconds(std::max<std::int64_t>(1, (deadline - now_us()) / 1000000));
  wait_until_accepting(spec_.conninfo, left, before);
}

}  // namespace pgslow::server
