#include "common/paths.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <vector>

#include "common/errors.h"
#include "common/printable.h"
#include "common/safe_fs.h"
#include "common/strings.h"

namespace pgslow {

namespace fs = std::filesystem;

namespace {

// A data folder counts only when no one but root or the invoking user could have made it, or
// its knobs/ and scenarios/, or any folder above them: a clone in a world-writable folder must
// not pick up a knobs/ another user put beside it (safe_fs.h).
bool trusted_data_folder(const fs::path& dir, std::vector<std::string>& refused) {
  std::error_code ec;
  if (!fs::is_directory(dir / "knobs", ec) || !fs::is_directory(dir / "scenarios", ec))
    return false;
  for (const fs::path& folder : {dir, dir / "knobs", dir / "scenarios"}) {
    std::string why;
    if (!is_trusted_folder(folder, why)) {
      refused.push_back(why);
      return false;
    }
  }
  return true;
}

}  // namespace

bool names_a_file(const std::string& arg) {
  const std::string ext = fs::path(arg).extension().string();
  return arg.find('/') != std::string::npos || ext == ".yaml" || ext == ".yml" || ext == ".conf";
}

std::string file_argument_problem(const std::string& arg) {
  std::error_code ec;
  const fs::file_status st = fs::status(arg, ec);
  if (!fs::exists(st)) return fmt::format("no such file: {}", printable(arg));
  if (fs::is_directory(st)) return fmt::format("{} is a folder, not a file", printable(arg));
  return fmt::format("{} is not a regular file", printable(arg));
}

fs::path data_root() {
  std::vector<std::string> refused;
  if (const char* home = std::getenv("PGSLOW_HOME"); home && *home) {
    if (trusted_data_folder(home, refused)) return fs::path(home);
    throw RuntimeError(fmt::format(
        "PGSLOW_HOME={} is not a data folder pgslow trusts: {}. Give a folder holding knobs/ "
        "and scenarios/ that only you (or root) can write, or unset PGSLOW_HOME",
        home, refused.empty() ? "it holds no knobs/ and scenarios/ folders" : refused.front()));
  }
  // Relative to the executable first: an installed pgslow (<prefix>/bin/pgslow) reads its own
  // <prefix>/share/pgslow even on a machine that still has the tree it was built from; a
  // build tree's binary finds the source tree above it.
  std::error_code ec;
  fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  if (!ec) {
    for (fs::path dir = exe.parent_path(); !dir.empty() && dir != dir.root_path();
         dir = dir.parent_path()) {
      if (trusted_data_folder(dir, refused)) return dir;
      if (trusted_data_folder(dir / "share/pgslow", refused)) return dir / "share/pgslow";
    }
  }
#ifdef PGSLOW_SOURCE_DIR
  if (trusted_data_folder(PGSLOW_SOURCE_DIR, refused)) return fs::path(PGSLOW_SOURCE_DIR);
#endif
#ifdef PGSLOW_INSTALLED_DATA_DIR
  if (trusted_data_folder(PGSLOW_INSTALLED_DATA_DIR, refused))
    return fs::path(PGSLOW_INSTALLED_DATA_DIR);
#endif
  // Never the current folder: anyone could have put a knobs/ there.
  throw RuntimeError(fmt::format(
      "pgslow found no data folder (knobs/ and scenarios/) it trusts near {}{}{}. Install pgslow, "
      "or set PGSLOW_HOME to a copy of its knobs/ and scenarios/ that only you (or root) can "
      "write",
      exe.string(), refused.empty() ? "" : "; refused: ", join(refused, "; ")));
}

namespace {
[[noreturn]] void fail(const std::string& what, const fs::path& path) {
  throw RuntimeError(what + " " + path.string() + ": " + std::strerror(errno));
}

void fsync_path(const fs::path& path, int flags) {
  int fd = ::open(path.c_str(), flags);
  if (fd < 0) fail("cannot open", path);
  if (::fsync(fd) != 0) {
    ::close(fd);
    fail("cannot fsync", path);
  }
  ::close(fd);
}
}  // namespace

void write_file_durably(const fs::path& path, const std::string& contents, unsigned mode) {
  // Only into a folder no one else could have made or could change (a link planted where a
  // report goes would lead root's write anywhere); the file itself is never followed below.
  require_output_folder(path.parent_path().empty() ? fs::path(".") : path.parent_path(),
                        "to write " + path.string() + " into the folder",
                        "write it into a folder that only you (or root) can write.");
  fs::path tmp = path;
  tmp += ".tmp." + std::to_string(::getpid());
  // O_EXCL | O_NOFOLLOW: a file or symlink planted under the temporary name is never written
  // through; one left by this pid's predecessor is removed first.
  const int flags = O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC;
  int fd = ::open(tmp.c_str(), flags, static_cast<mode_t>(mode));
  if (fd < 0 && errno == EEXIST && ::unlink(tmp.c_str()) == 0)
    fd = ::open(tmp.c_str(), flags, static_cast<mode_t>(mode));
  if (fd < 0) fail("cannot create", tmp);
  // Any failure from here on (a full disk above all) removes the temporary file: the target
  // keeps its old bytes, and nothing half-written stays behind.
  auto give_up = [&](const char* what, const fs::path& which) {
    int err = errno;
    if (fd >= 0) ::close(fd);
    ::unlink(tmp.c_str());
    errno = err;
    fail(what, which);
  };
  const char* p = contents.data();
  std::size_t left = contents.size();
  while (left > 0) {
    ssize_t n = ::write(fd, p, left);
    if (n < 0) {
      if (errno == EINTR) continue;
      give_up("cannot write", tmp);
    }
    p += n;
    left -= static_cast<std::size_t>(n);
  }
  if (::fsync(fd) != 0) give_up("cannot fsync", tmp);
  if (::close(fd) != 0) {
    fd = -1;
    give_up("cannot write", tmp);
  }
  fd = -1;
  if (::rename(tmp.c_str(), path.c_str()) != 0) give_up("cannot rename onto", path);
  fsync_path(path.parent_path().empty() ? fs::path(".") : path.parent_path(),
             O_RDONLY | O_DIRECTORY);
}

std::string read_file(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) fail("cannot read", path);
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

}  // namespace pgslow
