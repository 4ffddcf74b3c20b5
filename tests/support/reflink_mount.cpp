#include "tests/support/reflink_mount.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <vector>

#include "common/errors.h"
#include "common/process.h"
#include "tests/support/watchdog.h"

namespace pgslow::testing {

namespace fs = std::filesystem;

namespace {

// Waits for the end of a pipe only the test binary holds, then unmounts (lazily: a server
// that the cluster's own watchdog is still stopping may hold files open) and removes the
// folder. After a normal teardown it finds nothing to do.
int start_mount_watchdog(const fs::path& mount_point, const fs::path& folder) {
  return start_watchdog_script(
      "cat >/dev/null\n"
      "if mountpoint -q \"$1\"; then umount \"$1\" || umount -l \"$1\"; fi\n"
      "rm -rf \"$2\"\n",
      "pgslow-test-mount-watchdog", {mount_point.string(), folder.string()});
}

bool program_exists(const std::string& name) {
  for (const char* dir : {"/usr/sbin", "/sbin", "/usr/bin", "/bin"}) {
    if (::access((fs::path(dir) / name).c_str(), X_OK) == 0) return true;
  }
  return false;
}

}  // namespace

const char* ReflinkMount::name(Filesystem fs) {
  return fs == Filesystem::kXfs ? "xfs" : "btrfs";
}

std::unique_ptr<ReflinkMount> ReflinkMount::make(std::uint64_t bytes, std::string& skip_reason,
                                                 Filesystem filesystem) {
  const std::string type = name(filesystem);
  const std::string mkfs_program = "mkfs." + type;
  if (::geteuid() != 0) {
    skip_reason = fmt::format("mounting a {} image needs root", type);
    return nullptr;
  }
  if (!program_exists(mkfs_program)) {
    skip_reason = fmt::format("{} is not installed (apt-get install {})", mkfs_program,
                              filesystem == Filesystem::kXfs ? "xfsprogs" : "btrfs-progs");
    return nullptr;
  }
  if (::access("/dev/loop-control", F_OK) != 0) {
    skip_reason = "this machine has no loop devices (/dev/loop-control is missing)";
    return nullptr;
  }
  const char* tmp = std::getenv("TMPDIR");
  std::string pattern = fmt::format("{}/pgslow-{}-XXXXXX", tmp && *tmp ? tmp : "/tmp", type);
  std::vector<char> buf(pattern.begin(), pattern.end());
  buf.push_back('\0');
  if (::mkdtemp(buf.data()) == nullptr)
    throw RuntimeError(fmt::format("cannot create {}: {}", pattern, std::strerror(errno)));
  std::unique_ptr<ReflinkMount> m(new ReflinkMount());
  m->folder_ = buf.data();
  m->mount_point_ = m->folder_ / "mnt";
  m->watchdog_fd_ = start_mount_watchdog(m->mount_point_, m->folder_);
  // The postgres user must pass through to the workdirs made below the mount point.
  fs::permissions(m->folder_, fs::perms::owner_all | fs::perms::others_exec);
  fs::create_directory(m->mount_point_);
  const fs::path image = m->folder_ / (type + ".img");
  {
    int fd = ::open(image.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    if (fd < 0 || ::ftruncate(fd, static_cast<off_t>(bytes)) != 0) {
      const int e = errno;
      if (fd >= 0) ::close(fd);
      throw RuntimeError(fmt::format("cannot make {}: {}", image.string(), std::strerror(e)));
    }
    ::close(fd);
  }
  ProcessOptions quiet;
  quiet.timeout = std::chrono::seconds(120);
  // XFS clones only when made with reflink=1 (current xfsprogs' default, said anyway); btrfs
  // always can.
  const std::vector<std::string> mkfs_argv =
      filesystem == Filesystem::kXfs
          ? std::vector<std::string>{mkfs_program, "-q", "-m", "reflink=1", image.string()}
          : std::vector<std::string>{mkfs_program, "-q", image.string()};
  ProcessResult mkfs = run_process(mkfs_argv, quiet);
  if (!mkfs.ok()) {
    throw RuntimeError(fmt::format("{} {} failed ({}): {}", mkfs_program, image.string(),
                                   mkfs.describe_status(), last_lines(mkfs.output, 5)));
  }
  ProcessResult mount = run_process(
      {"mount", "-t", type, "-o", "loop", image.string(), m->mount_point_.string()}, quiet);
  if (!mount.ok()) {
    skip_reason = fmt::format("mounting a {} image through a loop device failed ({}): {}", type,
                              mount.describe_status(), last_lines(mount.output, 3));
    return nullptr;  // the destructor removes the folder
  }
  m->mounted_ = true;
  fs::permissions(m->mount_point_, fs::perms::owner_all | fs::perms::group_read |
                                       fs::perms::group_exec | fs::perms::others_read |
                                       fs::perms::others_exec);
  return m;
}

fs::path ReflinkMount::make_folder(const std::string& name) const {
  const fs::path p = mount_point_ / name;
  fs::create_directory(p);
  fs::permissions(p, fs::perms::owner_all | fs::perms::group_read | fs::perms::group_exec |
                         fs::perms::others_read | fs::perms::others_exec);
  return p;
}

void ReflinkMount::unmount() noexcept {
  if (!mounted_) return;
  try {
    ProcessOptions quiet;
    quiet.timeout = std::chrono::seconds(60);
    ProcessResult r = run_process({"umount", mount_point_.string()}, quiet);
    if (!r.ok()) {
      std::cerr << "umount " << mount_point_ << " failed (" << r.describe_status()
                << "): " << r.output << "; unmounting lazily\n";
      run_process({"umount", "-l", mount_point_.string()}, quiet);
    }
  } catch (const std::exception& e) {
    std::cerr << "cannot unmount " << mount_point_ << ": " << e.what() << "\n";
  }
  mounted_ = false;
}

ReflinkMount::~ReflinkMount() {
  unmount();
  std::error_code ec;
  fs::remove_all(folder_, ec);
  if (watchdog_fd_ >= 0) ::close(watchdog_fd_);
}

}  // namespace pgslow::testing
