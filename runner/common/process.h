#pragma once
// Runs a program (an argv vector: no shell, so no quoting bugs) and captures what it prints.
// pgslow runs initdb, pg_ctl and the user's reload/restart commands through this; when pgslow
// runs as root, PostgreSQL's programs must run as the `postgres` system user (they refuse
// root), hence `run_as`.
//
// The environment: a child that runs as another user (`run_as` while pgslow is root: initdb,
// pg_ctl, the server, PgBouncer) gets only minimal_environment(), never root's variables
// (PGPASSWORD, AWS_SECRET_ACCESS_KEY, PATH): that user's SQL superuser runs programs with it
// (COPY ... TO PROGRAM). A child that runs as the invoking user on its own behalf (a command
// target's reload, restart, apply and restore commands, npm, tar) inherits pgslow's
// environment with `env` applied: it is that user's own and may need it (PGPASSWORD, a proxy).

#include <chrono>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace pgslow {

struct ProcessOptions {
  // Killed (the whole process group) after this long; zero means no limit.
  std::chrono::milliseconds timeout{0};
  // Run as this system user (uid, gid and supplementary groups), when pgslow is root and the
  // user differs; ignored otherwise (an ordinary user can only run things as itself).
  std::optional<std::string> run_as;
  // Working directory of the child; "/" by default when running as another user, who may not
  // be able to enter ours.
  std::optional<std::filesystem::path> cwd;
  // Extra or replaced environment variables, "NAME=value" (on top of either environment).
  std::vector<std::string> env;
  // Keep at most this many bytes of output (the tail: errors come last).
  std::size_t max_output = 1 << 20;
  // What the child reads on standard input (/dev/null when not given).
  std::optional<std::string> input;
  // Open cgroup.procs (or v1 tasks) files the child joins, by writing "0" to each before it
  // drops root: whatever it starts (pg_ctl's postmaster) is then in the group from its first
  // instruction (server/envelope.h). The caller owns the descriptors.
  std::vector<int> join_cgroups;
};

struct ProcessResult {
  int exit_code = -1;      // the exit status, or -1 when killed by a signal
  int signal = 0;          // the signal that killed it, or 0
  bool timed_out = false;  // killed because ProcessOptions::timeout passed
  std::string output;      // stdout and stderr, interleaved as written
  bool ok() const { return exit_code == 0 && !timed_out; }
  // "exit status 1", "killed by signal 9", "timed out after ..."
  std::string describe_status() const;
};

// Runs argv[0] (looked up in PATH when it has no slash). Throws RuntimeError only when the
// program cannot be started at all (not found, not executable, unknown user); a program that
// runs and fails is a ProcessResult with a non-zero exit code.
ProcessResult run_process(const std::vector<std::string>& argv, const ProcessOptions& options = {});

// The PATH a child of another user gets: system folders only.
inline constexpr const char* kSystemPath =
    "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";

// The environment of a child that runs as another user: from `ours` only the locale (LANG,
// LANGUAGE, LC_*) and TZ, then PATH=kSystemPath, then `overrides` ("NAME=value", replacing).
// Nothing else: the server gets its data directory and port as arguments, not as PGDATA/PGPORT.
std::vector<std::string> minimal_environment(const std::vector<std::string>& ours,
                                             const std::vector<std::string>& overrides);

// The argv as one line a user could paste into a shell (for logs and error messages).
std::string shell_quote(const std::vector<std::string>& argv);

// The last `lines` lines of `text`, without a trailing newline.
std::string last_lines(const std::string& text, std::size_t lines);

// Whether the current process runs as root (effective uid 0).
bool running_as_root();

// The uid and primary gid of a system user; nullopt when there is no such user.
struct SystemUser {
  unsigned uid = 0;
  unsigned gid = 0;
  std::string name;
  std::string home;
};
std::optional<SystemUser> find_system_user(const std::string& name);

// The name the driver gives its client threads (/proc/self/task/*/comm), so the evidence can
// tell the clients' CPU time from the rest of pgslow's (the dashboard, the evidence sampler).
inline constexpr const char* kClientThreadName = "pgslow-client";

}  // namespace pgslow
