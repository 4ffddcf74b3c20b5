#include "server/target.h"

#include <fmt/format.h>
#include <pwd.h>
#include <spdlog/spdlog.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fstream>
#include <thread>

#include "common/clock.h"
#include "common/errors.h"
#include "common/process.h"
#include "common/strings.h"
#include "pg/connection.h"
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

std::string_view to_string(TargetKind kind) {
  switch (kind) {
    case TargetKind::kManaged:
      return "managed";
    case TargetKind::kPgctl:
      return "pgctl";
    case TargetKind::kCommand:
      return "command";
  }
  return "managed";
}

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
  std::ifstream version_file(spec_.data_dir / "PG_VERSION");
  std::string major;
  if (!(version_file >> major)) {
    throw InputError(fmt::format(
        "data_dir {} is not a PostgreSQL data directory (no PG_VERSION there, or it cannot be "
        "read)",
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

std::string PgctlServer::conninfo() const {
  if (!spec_.conninfo.empty()) return spec_.conninfo;
  // postmaster.pid, line 4: the port; line 5: the first socket directory.
  std::ifstream in(spec_.data_dir / "postmaster.pid");
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);) lines.push_back(trim(line));
  std::string port = lines.size() > 3 ? lines[3] : "5432";
  std::string host = lines.size() > 4 && !lines[4].empty() ? lines[4] : "/var/run/postgresql";
  return fmt::format("host={} port={} user=postgres dbname=postgres", host, port);
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

// ---- command ----

CommandServer::CommandServer(TargetSpec spec) : spec_(std::move(spec)) {
  if (spec_.conninfo.empty()) {
    throw InputError("the command target needs conninfo: how pgslow reaches the server");
  }
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

// ---- factory ----

std::unique_ptr<ServerControl> open_target(const TargetSpec& spec) {
  switch (spec.kind) {
    case TargetKind::kManaged: {
      ManagedOptions options;
      options.workdir = spec.workdir.empty() ? fs::path(".pgslow") : spec.workdir;
      options.pg_bin = spec.pg_bin;
      options.pg_version = spec.pg_version;
      auto cluster = std::make_unique<ManagedCluster>(std::move(options));
      if (!cluster->is_running()) cluster->start();
      return cluster;
    }
    case TargetKind::kPgctl:
      return std::make_unique<PgctlServer>(spec);
    case TargetKind::kCommand:
      return std::make_unique<CommandServer>(spec);
  }
  throw InputError("unknown server kind");
}

}  // namespace pgslow::server
