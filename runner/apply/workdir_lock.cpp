#include "apply/workdir_lock.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <memory>
#include <mutex>
#include <sstream>
#include <vector>

#include "common/errors.h"
#include "common/log.h"
#include "common/safe_fs.h"

namespace pgslow::apply {

namespace fs = std::filesystem;

fs::path lock_path(const fs::path& workdir) {
  return workdir / "pgslow.lock";
}

std::string format_lock_file(const LockHolder& holder) {
  std::ostringstream out;
  out << holder.who.pid << ' ' << holder.who.start_time << ' '
      << (holder.who.boot_id.empty() ? "-" : holder.who.boot_id) << '\n'
      << holder.command << '\n';
  return out.str();
}

std::optional<LockHolder> parse_lock_file(const std::string& text) {
  std::istringstream in(text);
  LockHolder holder;
  std::string boot;
  if (!(in >> holder.who.pid >> holder.who.start_time >> boot)) return std::nullopt;
  if (holder.who.pid <= 0) return std::nullopt;
  holder.who.boot_id = boot == "-" ? "" : boot;
  in.ignore(1);
  std::getline(in, holder.command);
  return holder;
}

namespace {

// The lock file's first lines: a pid line and a command line, never more than this is read.
constexpr std::size_t kLockFileBytes = 64 * 1024;

std::string read_fd(int fd) {
  std::string out;
  char buf[512];
  if (::lseek(fd, 0, SEEK_SET) < 0) return out;
  while (out.size() < kLockFileBytes) {
    ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    out.append(buf, static_cast<std::size_t>(n));
  }
  return out;
}

std::string describe(const std::optional<LockHolder>& holder) {
  // The file names the last holder; the lock may be held by a process that took it without
  // having written its own line yet. A pid that is gone is never named.
  if (!holder || !is_alive(holder->who)) return "another pgslow process";
  std::string s = "another pgslow process (pid " + std::to_string(holder->who.pid);
  if (!holder->command.empty()) s += ", `" + holder->command + "`";
  return s + ")";
}

}  // namespace

std::optional<WorkdirLock> WorkdirLock::try_acquire(const fs::path& workdir,
                                                    const std::string& command,
                                                    std::optional<LockHolder>* holder) {
  UniqueFd folder = create_workdir(workdir);  // judged before anything is made
  fs::path path = lock_path(workdir);
  // Through the workdir's descriptor, never by path. O_CLOEXEC (in open_file_in): a postmaster
  // started by pg_ctl must not inherit the lock and keep it forever. O_NOFOLLOW: a symlink
  // planted as the lock is never written through. 0600: the holder's command line is nobody
  // else's business.
  UniqueFd opened =
      open_file_in(folder.get(), path.filename().string(), O_RDWR | O_CREAT, path, 0600);
  require_trusted_fd(opened.get(), path);
  int fd = opened.release();
  if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
    int err = errno;
    std::string text = read_fd(fd);
    ::close(fd);
    if (err != EWOULDBLOCK)
      throw RuntimeError("cannot lock " + path.string() + ": " + std::strerror(err));
    if (holder) *holder = parse_lock_file(text);
    return std::nullopt;
  }
  // Ours now. A lock file of an older pgslow may be 0644: the command line is private.
  ::fchmod(fd, 0600);
  // A pid still in the file belongs to a process that died holding it.
  std::optional<LockHolder> previous = parse_lock_file(read_fd(fd));
  LockHolder me{current_process(), command};
  std::string contents = format_lock_file(me);
  if (::ftruncate(fd, 0) != 0 || ::pwrite(fd, contents.data(), contents.size(), 0) < 0) {
    int err = errno;
    ::close(fd);
    throw RuntimeError("cannot write the lock file " + path.string() + ": " + std::strerror(err));
  }
  WorkdirLock lock(fd, path);
  if (previous && previous->who.pid != me.who.pid) lock.taken_over_from_ = previous->who.pid;
  return lock;
}

