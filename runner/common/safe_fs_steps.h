#pragma once
// What safe_fs.cpp, safe_fs_paths.cpp and safe_fs_trees.cpp share and no caller needs: who may be
// trusted, the refusal of a name that is not one path step, and the error of a failed file step.

#include <sys/stat.h>
#include <sys/types.h>

#include <filesystem>
#include <string>

namespace pgslow {

// Whether `uid` is root's or the invoking user's.
bool trusted_owner(uid_t uid);
// "0755": a mode's permission bits, for messages.
std::string mode_text(mode_t mode);
// Writable by someone other than its owner (a group of root's alone does not count).
bool others_may_write(const struct stat& st);
// Whether only root or the invoking user could have put `child` (lstat'ed) into the folder
// `parent`: a folder writable only by them, or a sticky one (/tmp) where the child is theirs.
bool placed_by_trusted(const struct stat& parent, const struct stat& child);
// Refuses (RuntimeError) `st`, shown as `path`, unless it is root's or yours and writable by
// nobody else; `what` names it, `fix` says what to do (lower case: it also ends a sentence).
void check(const struct stat& st, const std::filesystem::path& path, const std::string& what,
           const char* fix);

// RuntimeError "cannot <what> <path>: <strerror(err)>".
[[noreturn]] void fail(const std::string& what, const std::filesystem::path& path, int err);

// Refuses (RuntimeError naming `shown_as`) a name that is not one path step: empty, ".", ".."
// or holding a '/'.
void require_plain_name(const std::string& name, const std::filesystem::path& shown_as);

}  // namespace pgslow
