#include "common/safe_fs.h"

#include <dirent.h>
#include <fcntl.h>
#include <fmt/format.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <deque>
#include <memory>
#include <optional>
#include <vector>

#include "common/errors.h"
#include "common/reflink.h"
#include "common/safe_fs_steps.h"

namespace pgslow {

namespace fs = std::filesystem;

UniqueFd& UniqueFd::operator=(UniqueFd&& other) noexcept {
  if (this != &other) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = other.release();
  }
  return *this;
}

UniqueFd::~UniqueFd() {
  if (fd_ >= 0) ::close(fd_);
}

int UniqueFd::release() {
  int fd = fd_;
  fd_ = -1;
  return fd;
}

namespace {

bool trusted_owner(uid_t uid) {
  return uid == ::geteuid() || uid == 0;
}

std::string mode_text(mode_t mode) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "%04o", static_cast<unsigned>(mode & 07777));
  return buf;
}

// Writable by someone other than its owner (a group of root's alone does not count).
bool others_may_write(const struct stat& st) {
  return (st.st_mode & S_IWOTH) != 0 || ((st.st_mode & S_IWGRP) != 0 && st.st_gid != 0);
}

// Whether only root or the invoking user could have put `child` (lstat'ed) into the folder
// `parent`: a folder writable only by them, or a sticky one (/tmp) where the child is theirs.
bool placed_by_trusted(const struct stat& parent, const struct stat& child) {
  if (!trusted_owner(parent.st_uid)) return false;
  if (!others_may_write(parent)) return true;
  return (parent.st_mode & S_ISVTX) != 0 && trusted_owner(child.st_uid);
}

// The refusal, shared by the folder and the files in it.
// `fix` starts in lower case: it also ends a sentence ("... if its contents are yours, or ").
void check(const struct stat& st, const fs::path& path, const std::string& what, const char* fix) {
  if (!trusted_owner(st.st_uid)) {
    std::string sentence = fix;
    if (!sentence.empty()) sentence[0] = static_cast<char>(std::toupper(sentence[0]));
    throw RuntimeError("pgslow refuses " + what + " " + path.string() + ": it belongs to uid " +
                       std::to_string(st.st_uid) + ", not to you (uid " +
                       std::to_string(::geteuid()) +
                       ") or root, so its owner could make pgslow run their commands or write "
                       "their paths. Nothing was read from it. " +
                       sentence);
  }
  if (others_may_write(st)) {
    throw RuntimeError("pgslow refuses " + what + " " + path.string() +
                       ": others may write it (mode " + mode_text(st.st_mode) +
                       "), so anyone could plant files in it. Nothing was read from "
                       "it. Run `chmod go-w " +
                       path.string() + "` if its contents are yours, or " + fix);
  }
}

// How far a walk trusts what it meets.
enum class Walk {
  kOwnedAllTheWay,  // every step placed by root or the invoking user (their own folders)
  kNoForeignLinks,  // any folder, but no symlink that someone else could have placed
};

