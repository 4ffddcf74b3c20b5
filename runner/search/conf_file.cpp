#include "search/conf_file.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <fstream>
#include <map>
#include <sstream>

#include "common/safe_fs.h"
#include "common/strings.h"

namespace pgslow::search {
namespace {

namespace fs = std::filesystem;

// PostgreSQL refuses deeper nesting (CONF_FILE_MAX_DEPTH); it also ends an include cycle.
constexpr int kMaxDepth = 10;
constexpr std::uintmax_t kMaxFileBytes = 4 * 1024 * 1024;

bool is_name_start(char c) {
  return std::isalpha(static_cast<unsigned char>(c)) != 0 || c == '_';
}
bool is_name_char(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_' || c == '$' || c == '.';
}
// Characters of an unquoted value: identifiers, numbers with units and signs, paths.
bool is_unquoted_char(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_' || c == '-' || c == '+' ||
         c == '.' || c == ':' || c == '/';
}

class Reader {
 public:
  explicit Reader(std::vector<ConfigError>& problems) : problems_(problems) {}

  void parse(std::string_view text, const std::string& file, const fs::path& dir, int depth);
  void include_file(const fs::path& path, bool missing_ok, const SourceLocation& from, int depth);
  void include_dir(const fs::path& path, const SourceLocation& from, int depth);

  std::vector<knobs::Setting> settings;

