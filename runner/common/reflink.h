#pragma once
// Copy-on-write file clones (reflinks: FICLONE on XFS, btrfs, ...). A clone copies a file's
// block map, not its bytes: the two files share their data until one is written. Whether a
// file system can is asked of the kernel by trying, never guessed from its name (XFS made
// without reflink=1 cannot; ext4 cannot; a btrfs or an XFS with reflink=1 can).

#include <filesystem>
#include <string>

namespace pgslow {

struct ReflinkSupport {
  bool supported = false;
  std::string why;  // "FICLONE works on /var/tmp/lab", "... : Operation not supported"
};

// Tries one clone between two scratch files made in `folder`, a folder pgslow owns (the
// workdir: its walk is open_folder's), and removes them. Never throws for a refused clone;
// throws RuntimeError when the folder cannot be opened or written.
ReflinkSupport probe_reflink(const std::filesystem::path& folder);

// Whether two paths are on one file system (same st_dev; no symlink followed at the last
// step). False when either is missing.
bool same_file_system(const std::filesystem::path& a, const std::filesystem::path& b);

// Clones the whole of the open file `from` into the open, empty file `to` (FICLONE). False,
// with errno set, when the file system refuses (EOPNOTSUPP, EXDEV, EINVAL).
bool clone_file(int from, int to);

}  // namespace pgslow
