#pragma once
// Reading a server's log for error messages: what it wrote since a given point (the size of
// the file before a start), so an error shows this attempt's lines, not an old crash's.

#include <cstdint>
#include <filesystem>
#include <string>

namespace pgslow::server {

// The log's current size; 0 when it does not exist yet.
std::uintmax_t log_size(const std::filesystem::path& log);

// The log's bytes from `offset` on; empty when it cannot be read.
std::string read_log_since(const std::filesystem::path& log, std::uintmax_t offset = 0);

}  // namespace pgslow::server
