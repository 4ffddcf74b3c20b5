#pragma once
// What a PostgreSQL data directory's own files say, read as root beside the server's user, who
// writes that folder: without following a link, never waiting on a FIFO, a few kilobytes at most
// (common/safe_fs.h). One reader for the managed cluster, a pg_ctl target and the evidence.

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>

namespace pgslow::pg {

// The files the server's user writes hold a few lines; a longer one is refused, not read whole.
inline constexpr std::size_t kMaxServerFile = 64 * 1024;

// postmaster.pid: line 1 the postmaster's pid, line 3 its start time (seconds since the epoch),
// line 4 the port, line 5 the first socket directory (empty fields when the file is shorter).
struct PostmasterPidFile {
  int pid = 0;
  std::int64_t start_epoch = 0;
  std::string port;
  std::string socket_dir;
};
// <data_dir>/postmaster.pid, nullopt when absent or refused (the reason logged at debug level).
std::optional<PostmasterPidFile> read_postmaster_pid(const std::filesystem::path& data_dir);

}  // namespace pgslow::pg
