#pragma once
// What safe_fs.cpp and safe_fs_trees.cpp share and no caller needs: the refusal of a name that
// is not one path step, and the error of a failed file step.

#include <filesystem>
#include <string>

namespace pgslow {

// RuntimeError "cannot <what> <path>: <strerror(err)>".
[[noreturn]] void fail(const std::string& what, const std::filesystem::path& path, int err);

// Refuses (RuntimeError naming `shown_as`) a name that is not one path step: empty, ".", ".."
// or holding a '/'.
void require_plain_name(const std::string& name, const std::filesystem::path& shown_as);

}  // namespace pgslow
