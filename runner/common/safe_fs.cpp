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

// The checks both halves of the root boundary share (safe_fs_steps.h).

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
