#include "apply/auto_conf.h"

#include <fcntl.h>
#include <fmt/format.h>
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
#include "common/safe_fs.h"
#include "common/strings.h"

namespace pgslow::apply {

namespace fs = std::filesystem;

namespace {
const std::string kAutoConf = "postgresql.auto.conf";
}  // namespace

fs::path auto_conf_path(const fs::path& data_dir) {
  return data_dir / kAutoConf;
}

OriginalFile read_auto_conf(const fs::path& data_dir) {
  OriginalFile file;
  file.path = auto_conf_path(data_dir);
  // The data directory belongs to the server's user: reached without following a link of
  // theirs, and the file read without following one either (common/safe_fs.h).
  UniqueFd dir = open_folder(data_dir);
  UniqueFd fd = open_file_in(dir.get(), kAutoConf, O_RDONLY, file.path);
  struct stat st {};
  if (!fd) {
    // No file (a data directory made without one): the owner of the folder applies.
    file.existed = false;
    if (::fstat(dir.get(), &st) != 0)
      throw RuntimeError("cannot read the data directory " + data_dir.string() + ": " +
                         std::strerror(errno));
    file.mode = 0600;
  } else {
    if (::fstat(fd.get(), &st) != 0)
      throw RuntimeError("cannot read " + file.path.string() + ": " + std::strerror(errno));
    // The server's user can make it any size (or sparse and larger than the disk): never
    // read whole, so the journal holds the original in full or pgslow refuses.
    if (st.st_size > static_cast<off_t>(kMaxAutoConfBytes)) {
      throw RuntimeError(fmt::format(
          "pgslow refuses {}: it is {} bytes, more than the {} bytes (1 MiB) pgslow reads of "
          "postgresql.auto.conf, where ALTER SYSTEM writes one short line per setting. Find out "
          "what made it that large and put back the settings it should hold (as the server's "
          "user, or ALTER SYSTEM RESET), then run this again",
          file.path.string(), st.st_size, kMaxAutoConfBytes));
    }
    file.bytes = read_all(fd.get(), file.path, kMaxAutoConfBytes);
    file.mode = st.st_mode & 07777;
  }
  file.uid = st.st_uid;
  file.gid = st.st_gid;
  file.sha256 = sha256_hex(file.bytes);
  return file;
}

namespace {

// Not postgresql.auto.conf.tmp: that name is the server's own, for ALTER SYSTEM.
const std::string kTempPrefix = "postgresql.auto.conf.pgslow.";

// Copies left by a pgslow killed while it wrote one (the rename never happened). unlinkat
// removes a planted symlink itself, never what it points to.
void remove_stale_copies(int dir, const fs::path& data_dir) {
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(data_dir, ec)) {
    std::string name = entry.path().filename().string();
    if (name.rfind(kTempPrefix, 0) != 0) continue;
    int pid = std::atoi(name.c_str() + kTempPrefix.size());
    if (pid == ::getpid() || (pid > 0 && ::kill(pid, 0) == 0)) continue;
    remove_file_in(dir, name, data_dir / name);
  }
}

}  // namespace

void write_auto_conf(const OriginalFile& original) {
  const fs::path& path = original.path;
  fs::path data_dir = path.parent_path();
  UniqueFd dir = open_folder(data_dir);
  if (!original.existed) {
    remove_file_in(dir.get(), kAutoConf, path);
    fsync_folder(dir.get(), path);
    return;
  }
  remove_stale_copies(dir.get(), data_dir);
  replace_file_in(dir.get(), kAutoConf, original.bytes,
                  FileOwnership{original.uid, original.gid, original.mode}, path, kTempPrefix);
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
