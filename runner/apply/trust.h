#pragma once
// What pgslow trusts in its workdir. The journal holds commands pgslow runs and paths it
// writes, and pgslow often runs as root: a workdir, journal or lock that someone else could
// have written (another user's folder, a world-writable one, a symlink planted in place of the
// file) is refused before anything in it is read or written. docs/user-guide.md (SECURITY).

#include <sys/types.h>

#include <filesystem>
#include <string>

namespace pgslow::apply {

// Throws RuntimeError (saying what to do) unless `workdir` is owned by the invoking user or
// root and not writable by group or others. A workdir that does not exist is fine.
void require_trusted_workdir(const std::filesystem::path& workdir);

// Opens `path` (a file in a trusted workdir) without following a symlink, and checks what was
// opened: a regular file owned by the invoking user or root, not writable by group or others.
// Returns -1 with errno ENOENT when it does not exist (and `flags` has no O_CREAT); throws
// RuntimeError naming the file and what to do otherwise.
int open_trusted_file(const std::filesystem::path& path, int flags, mode_t mode = 0600);

// Same checks for a descriptor already open on `path`.
void require_trusted_fd(int fd, const std::filesystem::path& path);

// Creates `workdir` (and its parents) when missing; a folder it creates gets mode 0755 whatever
// the umask says, so it is never group- or world-writable.
void create_workdir(const std::filesystem::path& workdir);

}  // namespace pgslow::apply