WorkdirLock WorkdirLock::acquire(const fs::path& workdir, const std::string& command) {
  std::optional<LockHolder> holder;
  std::optional<WorkdirLock> lock = try_acquire(workdir, command, &holder);
  if (!lock) {
    throw RuntimeError(
        describe(holder) + " is using the workdir " + workdir.string() +
        "; wait for it to finish, or stop it (Ctrl-C or kill " +
        (holder && is_alive(holder->who) ? std::to_string(holder->who.pid) : std::string("<pid>")) +
        ": it restores the server before it exits), or use another --workdir");
  }
  if (lock->taken_over_from())
    spdlog::debug("took over the workdir lock of pid {}, which is gone", *lock->taken_over_from());
  return std::move(*lock);
}

WorkdirLock::WorkdirLock(WorkdirLock&& other) noexcept
    : fd_(other.fd_), path_(std::move(other.path_)), taken_over_from_(other.taken_over_from_) {
  other.fd_ = -1;
}

WorkdirLock& WorkdirLock::operator=(WorkdirLock&& other) noexcept {
  if (this != &other) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = other.fd_;
    path_ = std::move(other.path_);
    taken_over_from_ = other.taken_over_from_;
    other.fd_ = -1;
  }
  return *this;
}

WorkdirLock::~WorkdirLock() {
  // The file stays (removing it would race with a process that just opened it); closing the
  // descriptor releases the lock, and the next holder overwrites the pid.
  if (fd_ >= 0) ::close(fd_);
}

std::optional<LockHolder> lock_holder(const fs::path& workdir) {
  require_trusted_workdir(workdir);
  fs::path path = lock_path(workdir);
  int fd = open_trusted_file(path, O_RDONLY);
  if (fd < 0) return std::nullopt;
  std::optional<LockHolder> holder;
  // A shared lock succeeds only when nobody holds the exclusive one.
  if (::flock(fd, LOCK_SH | LOCK_NB) == 0) {
    ::flock(fd, LOCK_UN);
  } else {
    holder = parse_lock_file(read_fd(fd));
    // Held, but the file names a process that is gone (the holder has not written its own
    // line yet): the holder is unknown, and the dead pid is not named.
    if (!holder || !is_alive(holder->who)) holder = LockHolder{};
  }
  ::close(fd);
  return holder;
}

namespace {
struct ProcessLocks {
  std::mutex mutex;
  std::vector<std::pair<fs::path, std::unique_ptr<WorkdirLock>>> held;
};
ProcessLocks& process_locks() {
  static ProcessLocks* locks = new ProcessLocks;  // never destroyed: held until exit
  return *locks;
}
fs::path normalized(const fs::path& workdir) {
  std::error_code ec;
  fs::path p = fs::weakly_canonical(workdir, ec);
  return ec ? fs::absolute(workdir) : p;
}
}  // namespace

void hold_workdir_lock_for_process(const fs::path& workdir, const std::string& command) {
  ProcessLocks& locks = process_locks();
  std::lock_guard<std::mutex> guard(locks.mutex);
  fs::path key = normalized(workdir);
  for (const auto& entry : locks.held) {
    if (entry.first == key) return;
  }
  locks.held.emplace_back(key,
                          std::make_unique<WorkdirLock>(WorkdirLock::acquire(workdir, command)));
}

bool try_hold_workdir_lock_for_process(const fs::path& workdir, const std::string& command,
                                       std::optional<LockHolder>* holder) {
  ProcessLocks& locks = process_locks();
  std::lock_guard<std::mutex> guard(locks.mutex);
  fs::path key = normalized(workdir);
  for (const auto& entry : locks.held) {
    if (entry.first == key) return true;
  }
  std::optional<WorkdirLock> lock = WorkdirLock::try_acquire(workdir, command, holder);
  if (!lock) return false;
  locks.held.emplace_back(key, std::make_unique<WorkdirLock>(std::move(*lock)));
  return true;
}

bool process_holds_workdir_lock(const fs::path& workdir) {
  ProcessLocks& locks = process_locks();
  std::lock_guard<std::mutex> guard(locks.mutex);
  fs::path key = normalized(workdir);
  for (const auto& entry : locks.held) {
    if (entry.first == key) return true;
  }
  return false;
}

}  // namespace pgslow::apply
