#pragma once
// The root boundary on the file system. pgslow often runs as root beside a server that runs as
// the `postgres` user, and anyone who can act as that user (a SQL superuser can, with COPY ...
// TO PROGRAM) must not be able to make root write, chown, remove or run anything of theirs.
//
// Two kinds of folder, two rules (docs/user-guide.md, SECURITY):
// - Folders pgslow keeps its own state in (the workdir, the cache of server builds): every
//   folder on the way from / is owned by root or the invoking user and writable by nobody
//   else (a sticky folder such as /tmp may be, when the next step in it is ours), and no
//   symlink on the way belongs to anyone else. Otherwise pgslow refuses, naming the path and
//   its owner. require_trusted_path, require_trusted_workdir, open_trusted_file.
// - Folders the server's user owns (the data directory, the cluster folder): reached through
//   one open_folder() that follows no symlink anyone else could have placed, then every step
//   inside is an *at() call on that descriptor with O_NOFOLLOW; files are written to a fresh
//   O_EXCL name, given their owner through the descriptor (fchown) and renamed into place.

#include <sys/types.h>

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace pgslow {

// A file descriptor that closes itself.
class UniqueFd {
 public:
  UniqueFd() = default;
  explicit UniqueFd(int fd) : fd_(fd) {}
  UniqueFd(UniqueFd&& other) noexcept : fd_(other.release()) {}
  UniqueFd& operator=(UniqueFd&& other) noexcept;
  UniqueFd(const UniqueFd&) = delete;
  UniqueFd& operator=(const UniqueFd&) = delete;
  ~UniqueFd();
  int get() const { return fd_; }
  int release();
  explicit operator bool() const { return fd_ >= 0; }

 private:
  int fd_ = -1;
};

// Throws RuntimeError unless `path` (and every folder and symlink on the way to it) could have
// been made only by root or the invoking user; see above. `what` names it in the message ("the
// workdir"). A path that does not exist yet is fine when the folders above it are and the one
// it is missing from is root's or yours and writable by nobody else (or sticky). `fix` says
// what to do instead when the last step is refused (empty: use a workdir of your own).
void require_trusted_path(const std::filesystem::path& path, const std::string& what,
                          const std::string& fix = "");

// require_trusted_path for the folder a file is written into, except that it may be sticky
// (/tmp) when it is root's or yours: a file there is made under a fresh name (O_EXCL, no link
// followed) and renamed into place, which no one else can turn aside.
void require_output_folder(const std::filesystem::path& folder, const std::string& what,
                           const std::string& fix);

// require_trusted_path for a folder, which must be a folder when it exists.
void require_trusted_workdir(const std::filesystem::path& workdir);

// Opens `path` (a file in a trusted workdir) without following a symlink, and checks what was
// opened: a regular file owned by the invoking user or root, not writable by group or others.
// Returns -1 with errno ENOENT when it does not exist (and `flags` has no O_CREAT); throws
// RuntimeError naming the file and what to do otherwise.
int open_trusted_file(const std::filesystem::path& path, int flags, mode_t mode = 0600);

// Same checks for a descriptor already open on `path`.
void require_trusted_fd(int fd, const std::filesystem::path& path);

// Checks `workdir` (require_trusted_workdir), then creates it (and its parents) when missing,
// and returns it open (create_trusted_folders). A folder it creates gets mode 0755 whatever the
// umask says, so it is never group- or world-writable.
UniqueFd create_workdir(const std::filesystem::path& workdir);

// The contents of a file pgslow takes instructions from (a scenario, a lesson, the catalog, a
// preset or settings file, a postgresql.conf for bisect, a script): read only when no user but
// root or you could have written it. Every folder on the way passes require_trusted_path's walk;
// the file must have been put there by root or you (its folder writable by nobody else, or
// sticky with the file yours), belong to root or you and be writable by nobody else. A symlink
// is followed only when placed the same way, and its target is judged again. Throws
// RuntimeError naming the path, its owner or mode, and `fix` (what to do; a default when
// empty); `what` names it ("the scenario"). `max_bytes` as read_all.
std::string read_trusted_file(const std::filesystem::path& path, const std::string& what,
                              const std::string& fix = "", std::size_t max_bytes = SIZE_MAX);

// Whether `folder` passes require_trusted_path and exists; `why` gets the refusal otherwise.
bool is_trusted_folder(const std::filesystem::path& folder, std::string& why);

// create_workdir's making part, for any folder of pgslow's own (the build cache, a results
// folder): walks `path` as require_trusted_path does and makes each missing folder with
// mkdirat from its parent's open descriptor, only in a parent that is root's or yours and
// writable by nobody else (or sticky), then checks through a new descriptor that it is the
// folder made (ours, no link) and gives it 0755. A parent of someone else's, or a race lost to
// one, is refused naming the folder, before anything is made there. Returns `path` open
// (O_RDONLY | O_DIRECTORY): steps inside should go through it. `what` names it in errors.
UniqueFd create_trusted_folders(const std::filesystem::path& path, const std::string& what);

// A folder pgslow writes its output into (a results folder, the folder of an --output file):
// require_output_folder, then create_trusted_folders. A `results` another user planted as a link
// in a shared current folder is refused, never written through. `what` names it.
UniqueFd create_output_folders(const std::filesystem::path& path, const std::string& what);

// A folder, open for the *at() calls below (O_RDONLY | O_DIRECTORY, so it can be fsync'ed).
// No symlink on the way is followed unless the folder holding it is writable only by root or
// the invoking user (or it is sticky and the link is theirs): the server's user can replace
// anything in the folders it owns, and a link it plants there is refused, naming it.
UniqueFd open_folder(const std::filesystem::path& path);

// Who owns a file and with which mode: what a replaced file is given.
struct FileOwnership {
  uid_t uid = 0;
  gid_t gid = 0;
  mode_t mode = 0600;
};

// Opens `name` (one path step, no '/') in the folder `dir` without following a symlink, and
// without waiting on a FIFO. It must be a regular file with one link, owned by root, the invoking
// user or the folder's owner. Returns an empty UniqueFd when it does not exist and `flags` has no
// O_CREAT. `shown_as` is its path for messages.
UniqueFd open_file_in(int dir, const std::string& name, int flags,
                      const std::filesystem::path& shown_as, mode_t mode = 0600);

// The rest of an open file, from its current offset; throws RuntimeError naming `shown_as`.
// A file longer than `max_bytes` is refused, never read whole: one the server's user writes
// (postmaster.pid, PG_VERSION) could be made as large as the disk, or sparse and larger.
std::string read_all(int fd, const std::filesystem::path& shown_as,
                     std::size_t max_bytes = SIZE_MAX);

// The contents of `name` in `dir` (open_file_in's checks, read_all's `max_bytes`), or nullopt
// when there is none.
std::optional<std::string> read_file_in(int dir, const std::string& name,
                                        const std::filesystem::path& shown_as,
                                        std::size_t max_bytes = SIZE_MAX);

// The owner and mode of the folder `dir`.
FileOwnership folder_ownership(int dir);

// Replaces `name` in `dir` with `contents`: a new file under a fresh random name (O_EXCL, so
// nothing planted is written through), given `owner` through its descriptor, fsync'ed, renamed
// over `name`, and the folder fsync'ed. A reader sees the old bytes or the new. The temporary
// name starts with `temp_prefix` followed by this process's pid and a dot.
void replace_file_in(int dir, const std::string& name, const std::string& contents,
                     const FileOwnership& owner, const std::filesystem::path& shown_as,
                     const std::string& temp_prefix);

// Removes `name` from `dir` (a symlink is removed, never followed). False when it was not
// there.
bool remove_file_in(int dir, const std::string& name, const std::filesystem::path& shown_as);

// Creates the folder `name` in `dir` when missing (mode 0700) and opens it without following a
// symlink: fchmod and fchown then act on the folder itself, never on what a link points to.
UniqueFd make_folder_in(int dir, const std::string& name, const std::filesystem::path& shown_as);

// Opens the existing folder `name` in `dir` without following a symlink; an empty UniqueFd when
// it does not exist; throws RuntimeError when it is a symlink or not a folder.
UniqueFd open_folder_in(int dir, const std::string& name, const std::filesystem::path& shown_as);

// Creates a new, empty folder (mode 0700) in `dir` under a fresh random name that starts with
// `prefix` (nothing already there is ever reused) and opens it; its name goes to `name`.
UniqueFd make_private_folder_in(int dir, const std::string& prefix, std::string& name,
                                const std::filesystem::path& shown_as);

// The names in an open folder, without . and ..
std::vector<std::string> names_in(int dir, const std::filesystem::path& shown_as);

// Renames the folder `from` in `from_dir` to `to` in `to_dir` (one file system) in one step,
// following no symlink: a reader of `to` sees the old folder or the new one. When `to` exists
// the two are swapped (RENAME_EXCHANGE), so the old one is then at `from` for the caller to
// remove, and true is returned.
bool move_folder_in(int from_dir, const std::string& from, int to_dir, const std::string& to,
                    const std::filesystem::path& shown_as);

// Removes `name` from `dir` with everything below it, one *at() step at a time without
// following any symlink (a link is removed, not followed). False when it was not there. At most
// 32 folders are open at once: deeper ones are first moved up to the top of the tree (under a
// fresh ".pgslow-removing-" name), so memory and descriptors stay bounded at any depth.
bool remove_tree_in(int dir, const std::string& name, const std::filesystem::path& shown_as);

// What copy_tree_in copied.
struct TreeCopy {
  std::uint64_t files = 0;
  std::uint64_t bytes = 0;   // the files' sizes
  std::uint64_t cloned = 0;  // files cloned copy-on-write (the rest were copied)
};

// Copies the folder `name` in `from_dir` into a new folder `to` in `to_dir` (one of pgslow's
// own; `to` must not exist), following no link. Every entry must be a folder or a regular file
// owned by the owner of `name` itself (a data directory: its server's user); anything else (a
// link, a FIFO, another owner's file) is refused, naming it, and the partial copy removed.
// Each file is cloned (FICLONE) when `clone` is set and the file system allows it, else its
// allocated ranges copied (copy_allocated: holes stay holes, a file growing meanwhile is copied
// only to the size it had when opened), after the tree's blocks (allocated_bytes_in) were found
// to fit in the free space there (require_room_for_copy), and each file's again. The copies are
// made mode 0700/0600 and given `owner` (uid, gid) with the source's permission bits, the top
// folder last, so no one else can reach into the copy while it is made. Depth first, at most 32
// folders deep (a data directory is 4): deeper is refused.
TreeCopy copy_tree_in(int from_dir, const std::string& name, int to_dir, const std::string& to,
                      const FileOwnership& owner, bool clone,
                      const std::filesystem::path& shown_as);

// The bytes that `name` in `dir`, with everything below it, holds on disk (st_blocks * 512: holes
// take none), one no-follow step at a time, at most 32 folders deep (deeper is refused).
std::uint64_t allocated_bytes_in(int dir, const std::string& name,
                                 const std::filesystem::path& shown_as);

// The bytes free to non-root users on the file system of the open folder `dir` (f_bavail).
std::uint64_t free_bytes_in(int dir, const std::filesystem::path& shown_as);

// Throws RuntimeError naming `copied`, the bytes needed and those free, unless `needed` fits in
// `free`: a copy that would fill the disk is refused before it starts.
void require_room_for_copy(std::uint64_t needed, std::uint64_t free,
                           const std::filesystem::path& copied);

// Copies the allocated ranges of the first `size` bytes of the open file `from` to the same
// offsets of the empty file `to` (SEEK_DATA, SEEK_HOLE), then gives `to` that size (ftruncate),
// so holes stay holes and a file that grows meanwhile is copied no further. Returns the bytes
// copied.
std::uint64_t copy_allocated(int from, int to, off_t size, const std::filesystem::path& shown_as);

// remove_tree_in for a path: its folder opened with open_folder.
bool remove_tree(const std::filesystem::path& path);

// fsync of an open folder; throws RuntimeError naming `shown_as`.
void fsync_folder(int dir, const std::filesystem::path& shown_as);

}  // namespace pgslow
