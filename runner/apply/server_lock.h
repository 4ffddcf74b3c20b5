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

#include <filesystem>
#include <memory>
#include <optional>
#include <string>

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

// The pid holding a flock on the file or folder `path`, from /proc/locks; nullopt when none
// (or not this process's to see).
std::optional<int> flock_holder(const std::filesystem::path& path);

}  // namespace pgslow::apply
