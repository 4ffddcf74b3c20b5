#include "server/server_log.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/errors.h"
#include "common/safe_fs.h"

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

}  // namespace

std::uintmax_t log_size(const std::filesystem::path& log) {
  UniqueFd fd = open_log(log);
  struct stat st {};
  if (!fd || ::fstat(fd.get(), &st) != 0) return 0;
  return static_cast<std::uintmax_t>(st.st_size);
}

std::string read_log_since(const std::filesystem::path& log, std::uintmax_t offset) {
  UniqueFd fd = open_log(log);
  if (!fd || ::lseek(fd.get(), static_cast<off_t>(offset), SEEK_SET) < 0) return "";
  try {
    return read_all(fd.get(), log);
  } catch (const Error&) {
    return "";
  }
}

}  // namespace pgslow::server
