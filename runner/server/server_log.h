#pragma once
// Reading a server's log for error messages: what it wrote since a given point (the size of
// the file before a start), so an error shows this attempt's lines, not an old crash's. The
// server's user can make the file any size (sparse too): pgslow reads bounded tails only, and
// keeps the managed cluster's log bounded (cap_log, docs/server.md).

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <string>

namespace pgslow::server {

// The most of the log one read takes: the end of what was written since the offset.
inline constexpr std::size_t kLogTailBytes = std::size_t{1} << 20;
// The managed cluster's log past this size is rotated between stages (cap_log).
inline constexpr std::uintmax_t kLogCapBytes = std::uintmax_t{64} << 20;
// How much of the rotated part server.log.1 keeps (its last bytes).
inline constexpr std::size_t kRotatedLogBytes = std::size_t{16} << 20;

// The log's current size; 0 when it does not exist yet.
std::uintmax_t log_size(const std::filesystem::path& log);

// The log's bytes from `offset` on (from its start when it is now shorter than that), at most
// the last `max_bytes` of them starting at a line, without NUL bytes (a file extended sparse
// reads as zeros); empty when it cannot be read.
std::string read_log_since(const std::filesystem::path& log, std::uintmax_t offset = 0,
                           std::size_t max_bytes = kLogTailBytes);

// The log's lines from `offset` on (read_log_since's), the last `max_lines` of them, after a line
// saying how many earlier ones were left out: a stage's excerpt in the results folder. A log
// that cannot be read gives one line saying so.
std::string log_excerpt_since(const std::filesystem::path& log, std::uintmax_t offset,
                              std::size_t max_lines = 200);

// When `log` is longer than `cap_bytes`: the last kRotatedLogBytes before a cut near its end go
// to `<log>.1` (replacing the one before), and everything up to the cut is removed from `log`
// in place (the server keeps its descriptor and appends after what is left). Call it only
// where no one holds an offset into the log: between stages. Returns whether it rotated;
// throws RuntimeError naming the file when it cannot.
bool cap_log(const std::filesystem::path& log, std::uintmax_t cap_bytes = kLogCapBytes);

}  // namespace pgslow::server
