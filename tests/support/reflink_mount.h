#pragma once
// A file system that can clone files (copy-on-write reflinks), for tests on a machine whose own
// disk cannot (ext4): a small XFS made with `mkfs.xfs -m reflink=1`, or a btrfs, in an image
// file, mounted through a loop device in a private temporary folder. The destructor unmounts it and
// removes the folder, also when a test fails; a watchdog process does the same if the test binary
// dies.

#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>

namespace pgslow::testing {

class ReflinkMount {
 public:
  // The two file systems of Linux that clone files (RHEL's and Fedora's defaults).
  enum class Filesystem { kXfs, kBtrfs };
  static const char* name(Filesystem fs);  // "xfs", "btrfs"

  // Makes and mounts an image of `bytes` (sparse: only what is written takes disk). nullptr with
  // `skip_reason` set when this machine cannot: not root, no mkfs.xfs (mkfs.btrfs), no loop
  // device, or mounting refused (a container without the capability). Any other failure throws.
  static std::unique_ptr<ReflinkMount> make(std::uint64_t bytes, std::string& skip_reason,
                                            Filesystem filesystem = Filesystem::kXfs);
  ~ReflinkMount();
  ReflinkMount(const ReflinkMount&) = delete;
  ReflinkMount& operator=(const ReflinkMount&) = delete;

  // The mounted file system's root: root's, mode 0755, reachable by the postgres user.
  const std::filesystem::path& path() const { return mount_point_; }
  // A new folder in it for one workdir (mode 0755).
  std::filesystem::path make_folder(const std::string& name) const;

 private:
  ReflinkMount() = default;
  void unmount() noexcept;

  std::filesystem::path folder_;  // the private temporary folder: image and mount point
  std::filesystem::path mount_point_;
  bool mounted_ = false;
  int watchdog_fd_ = -1;
};

}  // namespace pgslow::testing
