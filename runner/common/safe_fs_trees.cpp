#include <dirent.h>
#include <fcntl.h>
#include <fmt/format.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <algorithm>
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
#include "common/safe_fs.h"
#include "common/safe_fs_steps.h"

// Whole trees, one no-follow step at a time: removing one (remove_tree_in, remove_tree) and
// copying one (copy_tree_in). The single-file steps are in safe_fs.cpp.

namespace pgslow {

namespace fs = std::filesystem;

namespace {

// How many folders remove_tree_in holds open at once. A folder deeper than that is moved up to
// the top of the tree being removed (hoisted) and removed from there later, so neither the
// descriptors nor the memory grow with the depth of whatever the server's user made.
constexpr std::size_t kMaxOpenFolders = 32;
// Passes over one folder that find nothing while rmdir still says it is not empty: something
// keeps writing into it.
constexpr int kMaxIdlePasses = 3;

struct CloseDir {
  void operator()(DIR* d) const { ::closedir(d); }
};

// One folder on the way down: its listing and its name in the folder above.
struct OpenLevel {
  std::unique_ptr<DIR, CloseDir> listing;
  std::string name;
  bool progressed = false;  // this pass removed or entered something
  int idle_passes = 0;
  int fd() const { return ::dirfd(listing.get()); }
};

// `name` in `dir` opened as a folder without following a link; nullopt (errno set) when it is
// not one (any more) or is gone.
std::optional<OpenLevel> open_level(int dir, const std::string& name) {
  int fd = ::openat(dir, name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) return std::nullopt;
  DIR* listing = ::fdopendir(fd);
  if (listing == nullptr) {
    int err = errno;
    ::close(fd);
    errno = err;
    return std::nullopt;
  }
  return OpenLevel{std::unique_ptr<DIR, CloseDir>(listing), name};
}

// The path of the deepest open folder, for messages (hoisted folders show under the top).
fs::path shown_path(const fs::path& top, const std::vector<OpenLevel>& levels) {
  fs::path p = top;
  for (std::size_t i = 1; i < levels.size(); ++i) p /= levels[i].name;
  return p;
}

// Moves the folder `name` in `from` to a fresh name in `top`.
void hoist(int from, const std::string& name, int top, const fs::path& shown_as) {
  for (int attempt = 0; attempt < 16; ++attempt) {
    unsigned long long r = 0;
    if (::getrandom(&r, sizeof r, 0) != static_cast<ssize_t>(sizeof r)) r ^= ::random();
    char fresh[64];
    std::snprintf(fresh, sizeof fresh, ".pgslow-removing-%d.%016llx", static_cast<int>(::getpid()),
                  r);
    if (::renameat2(from, name.c_str(), top, fresh, RENAME_NOREPLACE) == 0) return;
    if (errno != EEXIST) fail("move up (to remove it) the deep folder", shown_as, errno);
  }
  fail("move up (to remove it) the deep folder", shown_as, EEXIST);
}

}  // namespace

bool remove_tree_in(int dir, const std::string& name, const fs::path& shown_as) {
  require_plain_name(name, shown_as);
  struct stat st {};
  if (::fstatat(dir, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) {
    if (errno == ENOENT) return false;
    fail("read", shown_as, errno);
  }
  if (!S_ISDIR(st.st_mode)) return remove_file_in(dir, name, shown_as);
  std::vector<OpenLevel> levels;
  levels.reserve(kMaxOpenFolders);
  std::optional<OpenLevel> top = open_level(dir, name);
  if (!top) {
    if (errno == ENOENT) return false;
    if (errno == ENOTDIR || errno == ELOOP) return remove_file_in(dir, name, shown_as);
    fail("open the folder", shown_as, errno);
  }
  levels.push_back(std::move(*top));
  // Depth first, one entry at a time, every step an *at() call on an open folder that follows
  // no link: a link is removed as a name, never entered.
  while (!levels.empty()) {
    OpenLevel& here = levels.back();
    errno = 0;
    const dirent* entry = ::readdir(here.listing.get());
    if (entry == nullptr) {
      if (errno != 0) fail("read the folder", shown_path(shown_as, levels), errno);
      const int above = levels.size() == 1 ? dir : levels[levels.size() - 2].fd();
      if (::unlinkat(above, here.name.c_str(), AT_REMOVEDIR) == 0 || errno == ENOENT) {
        levels.pop_back();
        continue;
      }
      if (errno != ENOTEMPTY && errno != EEXIST)
        fail("remove the folder", shown_path(shown_as, levels), errno);
      // Names came in during the pass (a folder hoisted into the top, or a writer): again.
      here.idle_passes = here.progressed ? 0 : here.idle_passes + 1;
      if (here.idle_passes > kMaxIdlePasses) {
        throw RuntimeError("cannot remove the folder " + shown_path(shown_as, levels).string() +
                           ": something keeps writing into it. Stop the program that writes "
                           "there (the server's processes) and run the command again.");
      }
      here.progressed = false;
      ::rewinddir(here.listing.get());
      continue;
    }
    const std::string n = entry->d_name;
    if (n == "." || n == "..") continue;
    here.progressed = true;
    const int at = here.fd();
    if (entry->d_type != DT_DIR && entry->d_type != DT_UNKNOWN) {
      if (::unlinkat(at, n.c_str(), 0) == 0 || errno == ENOENT) continue;
      // EISDIR: made a folder since it was listed; entered below.
      if (errno != EISDIR) fail("remove", shown_path(shown_as, levels) / n, errno);
    }
    if (levels.size() >= kMaxOpenFolders) {
      struct stat child {};
      if (::fstatat(at, n.c_str(), &child, AT_SYMLINK_NOFOLLOW) == 0 && S_ISDIR(child.st_mode)) {
        hoist(at, n, levels.front().fd(), shown_path(shown_as, levels) / n);
        continue;
      }
    } else if (std::optional<OpenLevel> sub = open_level(at, n)) {
      levels.push_back(std::move(*sub));
      continue;
    } else if (errno != ENOTDIR && errno != ELOOP && errno != ENOENT) {
      fail("open the folder", shown_path(shown_as, levels) / n, errno);
    }
    // Not a folder (a link, a file, or DT_UNKNOWN's file): removed as a name.
    if (::unlinkat(at, n.c_str(), 0) != 0 && errno != ENOENT)
      fail("remove", shown_path(shown_as, levels) / n, errno);
  }
  return true;
}

namespace {

// Copies `length` bytes at `offset` of `from` to the same offset of `to`: in the kernel
// (copy_file_range), else by pread and pwrite. Stops early when `from` ends sooner (it shrank).
std::uint64_t copy_range(int from, int to, off_t offset, off_t length, const fs::path& shown_as) {
  std::uint64_t total = 0;
  off_t in = offset;
  off_t out = offset;
  const off_t end = offset + length;
  while (in < end) {
    const ssize_t n = ::copy_file_range(from, &in, to, &out, static_cast<std::size_t>(end - in), 0);
    if (n == 0) return total;
    if (n > 0) {
      total += static_cast<std::uint64_t>(n);
      continue;
    }
    if (errno != EXDEV && errno != ENOSYS && errno != EOPNOTSUPP && errno != EINVAL)
      fail("copy", shown_as, errno);
    break;
  }
  std::vector<char> buf(static_cast<std::size_t>(std::min<off_t>(end - in, 1 << 20)));
  while (in < end) {
    const ssize_t n = ::pread(
        from, buf.data(),
        static_cast<std::size_t>(std::min<off_t>(end - in, static_cast<off_t>(buf.size()))), in);
    if (n == 0) return total;
    if (n < 0) fail("read", shown_as, errno);
    for (ssize_t done = 0; done < n;) {
      const ssize_t w =
          ::pwrite(to, buf.data() + done, static_cast<std::size_t>(n - done), in + done);
      if (w < 0) fail("write the copy of", shown_as, errno);
      done += w;
    }
    in += n;
    total += static_cast<std::uint64_t>(n);
  }
  return total;
}

}  // namespace

std::uint64_t copy_allocated(int from, int to, off_t size, const fs::path& shown_as) {
  std::uint64_t copied = 0;
  for (off_t pos = 0; pos < size;) {
    off_t data = ::lseek(from, pos, SEEK_DATA);
    off_t end = size;
    if (data < 0) {
      if (errno == ENXIO) break;  // a hole (or the end of a file that shrank) to the end
      if (errno != EINVAL && errno != EOPNOTSUPP) fail("read", shown_as, errno);
      data = pos;  // no SEEK_DATA on this file system: all of it counts as data
    } else {
      if (data >= size) break;
      const off_t hole = ::lseek(from, data, SEEK_HOLE);
      if (hole < 0) fail("read", shown_as, errno);
      end = std::min(hole, size);
    }
    copied += copy_range(from, to, data, end - data, shown_as);
    pos = end;
  }
  // The holes, and the size the file had when it was opened.
  if (::ftruncate(to, size) != 0) fail("set the size of the copy of", shown_as, errno);
  return copied;
}

std::uint64_t allocated_bytes_in(int dir, const std::string& name, const fs::path& shown_as) {
  require_plain_name(name, shown_as);
  struct stat st {};
  if (::fstatat(dir, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) fail("read", shown_as, errno);
  std::uint64_t total = static_cast<std::uint64_t>(st.st_blocks) * 512;
  if (!S_ISDIR(st.st_mode)) return total;
  std::vector<OpenLevel> levels;
  std::optional<OpenLevel> top = open_level(dir, name);
  if (!top) fail("open the folder", shown_as, errno);
  levels.push_back(std::move(*top));
  while (!levels.empty()) {
    errno = 0;
    const dirent* entry = ::readdir(levels.back().listing.get());
    if (entry == nullptr) {
      if (errno != 0) fail("read the folder", shown_path(shown_as, levels), errno);
      levels.pop_back();
      continue;
    }
    const std::string n = entry->d_name;
    if (n == "." || n == "..") continue;
    const int at = levels.back().fd();
    if (::fstatat(at, n.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) {
      if (errno == ENOENT) continue;
      fail("read", shown_path(shown_as, levels) / n, errno);
    }
    total += static_cast<std::uint64_t>(st.st_blocks) * 512;
    if (!S_ISDIR(st.st_mode)) continue;
    if (levels.size() >= kMaxOpenFolders) {
      throw RuntimeError("pgslow refuses to copy " + (shown_path(shown_as, levels) / n).string() +
                         ": more than " + std::to_string(kMaxOpenFolders) +
                         " folders deep, which no data directory is");
    }
    std::optional<OpenLevel> sub = open_level(at, n);
    if (!sub) fail("open the folder", shown_path(shown_as, levels) / n, errno);
    levels.push_back(std::move(*sub));
  }
  return total;
}

std::uint64_t free_bytes_in(int dir, const fs::path& shown_as) {
  struct statvfs vfs {};
  if (::fstatvfs(dir, &vfs) != 0) fail("read the free space of", shown_as, errno);
  return static_cast<std::uint64_t>(vfs.f_bavail) * vfs.f_frsize;
}

void require_room_for_copy(std::uint64_t needed, std::uint64_t free, const fs::path& copied) {
  if (needed <= free) return;
  constexpr double kMiB = 1024.0 * 1024.0;
  throw RuntimeError(fmt::format(
      "pgslow refuses to copy {}: its files hold {} bytes ({:.1f} MiB) on disk, and only {} "
      "bytes ({:.1f} MiB) are free on the file system the copy goes to. Free some space there "
      "(`pgslow server remove-snapshot NAME` removes a snapshot), or find out what grew in {}",
      copied.string(), needed, static_cast<double>(needed) / kMiB, free,
      static_cast<double>(free) / kMiB, copied.string()));
}

namespace {

void give(int fd, const FileOwnership& owner, mode_t mode, const fs::path& shown_as) {
  if (::fchown(fd, owner.uid, owner.gid) != 0)
    fail("give its owner to the copy of", shown_as, errno);
  if (::fchmod(fd, mode & 07777) != 0) fail("set the mode of the copy of", shown_as, errno);
}

// The room copy_tree_in's bytes may take: the tree's blocks as measured before the copy,
// checked against the free space at the first file that is not cloned (clones take none).
struct CopyBudget {
  int to_dir = -1;
  std::uint64_t needed = 0;
  bool checked = false;
  fs::path shown_as;
};

// Copies the open file `src` into the new, empty `dst`: cloned when `clone` and the file
// system allow, else its allocated ranges up to the size it had when opened.
void copy_file(int src, int dst, bool clone, CopyBudget& budget, const fs::path& path,
               TreeCopy& out) {
  struct stat st {};
  if (::fstat(src, &st) != 0) fail("read", path, errno);
  out.bytes += static_cast<std::uint64_t>(st.st_size);
  if (clone && clone_file(src, dst)) {
    ++out.cloned;
    return;
  }
  if (!budget.checked) {
    require_room_for_copy(budget.needed, free_bytes_in(budget.to_dir, budget.shown_as),
                          budget.shown_as);
    budget.checked = true;
  }
  // Filled in since the tree was measured: it must still fit in what is free now.
  require_room_for_copy(static_cast<std::uint64_t>(st.st_blocks) * 512,
                        free_bytes_in(budget.to_dir, budget.shown_as), path);
  copy_allocated(src, dst, st.st_size, path);
}

struct CopyLevel {
  OpenLevel from;
  UniqueFd to;
  mode_t mode = 0700;  // the source folder's, given to the copy once it is complete
};

}  // namespace

TreeCopy copy_tree_in(int from_dir, const std::string& name, int to_dir, const std::string& to,
                      const FileOwnership& owner, bool clone, const fs::path& shown_as) {
  require_plain_name(name, shown_as);
  require_plain_name(to, shown_as);
  std::optional<OpenLevel> top = open_level(from_dir, name);
  if (!top) fail("open the folder", shown_as, errno);
  struct stat top_st {};
  if (::fstat(top->fd(), &top_st) != 0) fail("read", shown_as, errno);
  const uid_t source_owner = top_st.st_uid;
  CopyBudget budget{to_dir, allocated_bytes_in(from_dir, name, shown_as), false, shown_as};
  if (::mkdirat(to_dir, to.c_str(), 0700) != 0)
    fail("make the folder for a copy of", shown_as, errno);
  TreeCopy out;
  try {
    UniqueFd top_to(::openat(to_dir, to.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
    if (!top_to) fail("open the copy of", shown_as, errno);
    std::vector<CopyLevel> levels;
    levels.push_back(CopyLevel{std::move(*top), std::move(top_to), top_st.st_mode});
    while (!levels.empty()) {
      CopyLevel& here = levels.back();
      const fs::path here_path = [&] {
        fs::path p = shown_as;
        for (std::size_t i = 1; i < levels.size(); ++i) p /= levels[i].from.name;
        return p;
      }();
      errno = 0;
      const dirent* entry = ::readdir(here.from.listing.get());
      if (entry == nullptr) {
        if (errno != 0) fail("read the folder", here_path, errno);
        // The top folder keeps root's 0700 until the whole copy is there.
        if (levels.size() > 1) give(here.to.get(), owner, here.mode, here_path);
        levels.pop_back();
        continue;
      }
      const std::string n = entry->d_name;
      if (n == "." || n == "..") continue;
      const fs::path path = here_path / n;
      struct stat st {};
      if (::fstatat(here.from.fd(), n.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0)
        fail("read", path, errno);
      if (st.st_uid != source_owner) {
        throw RuntimeError(fmt::format(
            "pgslow refuses to copy {}: it belongs to uid {}, not to the owner of {} (uid {}). "
            "Remove it, or copy the folder yourself",
            path.string(), st.st_uid, shown_as.string(), source_owner));
      }
      if (S_ISDIR(st.st_mode)) {
        if (levels.size() >= kMaxOpenFolders) {
          throw RuntimeError("pgslow refuses to copy " + path.string() + ": more than " +
                             std::to_string(kMaxOpenFolders) +
                             " folders deep, which no data directory is");
        }
        std::optional<OpenLevel> sub = open_level(here.from.fd(), n);
        if (!sub) fail("open the folder", path, errno);
        if (::mkdirat(here.to.get(), n.c_str(), 0700) != 0) fail("make the copy of", path, errno);
        UniqueFd sub_to(
            ::openat(here.to.get(), n.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
        if (!sub_to) fail("open the copy of", path, errno);
        levels.push_back(CopyLevel{std::move(*sub), std::move(sub_to), st.st_mode});
        continue;
      }
      if (!S_ISREG(st.st_mode)) {
        throw RuntimeError("pgslow refuses to copy " + path.string() +
                           ": it is not a folder or a regular file (a link, a FIFO, a socket); "
                           "remove it, or copy the folder yourself");
      }
      UniqueFd src = open_file_in(here.from.fd(), n, O_RDONLY, path);
      if (!src) fail("open", path, ENOENT);
      UniqueFd dst(::openat(here.to.get(), n.c_str(),
                            O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600));
      if (!dst) fail("make the copy of", path, errno);
      copy_file(src.get(), dst.get(), clone, budget, path, out);
      give(dst.get(), owner, st.st_mode, path);
      ++out.files;
    }
    UniqueFd done(::openat(to_dir, to.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
    if (!done) fail("open the copy of", shown_as, errno);
    static_cast<void>(::syncfs(done.get()));  // the copy on disk before it is used
    give(done.get(), owner, top_st.st_mode, shown_as);
  } catch (...) {
    try {
      remove_tree_in(to_dir, to, shown_as);
    } catch (const std::exception&) {
      // the first error says more
    }
    throw;
  }
  return out;
}

bool remove_tree(const fs::path& path) {
  fs::path abs = fs::absolute(path).lexically_normal();
  if (abs.filename().empty()) abs = abs.parent_path();
  struct stat st {};
  if (::lstat(abs.parent_path().c_str(), &st) != 0 && errno == ENOENT) return false;
  UniqueFd parent = open_folder(abs.parent_path());
  return remove_tree_in(parent.get(), abs.filename().string(), abs);
}

}  // namespace pgslow
