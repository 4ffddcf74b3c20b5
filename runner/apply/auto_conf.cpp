#include "apply/auto_conf.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <vector>

#include "apply/bytes.h"
#include "common/errors.h"
#include "common/paths.h"
#include "common/strings.h"

namespace pgslow::apply {

namespace fs = std::filesystem;

fs::path auto_conf_path(const fs::path& data_dir) {
  return data_dir / "postgresql.auto.conf";
}

OriginalFile read_auto_conf(const fs::path& data_dir) {
  OriginalFile file;
  file.path = auto_conf_path(data_dir);
  struct stat st {};
  if (::stat(file.path.c_str(), &st) != 0) {
    if (errno != ENOENT)
      throw RuntimeError("cannot read " + file.path.string() + ": " + std::strerror(errno));
    // No file (a data directory made without one): the owner and mode of the folder apply.
    file.existed = false;
    if (::stat(data_dir.c_str(), &st) != 0)
      throw RuntimeError("cannot read the data directory " + data_dir.string() + ": " +
                         std::strerror(errno));
    file.mode = 0600;
  } else {
    file.bytes = read_file(file.path);
    file.mode = st.st_mode & 07777;
  }
  file.uid = st.st_uid;
  file.gid = st.st_gid;
  file.sha256 = sha256_hex(file.bytes);
  return file;
}

namespace {
[[noreturn]] void fail(const std::string& what, const fs::path& path, int err) {
  throw RuntimeError("cannot restore " + path.string() + ": " + what + ": " + std::strerror(err));
}

const std::string kTempPrefix = "postgresql.auto.conf.pgslow.";

// Copies left by a pgslow killed while it wrote one (the rename never happened).
void remove_stale_copies(const fs::path& dir) {
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    std::string name = entry.path().filename().string();
    if (name.rfind(kTempPrefix, 0) != 0) continue;
    int pid = std::atoi(name.c_str() + kTempPrefix.size());
    if (pid == ::getpid() || (pid > 0 && ::kill(pid, 0) == 0)) continue;
    fs::remove(entry.path(), ec);
  }
}

void fsync_dir(const fs::path& dir) {
  int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) fail("open the data directory", dir, errno);
  int rc = ::fsync(fd);
  int err = errno;
  ::close(fd);
  if (rc != 0) fail("fsync the data directory", dir, err);
}
}  // namespace

void write_auto_conf(const OriginalFile& original) {
  const fs::path& path = original.path;
  fs::path dir = path.parent_path();
  if (!original.existed) {
    if (::unlink(path.c_str()) != 0 && errno != ENOENT) fail("remove", path, errno);
    fsync_dir(dir);
    return;
  }
  remove_stale_copies(dir);
  // Not postgresql.auto.conf.tmp: that name is the server's own, for ALTER SYSTEM.
  fs::path tmp = dir / (kTempPrefix + std::to_string(::getpid()));
  int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (fd < 0) fail("create " + tmp.string(), path, errno);
  auto give_up = [&](const std::string& what) {
    int err = errno;
    ::close(fd);
    ::unlink(tmp.c_str());
    fail(what, path, err);
  };
  // Owner first, so the server's user can read the file from the moment it has its name.
  if (::fchown(fd, original.uid, original.gid) != 0 && original.uid != ::geteuid())
    give_up("give it to uid " + std::to_string(original.uid) +
            " (run pgslow as root or as the data directory's owner)");
  if (::fchmod(fd, original.mode) != 0) give_up("set its mode");
  const char* p = original.bytes.data();
  std::size_t left = original.bytes.size();
  while (left > 0) {
    ssize_t n = ::write(fd, p, left);
    if (n < 0) {
      if (errno == EINTR) continue;
      give_up("write");
    }
    p += n;
    left -= static_cast<std::size_t>(n);
  }
  if (::fsync(fd) != 0) give_up("fsync");
  ::close(fd);
  if (::rename(tmp.c_str(), path.c_str()) != 0) {
    int err = errno;
    ::unlink(tmp.c_str());
    fail("rename the new copy into place", path, err);
  }
  fsync_dir(dir);
}

bool auto_conf_matches(const OriginalFile& original) {
  OriginalFile now = read_auto_conf(original.path.parent_path());
  return now.existed == original.existed && now.bytes == original.bytes;
}

namespace {

bool is_name_char(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_' || c == '.' || c == '$';
}

// Parses one line the way PostgreSQL's configuration lexer reads ALTER SYSTEM's output:
// name [=] value, the value quoted ('' or \' for a quote, backslash escapes) or a bare word.
std::optional<AutoConfEntry> parse_line(const std::string& line) {
  std::size_t i = 0;
  auto skip_space = [&] {
    while (i < line.size() && std::isspace(static_cast<unsigned char>(line[i]))) ++i;
  };
  skip_space();
  if (i >= line.size() || line[i] == '#') return std::nullopt;
  std::size_t start = i;
  while (i < line.size() && is_name_char(line[i])) ++i;
  if (i == start) return std::nullopt;
  AutoConfEntry e;
  e.name = to_lower(line.substr(start, i - start));
  e.line = line;
  skip_space();
  if (i < line.size() && line[i] == '=') ++i;
  skip_space();
  if (i < line.size() && line[i] == '\'') {
    ++i;
    while (i < line.size()) {
      char c = line[i];
      if (c == '\'' && i + 1 < line.size() && line[i + 1] == '\'') {
        e.value += '\'';
        i += 2;
      } else if (c == '\'') {
        break;
      } else if (c == '\\' && i + 1 < line.size()) {
        char n = line[i + 1];
        e.value += n == 'n'   ? '\n'
                   : n == 't' ? '\t'
                   : n == 'r' ? '\r'
                   : n == 'b' ? '\b'
                   : n == 'f' ? '\f'
                              : n;
        i += 2;
      } else {
        e.value += c;
        ++i;
      }
    }
  } else {
    while (i < line.size() && !std::isspace(static_cast<unsigned char>(line[i])) && line[i] != '#')
      e.value += line[i++];
  }
  return e;
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> out;
  std::size_t start = 0;
  while (start < text.size()) {
    std::size_t nl = text.find('\n', start);
    if (nl == std::string::npos) nl = text.size();
    out.push_back(text.substr(start, nl - start));
    start = nl + 1;
  }
  return out;
}

}  // namespace

std::map<std::string, AutoConfEntry> parse_auto_conf(const std::string& text) {
  std::map<std::string, AutoConfEntry> out;
  for (const std::string& line : lines_of(text)) {
    if (std::optional<AutoConfEntry> e = parse_line(line)) out[e->name] = std::move(*e);
  }
  return out;
}

std::string merge_auto_conf(const std::string& current, const std::string& original,
                            const std::set<std::string>& names) {
  std::string out;
  for (const std::string& line : lines_of(current)) {
    std::optional<AutoConfEntry> e = parse_line(line);
    if (e && names.count(e->name)) continue;
    out += line + "\n";
  }
  for (const auto& [name, entry] : parse_auto_conf(original)) {
    if (names.count(name)) out += entry.line + "\n";
  }
  return out;
}

}  // namespace pgslow::apply