// Walks `path` from / one step at a time with O_PATH | O_NOFOLLOW, following a symlink only as
// `rule` allows, and returns the last folder reached. With `stop_at_missing`, a step that does
// not exist ends the walk early (an empty UniqueFd), the steps before it checked.
UniqueFd walk(const fs::path& path, Walk rule, const std::string& what, bool stop_at_missing) {
  fs::path abs = fs::absolute(path).lexically_normal();
  std::deque<std::string> steps;
  for (const auto& part : abs.relative_path()) {
    if (!part.empty()) steps.push_back(part.string());
  }
  UniqueFd here(::open("/", O_PATH | O_DIRECTORY | O_CLOEXEC));
  if (!here) fail("open", "/", errno);
  fs::path shown = "/";
  int links_followed = 0;
  while (!steps.empty()) {
    std::string step = steps.front();
    steps.pop_front();
    struct stat parent {};
    struct stat child {};
    if (::fstat(here.get(), &parent) != 0) fail("read", shown, errno);
    fs::path next_shown = (shown / step).lexically_normal();
    if (::fstatat(here.get(), step.c_str(), &child, AT_SYMLINK_NOFOLLOW) != 0) {
      if (errno == ENOENT && stop_at_missing) return UniqueFd();
      fail("reach", next_shown, errno);
    }
    bool placed_safely = step == ".." || placed_by_trusted(parent, child);
    if (S_ISLNK(child.st_mode)) {
      if (!placed_safely) {
        throw RuntimeError("pgslow refuses " + what + " " + path.string() + ": on the way, " +
                           next_shown.string() + " is a symbolic link of uid " +
                           std::to_string(child.st_uid) + " in a folder others may write (" +
                           shown.string() + ", uid " + std::to_string(parent.st_uid) + ", mode " +
                           mode_text(parent.st_mode) +
                           "), so they choose where it leads. Use the real path, or remove the "
                           "link.");
      }
      if (++links_followed > 40) fail("resolve", path, ELOOP);
      std::string target(PATH_MAX, '\0');
      ssize_t n = ::readlinkat(here.get(), step.c_str(), target.data(), target.size());
      if (n < 0) fail("read the link", next_shown, errno);
      target.resize(static_cast<std::size_t>(n));
      fs::path to(target);
      std::deque<std::string> more;
      for (const auto& part : to.relative_path()) {
        if (!part.empty() && part != ".") more.push_back(part.string());
      }
      steps.insert(steps.begin(), more.begin(), more.end());
      if (to.is_absolute()) {
        here = UniqueFd(::open("/", O_PATH | O_DIRECTORY | O_CLOEXEC));
        shown = "/";
      }
      continue;
    }
    if (rule == Walk::kOwnedAllTheWay && !placed_safely) {
      throw RuntimeError("pgslow refuses " + what + " " + path.string() + ": " +
                         next_shown.string() + " (uid " + std::to_string(child.st_uid) +
                         ") is in " + shown.string() + ", a folder of uid " +
                         std::to_string(parent.st_uid) + " with mode " + mode_text(parent.st_mode) +
                         " that others may write, so they could replace it. Use a folder of "
                         "your own (e.g. under /var/tmp or your home).");
    }
    UniqueFd next(
        ::openat(here.get(), step.c_str(), O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
    if (!next) {
      if (errno == ENOENT && stop_at_missing) return UniqueFd();
      fail("reach", next_shown, errno == ELOOP ? ENOTDIR : errno);
    }
    // The step may have been swapped between the look and the open: it must be what was seen.
    struct stat opened {};
    if (::fstat(next.get(), &opened) != 0 || opened.st_ino != child.st_ino ||
        opened.st_dev != child.st_dev) {
      throw RuntimeError("pgslow refuses " + what + " " + path.string() + ": " +
                         next_shown.string() + " changed while pgslow looked at it");
    }
    here = std::move(next);
    shown = next_shown;
  }
  return here;
}

}  // namespace

void require_trusted_path(const fs::path& path, const std::string& what, const std::string& fix) {
  UniqueFd last = walk(path, Walk::kOwnedAllTheWay, what, /*stop_at_missing=*/true);
  if (!last) return;
  struct stat st {};
  if (::fstat(last.get(), &st) != 0) fail("read", path, errno);
  check(st, path, what,
        fix.empty() ? "use a folder of your own (--workdir, e.g. /var/tmp/pgslow)." : fix.c_str());
}

void require_output_folder(const fs::path& folder, const std::string& what,
                           const std::string& fix) {
  UniqueFd last = walk(folder, Walk::kOwnedAllTheWay, what, /*stop_at_missing=*/true);
  if (!last) return;
  struct stat st {};
  if (::fstat(last.get(), &st) != 0) fail("read", folder, errno);
  if ((st.st_mode & S_ISVTX) != 0 && trusted_owner(st.st_uid)) return;
  check(st, folder, what, fix.c_str());
}

void require_trusted_workdir(const fs::path& workdir) {
  struct stat st {};
  if (::lstat(workdir.c_str(), &st) == 0 && !S_ISDIR(st.st_mode) && !S_ISLNK(st.st_mode))
    throw RuntimeError("the workdir " + workdir.string() + " is not a folder");
  require_trusted_path(workdir, "the workdir");
}

void require_trusted_fd(int fd, const fs::path& path) {
  struct stat st {};
  if (::fstat(fd, &st) != 0)
    throw RuntimeError("cannot read " + path.string() + ": " + std::strerror(errno));
  if (!S_ISREG(st.st_mode))
    throw RuntimeError("pgslow refuses " + path.string() +
                       ": it is not a regular file. Remove it if it is not yours.");
  check(st, path, "the file", "remove it, or use a workdir of your own (--workdir).");
}

int open_trusted_file(const fs::path& path, int flags, mode_t mode) {
  int fd = ::open(path.c_str(), flags | O_NOFOLLOW | O_CLOEXEC, mode);
  if (fd < 0) {
    int err = errno;
    if (err == ENOENT && (flags & O_CREAT) == 0) return -1;
    if (err == ELOOP)
      throw RuntimeError("pgslow refuses " + path.string() +
                         ": it is a symbolic link, which would make pgslow read or write "
                         "whatever it points to. Remove the link.");
    throw RuntimeError("cannot open " + path.string() + ": " + std::strerror(err));
  }
  try {
    require_trusted_fd(fd, path);
  } catch (...) {
    ::close(fd);
    throw;
  }
  return fd;
}

namespace {
constexpr const char* kDataFix =
    "copy it into a folder that only you (or root) can write, e.g. under your home, read it, "
    "and give that path.";
}  // namespace

std::string read_trusted_file(const fs::path& path, const std::string& what, const std::string& fix,
                              std::size_t max_bytes) {
  const char* to_do = fix.empty() ? kDataFix : fix.c_str();
  fs::path p = fs::absolute(path).lexically_normal();
  for (int links = 0;; ++links) {
    if (links > 40) fail("resolve", path, ELOOP);
    const std::string name = p.filename().string();
    if (name.empty()) fail("read", p, EISDIR);
    UniqueFd folder = walk(p.parent_path(), Walk::kOwnedAllTheWay, what, false);
    struct stat parent {};
    struct stat st {};
    if (::fstat(folder.get(), &parent) != 0) fail("read", p.parent_path(), errno);
    if (::fstatat(folder.get(), name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0)
      fail("read", p, errno);
    if (!placed_by_trusted(parent, st)) {
      throw RuntimeError("pgslow refuses " + what + " " + p.string() + ": it belongs to uid " +
                         std::to_string(st.st_uid) + " and is in " + p.parent_path().string() +
                         " (a folder of uid " + std::to_string(parent.st_uid) + ", mode " +
                         mode_text(parent.st_mode) +
                         "), which others may write, so anyone could have put it there. Nothing "
                         "was read from it. " +
                         std::string(1, static_cast<char>(std::toupper(to_do[0]))) + (to_do + 1));
    }
    if (S_ISLNK(st.st_mode)) {
      std::string target(PATH_MAX, '\0');
      ssize_t n = ::readlinkat(folder.get(), name.c_str(), target.data(), target.size());
      if (n < 0) fail("read the link", p, errno);
      target.resize(static_cast<std::size_t>(n));
      p = (p.parent_path() / target).lexically_normal();
      continue;
    }
    UniqueFd fd(::openat(folder.get(), name.c_str(),
                         O_RDONLY | O_NOFOLLOW | O_NOCTTY | O_CLOEXEC | O_NONBLOCK));
    if (!fd) fail("open", p, errno);
    struct stat opened {};
    if (::fstat(fd.get(), &opened) != 0) fail("read", p, errno);
    if (opened.st_ino != st.st_ino || opened.st_dev != st.st_dev)
      throw RuntimeError("pgslow refuses " + what + " " + p.string() +
                         ": it changed while pgslow looked at it");
    if (!S_ISREG(opened.st_mode))
      throw RuntimeError("pgslow refuses " + what + " " + p.string() +
                         ": it is not a regular file");
    check(opened, p, what, to_do);
    return read_all(fd.get(), p, max_bytes);
  }
}

bool is_trusted_folder(const fs::path& folder, std::string& why) {
  try {
    UniqueFd last = walk(folder, Walk::kOwnedAllTheWay, "the folder", false);
    struct stat st {};
    if (::fstat(last.get(), &st) != 0) fail("read", folder, errno);
    check(st, folder, "the folder", "use a folder of your own.");
    return true;
  } catch (const std::exception& e) {
    why = e.what();
    return false;
  }
}

void create_trusted_folders(const fs::path& path, const std::string& what) {
  struct stat st {};
  if (::lstat(path.c_str(), &st) == 0) return;  // require_trusted_path judges it
  fs::path parent = path.parent_path();
  if (!parent.empty() && parent != path) create_trusted_folders(parent, what);
  if (::mkdir(path.c_str(), 0755) != 0) {
    if (errno == EEXIST) return;
    throw RuntimeError("cannot create " + what + " " + path.string() + ": " + std::strerror(errno));
  }
  // mkdir applies the umask, which may leave group write (umask 002); the folder pgslow just
  // made must not be writable by others. No symlink can stand here: mkdir made it.
  ::chmod(path.c_str(), 0755);
}

void create_output_folders(const fs::path& path, const std::string& what) {
  require_output_folder(path, what,
                        "write it into a folder that only you (or root) can write (--out DIR, "
                        "or run pgslow from a folder of your own).");
  create_trusted_folders(path, what);
}

void create_workdir(const fs::path& workdir) {
  // Judged before anything is made: a link or folder of someone else's on the way would
  // otherwise have root create folders wherever it leads.
  require_trusted_workdir(workdir);
  create_trusted_folders(workdir, "the workdir");
}

UniqueFd open_folder(const fs::path& path) {
  UniqueFd last = walk(path, Walk::kNoForeignLinks, "the folder", /*stop_at_missing=*/false);
  UniqueFd folder(::openat(last.get(), ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (!folder) fail("open the folder", path, errno);
  return folder;
}

FileOwnership folder_ownership(int dir) {
  struct stat st {};
  if (::fstat(dir, &st) != 0) fail("read", "a folder", errno);
  return FileOwnership{st.st_uid, st.st_gid, static_cast<mode_t>(st.st_mode & 07777)};
}

[[noreturn]] void fail(const std::string& what, const fs::path& path, int err) {
  throw RuntimeError("cannot " + what + " " + path.string() + ": " + std::strerror(err));
}

void require_plain_name(const std::string& name, const fs::path& shown_as) {
  if (name.empty() || name == "." || name == ".." || name.find('/') != std::string::npos)
    throw RuntimeError("pgslow refuses " + shown_as.string() + ": not a plain file name");
}

UniqueFd open_file_in(int dir, const std::string& name, int flags, const fs::path& shown_as,
                      mode_t mode) {
  require_plain_name(name, shown_as);
  // O_NONBLOCK: a FIFO planted under the name would block the open until someone writes to it;
  // this way it opens at once and is refused below as not a regular file (on a regular file
  // the flag changes nothing).
  UniqueFd fd(
      ::openat(dir, name.c_str(), flags | O_NOFOLLOW | O_NOCTTY | O_CLOEXEC | O_NONBLOCK, mode));
  if (!fd) {
    int err = errno;
    if (err == ENOENT && (flags & O_CREAT) == 0) return fd;
    if (err == ELOOP)
      throw RuntimeError("pgslow refuses " + shown_as.string() +
                         ": it is a symbolic link, which would make pgslow read or write "
                         "whatever it points to. Remove the link.");
    fail("open", shown_as, err);
  }
  struct stat st {};
  if (::fstat(fd.get(), &st) != 0) fail("read", shown_as, errno);
  uid_t folder_owner = folder_ownership(dir).uid;
  if (!S_ISREG(st.st_mode))
    throw RuntimeError("pgslow refuses " + shown_as.string() + ": it is not a regular file");
  // A second name for the file: someone linked another file (perhaps root's) in here.
  if (st.st_nlink != 1)
    throw RuntimeError("pgslow refuses " + shown_as.string() + ": it has " +
                       std::to_string(st.st_nlink) +
                       " names (a hard link to a file elsewhere?). Remove it if it is not "
                       "yours.");
  if (!trusted_owner(st.st_uid) && st.st_uid != folder_owner)
    throw RuntimeError("pgslow refuses " + shown_as.string() + ": it belongs to uid " +
                       std::to_string(st.st_uid) + ", neither root, you, nor the folder's owner");
  return fd;
}

std::optional<std::string> read_file_in(int dir, const std::string& name, const fs::path& shown_as,
                                        std::size_t max_bytes) {
  UniqueFd fd = open_file_in(dir, name, O_RDONLY, shown_as);
  if (!fd) return std::nullopt;
  return read_all(fd.get(), shown_as, max_bytes);
}

std::string read_all(int fd, const fs::path& shown_as, std::size_t max_bytes) {
  std::string out;
  char buf[65536];
  for (;;) {
    if (out.size() > max_bytes) {
      throw RuntimeError("pgslow refuses " + shown_as.string() + ": it is longer than " +
                         std::to_string(max_bytes) +
                         " bytes, far more than such a file holds, so it was not read. Remove "
                         "it if it is not what it should be.");
    }
    // One byte past the limit at most: enough to tell a longer file.
    const std::size_t room = max_bytes - out.size();
    ssize_t n = ::read(fd, buf, room >= sizeof buf ? sizeof buf : room + 1);
    if (n < 0) {
      if (errno == EINTR) continue;
      fail("read", shown_as, errno);
    }
    if (n == 0) break;
    out.append(buf, static_cast<std::size_t>(n));
  }
  return out;
}

void fsync_folder(int dir, const fs::path& shown_as) {
  if (::fsync(dir) != 0) fail("fsync the folder of", shown_as, errno);
}

void replace_file_in(int dir, const std::string& name, const std::string& contents,
                     const FileOwnership& owner, const fs::path& shown_as,
                     const std::string& temp_prefix) {
  require_plain_name(name, shown_as);
  // A random name, created with O_EXCL: names planted ahead (for every pid) are never opened.
  std::string tmp;
  UniqueFd fd;
  for (int attempt = 0; attempt < 16 && !fd; ++attempt) {
    unsigned long long r = 0;
    if (::getrandom(&r, sizeof r, 0) != static_cast<ssize_t>(sizeof r)) r ^= ::random();
    char suffix[32];
    std::snprintf(suffix, sizeof suffix, "%d.%016llx", static_cast<int>(::getpid()), r);
    tmp = temp_prefix + suffix;
    fd = UniqueFd(
        ::openat(dir, tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600));
    if (!fd && errno != EEXIST) fail("create a new copy of", shown_as, errno);
  }
  if (!fd) fail("create a new copy of", shown_as, EEXIST);
  auto give_up = [&](const std::string& what) {
    int err = errno;
    fd = UniqueFd();
    ::unlinkat(dir, tmp.c_str(), 0);
    fail(what, shown_as, err);
  };
  // Owner first, so the server's user can read the file from the moment it has its name.
  if (::fchown(fd.get(), owner.uid, owner.gid) != 0 && owner.uid != ::geteuid())
    give_up("give uid " + std::to_string(owner.uid) +
            " (run pgslow as root or as the folder's owner) the file");
  if (::fchmod(fd.get(), owner.mode) != 0) give_up("set the mode of");
  const char* p = contents.data();
  std::size_t left = contents.size();
  while (left > 0) {
    ssize_t n = ::write(fd.get(), p, left);
    if (n < 0) {
      if (errno == EINTR) continue;
      give_up("write");
    }
    p += n;
    left -= static_cast<std::size_t>(n);
  }
  if (::fsync(fd.get()) != 0) give_up("fsync");
  fd = UniqueFd();
  if (::renameat(dir, tmp.c_str(), dir, name.c_str()) != 0) give_up("rename a new copy onto");
  fsync_folder(dir, shown_as);
}

bool remove_file_in(int dir, const std::string& name, const fs::path& shown_as) {
  require_plain_name(name, shown_as);
  if (::unlinkat(dir, name.c_str(), 0) == 0) return true;
  if (errno == ENOENT) return false;
  fail("remove", shown_as, errno);
}

UniqueFd make_folder_in(int dir, const std::string& name, const fs::path& shown_as) {
  require_plain_name(name, shown_as);
  if (::mkdirat(dir, name.c_str(), 0700) != 0 && errno != EEXIST)
    fail("create the folder", shown_as, errno);
  UniqueFd folder(::openat(dir, name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
  if (!folder) {
    if (errno == ELOOP || errno == ENOTDIR)
      throw RuntimeError("pgslow refuses " + shown_as.string() +
                         ": it is not a folder but a symbolic link or a file. Remove it.");
    fail("open the folder", shown_as, errno);
  }
  return folder;
}

std::vector<std::string> names_in(int dir, const fs::path& shown_as) {
  int copy = ::dup(dir);
  if (copy < 0) fail("read the folder", shown_as, errno);
  DIR* d = ::fdopendir(copy);
  if (d == nullptr) {
    int err = errno;
    ::close(copy);
    fail("read the folder", shown_as, err);
  }
  ::rewinddir(d);  // the copy shares the offset a former listing of `dir` left at its end
  std::vector<std::string> names;
  while (dirent* e = ::readdir(d)) {
    std::string n = e->d_name;
    if (n != "." && n != "..") names.push_back(n);
  }
  ::closedir(d);
  return names;
}

UniqueFd open_folder_in(int dir, const std::string& name, const fs::path& shown_as) {
  require_plain_name(name, shown_as);
  UniqueFd folder(::openat(dir, name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
  if (folder || errno == ENOENT) return folder;
  if (errno == ELOOP || errno == ENOTDIR)
    throw RuntimeError("pgslow refuses " + shown_as.string() +
                       ": it is a symbolic link or a file, not a folder");
  fail("open the folder", shown_as, errno);
}

UniqueFd make_private_folder_in(int dir, const std::string& prefix, std::string& name,
                                const fs::path& shown_as) {
  for (int attempt = 0; attempt < 16; ++attempt) {
    unsigned long long r = 0;
    if (::getrandom(&r, sizeof r, 0) != static_cast<ssize_t>(sizeof r)) r ^= ::random();
    char suffix[32];
    std::snprintf(suffix, sizeof suffix, "%d.%016llx", static_cast<int>(::getpid()), r);
    std::string candidate = prefix + suffix;
    require_plain_name(candidate, shown_as);
    if (::mkdirat(dir, candidate.c_str(), 0700) != 0) {
      if (errno == EEXIST) continue;
      fail("create a folder in", shown_as, errno);
    }
    name = candidate;
    UniqueFd folder = open_folder_in(dir, name, shown_as / name);
    if (!folder) fail("open the folder", shown_as / name, ENOENT);
    return folder;
  }
  fail("create a folder in", shown_as, EEXIST);
}

bool move_folder_in(int from_dir, const std::string& from, int to_dir, const std::string& to,
                    const fs::path& shown_as) {
  require_plain_name(from, shown_as);
  require_plain_name(to, shown_as);
  if (::renameat2(from_dir, from.c_str(), to_dir, to.c_str(), RENAME_NOREPLACE) == 0) return false;
  if (errno != EEXIST) fail("move a new folder to", shown_as, errno);
  if (::renameat2(from_dir, from.c_str(), to_dir, to.c_str(), RENAME_EXCHANGE) != 0)
    fail("swap a new folder with", shown_as, errno);
  return true;
}

}  // namespace pgslow
