#pragma once
// postgresql.auto.conf, the file ALTER SYSTEM writes: pgslow saves its exact bytes before the
// first change and writes them back on restore, with the original owner and mode (the server
// runs as `postgres` while pgslow may run as root).

#include <filesystem>
#include <string>

#include "apply/journal.h"

namespace pgslow::apply {

std::filesystem::path auto_conf_path(const std::filesystem::path& data_dir);

// The file as it is now: bytes, sha256, owner and mode (existed=false when it is missing).
OriginalFile read_auto_conf(const std::filesystem::path& data_dir);

// Puts `original` back durably: a temporary file in the data directory with the original owner
// and mode, fsync, rename over the file, fsync the directory (a reader, the server included,
// sees the old bytes or the new, never a mix). Removes the file when it did not exist.
void write_auto_conf(const OriginalFile& original);

// Whether the file on disk holds exactly `original`'s bytes (or is missing, if it was).
bool auto_conf_matches(const OriginalFile& original);

}  // namespace pgslow::apply
