#include "common/reflink.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <linux/fs.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <random>

#include "common/errors.h"
#include "common/safe_fs.h"

namespace pgslow {

namespace fs = std::filesystem;

namespace {

// An unnamed file in `dir` (O_TMPFILE: nothing to clean up, nothing anyone can plant), or a
// fresh O_EXCL name removed at once where the file system has no O_TMPFILE.
UniqueFd scratch_file(int dir, const fs::path& folder) {
  UniqueFd fd(::openat(dir, ".", O_TMPFILE | O_RDWR | O_CLOEXEC, 0600));
  if (fd) return fd;
  if (errno != EOPNOTSUPP && errno != EISDIR && errno != EINVAL)
    throw RuntimeError(
        fmt::format("cannot make a scratch file in {}: {} (is the workdir writable?)",
                    folder.string(), std::strerror(errno)));
  std::random_device rd;
  const std::string name = fmt::format(".pgslow-reflink-probe-{}-{:x}", ::getpid(), rd());
  fd = open_file_in(dir, name, O_RDWR | O_CREAT | O_EXCL, folder / name, 0600);
  remove_file_in(dir, name, folder / name);
  return fd;
}

}  // namespace

bool clone_file(int from, int to) {
  return ::ioctl(to, FICLONE, from) == 0;
}

ReflinkSupport probe_reflink(const fs::path& folder) {
  UniqueFd dir = open_folder(folder);
  UniqueFd from = scratch_file(dir.get(), folder);
  // One whole block: a file system may refuse to clone an empty file's nothing.
  const std::string block(4096, 'p');
  if (::write(from.get(), block.data(), block.size()) != static_cast<ssize_t>(block.size()))
    throw RuntimeError(fmt::format("cannot write a scratch file in {}: {}", folder.string(),
                                   std::strerror(errno)));
  UniqueFd to = scratch_file(dir.get(), folder);
  ReflinkSupport out;
  if (clone_file(from.get(), to.get())) {
    out.supported = true;
    out.why = "FICLONE works in " + folder.string();
  } else {
    out.why = fmt::format("FICLONE in {}: {}", folder.string(), std::strerror(errno));
  }
  return out;
}

bool same_file_system(const fs::path& a, const fs::path& b) {
  struct stat sa {};
  struct stat sb {};
  if (::fstatat(AT_FDCWD, a.c_str(), &sa, AT_SYMLINK_NOFOLLOW) != 0) return false;
  if (::fstatat(AT_FDCWD, b.c_str(), &sb, AT_SYMLINK_NOFOLLOW) != 0) return false;
  return sa.st_dev == sb.st_dev;
}

}  // namespace pgslow
