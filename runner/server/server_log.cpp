#include "server/server_log.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <linux/falloc.h>
#include <spdlog/spdlog.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <string>
#include <vector>

#include "common/errors.h"
#include "common/safe_fs.h"
#include "common/strings.h"

namespace pgslow::server {

namespace {

// The log is in the server user's folder: opened without following a link of theirs, so
// root never copies another file (say /etc/shadow) into a message or a report.
UniqueFd open_log(const std::filesystem::path& log) {
  try {
    UniqueFd folder = open_folder(log.parent_path());
    return open_file_in(folder.get(), log.filename().string(), O_RDONLY, log);
  } catch (const Error&) {
    return UniqueFd();
  }
}

// Bytes [from, to) of `fd` (fewer when the file ends first), without NULs; throws naming
// `shown_as`.
std::string read_range(int fd, std::uintmax_t from, std::uintmax_t to,
                       const std::filesystem::path& shown_as) {
  std::string out;
  char buf[65536];
  while (from < to) {
    const auto want = static_cast<std::size_t>(std::min<std::uintmax_t>(sizeof buf, to - from));
    const ssize_t n = ::pread(fd, buf, want, static_cast<off_t>(from));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0)
      throw RuntimeError(
          fmt::format("cannot read {}: {}", shown_as.string(), std::strerror(errno)));
    if (n == 0) break;
    for (ssize_t i = 0; i < n; ++i) {
      if (buf[i] != '\0') out += buf[i];
    }
    from += static_cast<std::uintmax_t>(n);
  }
  return out;
}

// Drops a partial first line: a read that starts mid-file starts at the next line.
void from_next_line(std::string& text) {
  const auto newline = text.find('\n');
  text.erase(0, newline == std::string::npos ? text.size() : newline + 1);
}

}  // namespace

std::uintmax_t log_size(const std::filesystem::path& log) {
  UniqueFd fd = open_log(log);
  struct stat st {};
  if (!fd || ::fstat(fd.get(), &st) != 0) return 0;
  return static_cast<std::uintmax_t>(st.st_size);
}

std::string read_log_since(const std::filesystem::path& log, std::uintmax_t offset,
                           std::size_t max_bytes) {
  UniqueFd fd = open_log(log);
  struct stat st {};
  if (!fd || ::fstat(fd.get(), &st) != 0) return "";
  const auto size = static_cast<std::uintmax_t>(st.st_size);
  if (offset > size) offset = 0;  // cut since: all of it is newer than the offset
  const std::uintmax_t from = std::max(offset, size > max_bytes ? size - max_bytes : 0);
  try {
    std::string text = read_range(fd.get(), from, size, log);
    if (from > offset) from_next_line(text);
    return text;
  } catch (const Error&) {
    return "";
  }
}

bool cap_log(const std::filesystem::path& log, std::uintmax_t cap_bytes) {
  UniqueFd folder = open_folder(log.parent_path());
  const std::string name = log.filename().string();
  UniqueFd fd = open_file_in(folder.get(), name, O_RDWR, log);
  struct stat st {};
  if (!fd) return false;
  if (::fstat(fd.get(), &st) != 0)
    throw RuntimeError(fmt::format("cannot read {}: {}", log.string(), std::strerror(errno)));
  const auto size = static_cast<std::uintmax_t>(st.st_size);
  if (size <= cap_bytes) return false;
  // The cut is on a block boundary, as removing the start of a file in place needs; what is
  // after it stays in the log (a line may be split between the two files, none is lost).
  const auto block = static_cast<std::uintmax_t>(std::max<blksize_t>(st.st_blksize, 512));
  std::uintmax_t cut = size / block * block;
  if (cut == size) cut -= block;
  const std::uintmax_t kept_from = cut > kRotatedLogBytes ? cut - kRotatedLogBytes : 0;
  const std::filesystem::path rotated = log.parent_path() / (name + ".1");
  std::string older = read_range(fd.get(), kept_from, cut, log);
  if (kept_from > 0) from_next_line(older);
  const FileOwnership owner{st.st_uid, st.st_gid, 0600};
  // Written first: a rotation that fails after it leaves a line twice, never none.
  replace_file_in(folder.get(), name + ".1", older, owner, rotated, name + ".1.tmp.");
  if (::fallocate(fd.get(), FALLOC_FL_COLLAPSE_RANGE, 0, static_cast<off_t>(cut)) == 0) {
    spdlog::debug("rotated {} at {} bytes into {}", log.string(), size, rotated.string());
    return true;
  }
  if (errno != EOPNOTSUPP && errno != EINVAL)
    throw RuntimeError(
        fmt::format("cannot rotate {}: {}. Remove it, or move it away, to start "
                    "a new log",
                    log.string(), std::strerror(errno)));
  // A file system that cannot remove a file's start: all of it to <log>.1, then emptied. The
  // server's lines written between the last read and the truncation are lost.
  struct stat now {};
  if (::fstat(fd.get(), &now) != 0)
    throw RuntimeError(fmt::format("cannot read {}: {}", log.string(), std::strerror(errno)));
  older += read_range(fd.get(), cut, static_cast<std::uintmax_t>(now.st_size), log);
  replace_file_in(folder.get(), name + ".1", older, owner, rotated, name + ".1.tmp.");
  if (::ftruncate(fd.get(), 0) != 0)
    throw RuntimeError(fmt::format("cannot empty {}: {}", log.string(), std::strerror(errno)));
  spdlog::debug("rotated {} at {} bytes into {} (copied, then emptied)", log.string(), size,
                rotated.string());
  return true;
}

std::string log_excerpt_since(const std::filesystem::path& log, std::uintmax_t offset,
                              std::size_t max_lines) {
  std::vector<std::string> lines;
  try {
    lines = split(read_log_since(log, offset), '\n');
  } catch (const std::exception& e) {
    return fmt::format("(the server log could not be read: {})\n", e.what());
  }
  if (!lines.empty() && lines.back().empty()) lines.pop_back();
  std::string out;
  const std::size_t first = lines.size() > max_lines ? lines.size() - max_lines : 0;
  if (first > 0) out += fmt::format("... {} earlier lines left out\n", first);
  for (std::size_t i = first; i < lines.size(); ++i) out += lines[i] + "\n";
  return out;
}

}  // namespace pgslow::server
