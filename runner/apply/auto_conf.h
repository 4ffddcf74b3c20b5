#pragma once
// postgresql.auto.conf, the file ALTER SYSTEM writes: pgslow saves its exact bytes before the
// first change and writes them back on restore, with the original owner and mode (the server
// runs as `postgres` while pgslow may run as root).

#include <cstddef>
#include <filesystem>
#include <map>
#include <set>
#include <string>

#include "apply/journal.h"

namespace pgslow::apply {

std::filesystem::path auto_conf_path(const std::filesystem::path& data_dir);

// The most of postgresql.auto.conf pgslow reads: ALTER SYSTEM writes a line per setting, a few
// KB, while the server's user could make it as large as the disk.
inline constexpr std::size_t kMaxAutoConfBytes = std::size_t{1} << 20;

// The file as it is now: bytes, sha256, owner and mode (existed=false when it is missing).
// Throws RuntimeError naming the file and kMaxAutoConfBytes when it is larger.
OriginalFile read_auto_conf(const std::filesystem::path& data_dir);

// Puts `original` back durably: a temporary file in the data directory with the original owner
// and mode, fsync, rename over the file, fsync the directory (a reader, the server included,
// sees the old bytes or the new, never a mix). Removes the file when it did not exist.
void write_auto_conf(const OriginalFile& original);

// Whether the file on disk holds exactly `original`'s bytes (or is missing, if it was).
bool auto_conf_matches(const OriginalFile& original);

// One `name = 'value'` line of postgresql.auto.conf.
struct AutoConfEntry {
  std::string name;   // lower case: PostgreSQL compares parameter names without case
  std::string value;  // decoded ('' and backslash escapes undone): what ALTER SYSTEM was given
  std::string line;   // the line as written, without its newline
};

// The entries of a postgresql.auto.conf text, last one per name (comments and blank lines
// skipped; a line that is not an entry is ignored).
std::map<std::string, AutoConfEntry> parse_auto_conf(const std::string& text);

// `current` with the entries of `names` (lower case) exactly as in `original`: their lines
// in `current` are dropped and `original`'s lines for them appended; every other line stays
// byte for byte.
std::string merge_auto_conf(const std::string& current, const std::string& original,
                            const std::set<std::string>& names);

}  // namespace pgslow::apply
