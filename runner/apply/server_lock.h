#pragma once
// One server, one owner at a time, whichever workdir pgslow runs from. The workdir lock
// (workdir_lock.h) keeps two pgslow processes out of one journal; this keeps two workdirs off
// one server: without it, a second workdir's `apply` recorded the first one's degraded value
// as its "original", and its restore left it on the server for good.
//
// - A server with a data directory here: flock(2) on the data directory itself, held while a
//   change of this process is on the server (the kernel drops it on any exit, kill -9
//   included), and a claim file, <data_dir>/pgslow.owner, naming the workdir whose journal
//   holds the original configuration while a change is on the server (a kept `apply` too).
//   The claim is root's (or the invoking user's) file in the server user's folder, written and
//   removed through descriptors (common/safe_fs.h).
// - A server reached only by connection: a session-level advisory lock on a session of its
//   own, held as long (a restart ends the session: it is taken again at the next change).
// Within one process the lock is shared: every Applier of the process on that server holds
// the same one, and the last to let go releases it.
//
// The locks end with the process; a kept `apply` outlives it. So the server itself carries the
// claim, whatever way each pgslow reaches it (data directory or conninfo): the parameter
// pgslow.owner in its postgresql.auto.conf names the host and workdir whose journal holds the
// original configuration. It is written with each stage's settings and goes with them at
// restore (the original file's bytes, or ALTER SYSTEM RESET on a server reached by
// connection). Another workdir reads it over SQL before its first change and refuses.

#include <filesystem>
#include <memory>
#include <optional>
#include <string>

#include "pg/connection.h"
#include "server/server_control.h"

namespace pgslow::apply {

// The advisory lock key pgslow holds on a server reached only by connection.
inline constexpr long long kServerAdvisoryLockKey = 0x7067736c6f77LL;  // "pgslow"

// The lock of one server, held while this object (or another of this process on the same
// server) lives.
class ServerLock {
 public:
  struct Held;
  explicit ServerLock(std::shared_ptr<Held> held) : held_(std::move(held)) {}

 private:
  std::shared_ptr<Held> held_;
};

// Takes the lock of `server` for the workdir `workdir` (or shares this process's), or throws
// RuntimeError naming the other pgslow (its pid, or the workdir whose journal holds the
// server) and what to do. Call before the first change; again before each later one, so a
// connection lock lost to a restart is taken again.
ServerLock lock_server(server::ServerControl& server, const std::filesystem::path& workdir);

// Records that `workdir`'s journal holds the server's original configuration (after the
// journal is on disk, before the first change), and forgets it once the journal is gone.
void claim_server(const server::ServerControl& server, const std::filesystem::path& workdir);
void release_server_claim(const std::optional<std::filesystem::path>& data_dir,
                          const std::filesystem::path& workdir);

// The workdir a claim file names, when there is one.
std::optional<std::filesystem::path> server_claimed_by(const std::filesystem::path& data_dir);

// The server's own claim (a custom parameter, readable over SQL by every pgslow).
inline constexpr const char* kServerClaimParameter = "pgslow.owner";

// This workdir's claim: "<host>:<absolute workdir>".
std::string server_claim_text(const std::filesystem::path& workdir);
// The claim the server carries (its postgresql.auto.conf as pg_file_settings shows it, else
// the value in effect); nullopt when none.
std::optional<std::string> read_server_claim(pg::Connection& conn);
// Throws RuntimeError naming the other workdir and what to do when the server carries another
// workdir's claim that is live: on this host, one whose workdir still holds a journal; on
// another host, any (it cannot be checked from here). A stale claim is replaced.
void require_server_unclaimed(pg::Connection& conn, const std::filesystem::path& workdir);
// ALTER SYSTEM SET pgslow.owner to this workdir's claim; the caller reloads. A server that
// refuses it (a role without that right) is warned about: the locks still hold while this runs.
void write_server_claim(pg::Connection& conn, const std::filesystem::path& workdir);
// ALTER SYSTEM RESET pgslow.owner when the claim is this workdir's; the caller reloads.
void release_server_marker(pg::Connection& conn, const std::filesystem::path& workdir);

// The pid holding a flock on the file or folder `path`, from /proc/locks; nullopt when none
// (or not this process's to see).
std::optional<int> flock_holder(const std::filesystem::path& path);

}  // namespace pgslow::apply