 private:
  void error(const std::string& file, int line, int column, std::string message,
             std::string hint = {}) {
    problems_.push_back(
        {{file, line, column}, std::move(message), std::move(hint), ConfigError::Severity::kError});
  }
  std::vector<ConfigError>& problems_;
  std::vector<fs::path> stack_;  // files being read, for cycle messages
};

void Reader::include_file(const fs::path& path, bool missing_ok, const SourceLocation& from,
                          int depth) {
  std::error_code ec;
  if (!fs::exists(path, ec)) {
    if (missing_ok) return;  // include_if_exists: PostgreSQL only logs that it skipped it
    error(from.file, from.line, from.column,
          fmt::format("included file {} does not exist", path.string()),
          "include paths are relative to the including file's folder");
    return;
  }
  if (!fs::is_regular_file(path, ec)) {
    error(from.file, from.line, from.column, fmt::format("{} is not a regular file", path.string()),
          fs::is_directory(path, ec) ? "use include_dir for a folder" : "");
    return;
  }
  fs::path canonical = fs::weakly_canonical(path, ec);
  if (std::find(stack_.begin(), stack_.end(), canonical) != stack_.end() || depth > kMaxDepth) {
    std::vector<std::string> chain;
    for (const auto& p : stack_) chain.push_back(p.string());
    chain.push_back(canonical.string());
    error(from.file, from.line, from.column,
          depth > kMaxDepth ? fmt::format("includes nested deeper than {} levels", kMaxDepth)
                            : "include cycle: " + join(chain, " -> "),
          "remove the include that leads back");
    return;
  }
  if (fs::file_size(path, ec) > kMaxFileBytes) {
    error(path.string(), 0, 0, "file is larger than 4 MB: not a configuration file");
    return;
  }
  std::string text;
  try {
    // A configuration pgslow applies, often as root: only one no one else could have written.
    text = read_trusted_file(path, "the configuration file", "", kMaxFileBytes);
  } catch (const std::exception& e) {
    error(from.file, from.line, from.column, e.what());
    return;
  }
  stack_.push_back(canonical);
  parse(text, path.string(), path.parent_path(), depth);
  stack_.pop_back();
}

void Reader::include_dir(const fs::path& path, const SourceLocation& from, int depth) {
  std::error_code ec;
  if (!fs::is_directory(path, ec)) {
    error(from.file, from.line, from.column,
          fmt::format("included folder {} does not exist", path.string()),
          "include_dir paths are relative to the including file's folder");
    return;
  }
  // PostgreSQL reads the folder's *.conf files, skipping hidden ones, in file-name order.
  std::vector<fs::path> files;
  for (const auto& entry : fs::directory_iterator(path, ec)) {
    std::string name = entry.path().filename().string();
    if (!name.empty() && name[0] != '.' && entry.path().extension() == ".conf" &&
        entry.is_regular_file(ec))
      files.push_back(entry.path());
  }
  std::sort(files.begin(), files.end(),
            [](const fs::path& a, const fs::path& b) { return a.filename() < b.filename(); });
  for (const auto& f : files) include_file(f, false, from, depth + 1);
}

// A quoted value from line[i], just past its opening quote: '' is a quote; backslash escapes as
// GUC_scanstr reads them. False when the line ends before the closing quote.
bool read_quoted(std::string_view line, std::size_t& i, std::string& value) {
  bool closed = false;
  while (i < line.size()) {
    char c = line[i];
    if (c == '\'') {
      if (i + 1 < line.size() && line[i + 1] == '\'') {
        value += '\'';
        i += 2;
        continue;
      }
      ++i;
      closed = true;
      break;
    }
    if (c == '\\' && i + 1 < line.size()) {
      char e = line[i + 1];
      i += 2;
      switch (e) {
        case 'b':
          value += '\b';
          break;
        case 'f':
          value += '\f';
          break;
        case 'n':
          value += '\n';
          break;
        case 'r':
          value += '\r';
          break;
        case 't':
          value += '\t';
          break;
        default:
          if (e >= '0' && e <= '7') {
            int octal = e - '0';
            for (int k = 0; k < 2 && i < line.size() && line[i] >= '0' && line[i] <= '7'; ++k)
              octal = octal * 8 + (line[i++] - '0');
            value += static_cast<char>(octal);
          } else {
            value += e;
          }
      }
      continue;
    }
    value += c;
    ++i;
  }
  return closed;
}

void Reader::parse(std::string_view text, const std::string& file, const fs::path& dir, int depth) {
  if (text.find('\0') != std::string_view::npos) {
    error(file, 0, 0, "file contains a NUL byte: this is a binary file, not postgresql.conf");
    return;
  }
  int line_no = 0;
  std::size_t pos = 0;
  while (pos <= text.size()) {
    std::size_t end = text.find('\n', pos);
    if (end == std::string_view::npos) end = text.size();
    std::string_view line = text.substr(pos, end - pos);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    ++line_no;
    pos = end + 1;

    std::size_t i = 0;
    auto col = [&] { return static_cast<int>(i) + 1; };
    auto skip_space = [&] {
      while (i < line.size() && (line[i] == ' ' || line[i] == '\t' || line[i] == '\f')) ++i;
    };
    skip_space();
    if (i == line.size() || line[i] == '#') continue;
    if (!is_name_start(line[i])) {
      error(file, line_no, col(), fmt::format("expected a parameter name, found '{}'", line[i]),
            "a line is `name = value`, or a comment starting with #");
      continue;
    }
    std::size_t name_start = i;
    while (i < line.size() && is_name_char(line[i])) ++i;
    std::string name = to_lower(line.substr(name_start, i - name_start));
    SourceLocation where{file, line_no, static_cast<int>(name_start) + 1};
    skip_space();
    if (i < line.size() && line[i] == '=') ++i;
    skip_space();
    int value_col = col();
    std::string value;
    if (i < line.size() && line[i] == '\'') {
      // Quoted: '' is a quote; backslash escapes as GUC_scanstr reads them.
      ++i;
      const bool closed = read_quoted(line, i, value);
      if (!closed) {
        error(file, line_no, value_col, fmt::format("unterminated quoted value of {}", name),
              "close the value with ' on the same line; write '' for a quote inside it");
        continue;
      }
    } else {
      std::size_t value_start = i;
      while (i < line.size() && is_unquoted_char(line[i])) ++i;
      value = std::string(line.substr(value_start, i - value_start));
      if (value.empty()) {
        error(file, line_no, value_col,
              i < line.size() ? fmt::format("unexpected '{}' in the value of {}", line[i], name)
                              : fmt::format("missing value for {}", name),
              "write `name = value`; quote values with spaces or symbols: '...'");
        continue;
      }
    }
    skip_space();
    if (i < line.size() && line[i] != '#') {
      error(file, line_no, col(),
            fmt::format("unexpected text after the value of {}: '{}'", name,
                        std::string(line.substr(i))),
            "quote a value that contains spaces: name = '...'");
      continue;
    }

    if (name == "include" || name == "include_if_exists" || name == "include_dir") {
      if (value.empty()) {
        error(file, line_no, value_col, fmt::format("{} needs a file name", name));
        continue;
      }
      fs::path target = value;
      if (target.is_relative()) target = dir / target;
      if (name == "include_dir")
        include_dir(target, where, depth);
      else
        include_file(target, name == "include_if_exists", where, depth + 1);
      continue;
    }
    settings.push_back({name, value, where});
  }
}

// Later settings win; keep each parameter once, where it was last written.
std::vector<knobs::Setting> last_wins(const std::vector<knobs::Setting>& all) {
  std::map<std::string, std::size_t> last;
  for (std::size_t i = 0; i < all.size(); ++i) last[all[i].name] = i;
  std::vector<knobs::Setting> out;
  for (std::size_t i = 0; i < all.size(); ++i)
    if (last[all[i].name] == i) out.push_back(all[i]);
  return out;
}

}  // namespace

std::vector<knobs::Setting> parse_conf(std::string_view text, const std::string& file,
                                       const fs::path& dir, std::vector<ConfigError>& problems) {
  Reader reader(problems);
  reader.parse(text, file, dir, 0);
  return last_wins(reader.settings);
}

std::vector<knobs::Setting> load_conf_file(const fs::path& path) {
  std::error_code ec;
  if (!fs::exists(path, ec)) {
    // Built step by step: GCC 12 at -O3 warns (maybe-uninitialized) on the nested braces.
    ConfigError missing;
    missing.where = SourceLocation{path.string(), 0, 0};
    missing.message = "file does not exist";
    missing.hint = "give a preset name, a settings YAML file or a postgresql.conf file";
    throw InputError(std::vector<ConfigError>{missing});
  }
  std::vector<ConfigError> problems;
  Reader reader(problems);
  reader.include_file(path, false, SourceLocation{path.string(), 0, 0}, 0);
  if (has_errors(problems)) throw InputError(problems);
  return last_wins(reader.settings);
}

bool looks_like_conf_file(const fs::path& path) {
  std::string ext = to_lower(path.extension().string());
  if (ext == ".conf") return true;
  if (ext == ".yaml" || ext == ".yml") return false;
  // No telling extension: YAML maps say `name: value`, postgresql.conf says `name = value`.
  // A file that cannot be read here is refused with its reason by the reader it goes to.
  std::istringstream in;
  try {
    in.str(read_trusted_file(path, "the configuration file", "", kMaxFileBytes));
  } catch (const std::exception&) {
    return false;
  }
  std::string line;
  while (std::getline(in, line)) {
    std::string t = trim(line);
    if (t.empty() || t[0] == '#') continue;
    return t.find('=') != std::string::npos && t.find(':') > t.find('=');
  }
  return false;
}

}  // namespace pgslow::search
