#include "common/yaml.h"

#include <fmt/format.h>
#include <yaml-cpp/eventhandler.h>
#include <yaml-cpp/parser.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <sstream>
#include <system_error>

#include "common/format.h"
#include "common/paths.h"
#include "common/safe_fs.h"
#include "common/strings.h"

namespace fs = std::filesystem;

namespace pgslow::yaml {

namespace {

SourceLocation location_of_offset(std::string_view text, std::size_t offset) {
  SourceLocation loc;
  loc.line = 1;
  loc.column = 1;
  for (std::size_t i = 0; i < offset && i < text.size(); ++i) {
    if (text[i] == '\n') {
      ++loc.line;
      loc.column = 1;
    } else {
      ++loc.column;
    }
  }
  return loc;
}

bool is_blank_document(std::string_view text) {
  // Only whitespace and comments: YAML parses it as nothing at all.
  bool in_comment = false;
  for (char c : text) {
    if (in_comment) {
      if (c == '\n') in_comment = false;
      continue;
    }
    if (c == '#') {
      in_comment = true;
    } else if (c != ' ' && c != '\t' && c != '\n' && c != '\r') {
      return false;
    }
  }
  return true;
}

// Counts documents and remembers where the second one starts; ignores everything else.
class DocumentCounter final : public YAML::EventHandler {
 public:
  int documents = 0;
  YAML::Mark second_start;
  void OnDocumentStart(const YAML::Mark& mark) override {
    if (++documents == 2) second_start = mark;
  }
  void OnDocumentEnd() override {}
  void OnNull(const YAML::Mark&, YAML::anchor_t) override {}
  void OnAlias(const YAML::Mark&, YAML::anchor_t) override {}
  void OnScalar(const YAML::Mark&, const std::string&, YAML::anchor_t,
                const std::string&) override {}
  void OnSequenceStart(const YAML::Mark&, const std::string&, YAML::anchor_t,
                       YAML::EmitterStyle::value) override {}
  void OnSequenceEnd() override {}
  void OnMapStart(const YAML::Mark&, const std::string&, YAML::anchor_t,
                  YAML::EmitterStyle::value) override {}
  void OnMapEnd() override {}
};

// yaml-cpp 0.7 loops forever (allocating) when a document's root node starts with ','
// ("--- ,", ",x", "&a ,", "&a,"): found by the fuzz target. Such text is never valid YAML, so it is
// refused before yaml-cpp sees it. Returns the location of the ','.
std::optional<SourceLocation> comma_at_document_root(std::string_view text) {
  bool expect_root = true;
  int line_no = 0;
  std::size_t start = 0;
  while (start <= text.size()) {
    std::size_t end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    std::string_view line = text.substr(start, end - start);
    ++line_no;
    std::size_t i = 0;
    if (line.substr(0, 3) == "---" || line.substr(0, 3) == "...") {
      expect_root = true;
      i = 3;
    } else if (expect_root && !line.empty() && line[0] == '%') {
      i = line.size();  // a directive line
    }
    while (expect_root && i < line.size()) {
      const char c = line[i];
      if (c == ' ' || c == '\t' || c == '\r') {
        ++i;
      } else if (c == '#') {
        break;
      } else if (c == '!' || c == '&') {  // a tag or an anchor before the node
        // Their names end at blanks and at flow indicators ("&a," is the anchor "a", then ',').
        while (i < line.size() && line[i] != ' ' && line[i] != '\t' && line[i] != ',') ++i;
      } else if (c == ',') {
        SourceLocation loc;
        loc.line = line_no;
        loc.column = static_cast<int>(i) + 1;
        return loc;
      } else {
        expect_root = false;
      }
    }
    if (end == text.size()) break;
    start = end + 1;
  }
  return std::nullopt;
}

}  // namespace

std::optional<std::string> text_problem(std::string_view text, SourceLocation& where) {
  for (std::size_t i = 0; i < text.size();) {
    const char c = text[i];
    if (c == '\0') {
      where = location_of_offset(text, i);
      return std::string("file contains a NUL byte: this is a binary file, not YAML");
    }
    std::size_t len = utf8_sequence_length(text, i);
    if (len == 0) {
      where = location_of_offset(text, i);
      return fmt::format("file is not valid UTF-8 (byte 0x{:02X}): this looks like a binary file",
                         static_cast<unsigned char>(c));
    }
    i += len;
  }
  return std::nullopt;
}

YAML::Node Fields::get(std::string_view key) const {
  for (const auto& [k, v] : entries_) {
    if (k == key) return v;
  }
  return YAML::Node(YAML::NodeType::Undefined);
}

YAML::Node Fields::key_node(std::string_view key) const {
  for (std::size_t i = 0; i < entries_.size(); ++i) {
    if (entries_[i].first == key) return keys_[i];
  }
  return YAML::Node(YAML::NodeType::Undefined);
}

std::string printable(std::string_view text, std::size_t max_chars) {
  std::string out = "'";
  std::size_t shown = 0;
  for (char c : text) {
    if (shown >= max_chars) {
      out += "...";
      break;
    }
    const auto u = static_cast<unsigned char>(c);
    if (c == '\n') {
      out += "\\n";
    } else if (c == '\r') {
      out += "\\r";
    } else if (c == '\t') {
      out += "\\t";
    } else if (u < 0x20 || u == 0x7F) {
      out += fmt::format("\\x{:02X}", u);
    } else {
      out += c;
    }
    ++shown;
  }
  out += "'";
  return out;
}

std::string describe_kind(const YAML::Node& node) {
  if (!node.IsDefined()) return "nothing";
  switch (node.Type()) {
    case YAML::NodeType::Map:
      return "a map";
    case YAML::NodeType::Sequence:
      return "a list";
    case YAML::NodeType::Scalar:
      return "the value " + printable(node.Scalar());
    case YAML::NodeType::Null:
      return "an empty value";
    default:
      return "nothing";
  }
}

SourceLocation Reader::where(const YAML::Node& node) const {
  SourceLocation loc;
  loc.file = file_;
  if (node.IsDefined()) {
    const YAML::Mark m = node.Mark();
    if (!m.is_null() && m.line >= 0) {
      loc.line = m.line + 1;
      loc.column = m.column + 1;
    }
  }
  return loc;
}

void Reader::error(const YAML::Node& node, std::string message, std::string hint) {
  problems_.push_back(
      ConfigError{where(node), std::move(message), std::move(hint), ConfigError::Severity::kError});
}

void Reader::warning(const YAML::Node& node, std::string message, std::string hint) {
  problems_.push_back(ConfigError{where(node), std::move(message), std::move(hint),
                                  ConfigError::Severity::kWarning});
}

void Reader::throw_if_errors() const {
  if (has_errors(problems_)) throw InputError(problems_);
}

std::optional<YAML::Node> Reader::load_file(const fs::path& path, std::size_t max_bytes) {
  SourceLocation loc;
  loc.file = file_;
  std::error_code ec;
  const auto status = fs::status(path, ec);
  if (ec || !fs::exists(status)) {
    add({loc, "file not found", "check the path", ConfigError::Severity::kError});
    return std::nullopt;
  }
  if (!fs::is_regular_file(status)) {
    // A FIFO or device would block or never end; a directory is not a file.
    add({loc, "not a regular file", "give the path of a .yaml file",
         ConfigError::Severity::kError});
    return std::nullopt;
  }
  const auto size = fs::file_size(path, ec);
  if (ec) {
    add({loc, "cannot read the file: " + ec.message(), "", ConfigError::Severity::kError});
    return std::nullopt;
  }
  if (size > max_bytes) {
    add({loc,
         fmt::format("file is too large ({}; the limit is {})", format_size(double(size)),
                     format_size(double(max_bytes))),
         "knob, preset and scenario files are a few kB; is this the right file?",
         ConfigError::Severity::kError});
    return std::nullopt;
  }
  std::string text;
  try {
    // Knob, preset, scenario and lesson files steer what pgslow runs, often as root: only one
    // no one else could have written is read (safe_fs.h).
    text = read_trusted_file(path, "the file", "", max_bytes);
  } catch (const std::exception& e) {
    add({loc, e.what(), "", ConfigError::Severity::kError});
    return std::nullopt;
  }
  return load_string(text, max_bytes);
}

std::optional<YAML::Node> Reader::load_string(std::string_view text, std::size_t max_bytes) {
  SourceLocation loc;
  loc.file = file_;
  if (text.size() > max_bytes) {
    add({loc,
         fmt::format("input is too large ({}; the limit is {})", format_size(double(text.size())),
                     format_size(double(max_bytes))),
         "", ConfigError::Severity::kError});
    return std::nullopt;
  }
  SourceLocation bad;
  if (auto why = text_problem(text, bad)) {
    bad.file = file_;
    add({bad, *why, "pgslow reads YAML text files in UTF-8", ConfigError::Severity::kError});
    return std::nullopt;
  }
  if (is_blank_document(text)) {
    add({loc, "file is empty", "a YAML map is expected here", ConfigError::Severity::kError});
    return std::nullopt;
  }
  if (auto comma = comma_at_document_root(text)) {
    comma->file = file_;
    add({*comma, "malformed YAML: a document cannot start with ','",
         "a ',' separates items inside [ ] or { }", ConfigError::Severity::kError});
    return std::nullopt;
  }
  YAML::Node root;
  try {
    // Never YAML::LoadAll: on some malformed input (a stray ',' where a document starts) it
    // loops forever, because the parser reports a document without consuming a token (yaml-cpp
    // issue 1040, fixed after 0.7 by PR 1319). Parse at most two documents instead.
    const std::string owned(text);
    std::istringstream in(owned);
    YAML::Parser parser(in);
    DocumentCounter counter;
    parser.HandleNextDocument(counter);
    if (parser.HandleNextDocument(counter) && counter.documents > 1) {
      SourceLocation at = loc;
      at.line = counter.second_start.line + 1;
      at.column = counter.second_start.column + 1;
      add({at, "more than one YAML document in the file",
           "remove the second '---' document or split the file", ConfigError::Severity::kError});
      return std::nullopt;
    }
    root = YAML::Load(owned);
  } catch (const YAML::Exception& e) {
    SourceLocation at = loc;
    if (!e.mark.is_null() && e.mark.line >= 0) {
      at.line = e.mark.line + 1;
      at.column = e.mark.column + 1;
    }
    add({at, "malformed YAML: " + e.msg, "check indentation, quotes and brackets near here",
         ConfigError::Severity::kError});
    return std::nullopt;
  } catch (const std::exception& e) {
    add({loc, std::string("malformed YAML: ") + e.what(), "", ConfigError::Severity::kError});
    return std::nullopt;
  }
  if (root.IsNull() || !root.IsDefined()) {
    add({loc, "file is empty", "a YAML map is expected here", ConfigError::Severity::kError});
    return std::nullopt;
  }
  if (!check_shape(root)) return std::nullopt;
  return root;
}

// Refuses documents too deep or too large to walk safely (aliases share nodes, so a small
// file can describe an exponentially large tree).
bool Reader::check_shape(const YAML::Node& root) {
  std::size_t nodes = 0;
  struct Walker {
    Reader& reader;
    std::size_t& nodes;
    bool operator()(const YAML::Node& n, int depth) {
      if (++nodes > kMaxNodes) {
        reader.error(n, fmt::format("document is too large (more than {} values)", kMaxNodes),
                     "aliases (*name) may repeat a big block; write the values out");
        return false;
      }
      if (depth > kMaxDepth) {
        reader.error(n,
                     fmt::format("document is nested too deeply (more than {} levels)", kMaxDepth));
        return false;
      }
      if (n.IsMap()) {
        for (auto it = n.begin(); it != n.end(); ++it) {
          if (!(*this)(it->first, depth + 1) || !(*this)(it->second, depth + 1)) return false;
        }
      } else if (n.IsSequence()) {
        for (auto it = n.begin(); it != n.end(); ++it) {
          if (!(*this)(*it, depth + 1)) return false;
        }
      }
      return true;
    }
  };
  Walker walk{*this, nodes};
  return walk(root, 0);
}

Fields Reader::fields(const YAML::Node& node, std::string_view what,
                      const std::vector<std::string>& allowed) {
  Fields out;
  if (!node.IsDefined()) return out;
  if (!node.IsMap()) {
    error(node,
          fmt::format("{} must be a map (key: value lines), not {}", what, describe_kind(node)));
    return out;
  }
  for (auto it = node.begin(); it != node.end(); ++it) {
    const YAML::Node key = it->first;
    if (!key.IsScalar()) {
      error(key, fmt::format("a key in {} must be a plain name, not {}", what, describe_kind(key)));
      continue;
    }
    const std::string name = key.Scalar();
    if (out.key_node(name).IsDefined()) {
      const SourceLocation first = where(out.key_node(name));
      error(key, fmt::format("duplicate key '{}' in {}", name, what),
            fmt::format("first given at line {}; keep one", first.line));
      continue;
    }
    if (!allowed.empty() && std::find(allowed.begin(), allowed.end(), name) == allowed.end()) {
      std::string hint;
      if (auto near = closest_match(name, allowed)) {
        hint = fmt::format("did you mean '{}'?", *near);
      } else {
        hint = "known fields: " + join(allowed, ", ");
      }
      error(key, fmt::format("unknown field '{}' in {}", name, what), hint);
      continue;
    }
    out.entries_.emplace_back(name, it->second);
    out.keys_.push_back(key);
  }
  return out;
}

bool Reader::check_absent(const YAML::Node& node, std::string_view what, bool required,
                          const YAML::Node& parent) {
  if (node.IsDefined() && !node.IsNull()) return false;
  if (required) {
    const YAML::Node& at = node.IsDefined() ? node : parent;
    error(at,
          fmt::format("'{}' is required{}", what, node.IsDefined() ? " and may not be empty" : ""));
  }
  return true;
}

std::optional<std::string> Reader::string(const YAML::Node& node, std::string_view what,
                                          bool required, const YAML::Node& parent) {
  if (check_absent(node, what, required, parent)) return std::nullopt;
  if (!node.IsScalar()) {
    error(node, fmt::format("'{}' must be a single value, not {}", what, describe_kind(node)));
    return std::nullopt;
  }
  return node.Scalar();
}

std::optional<long long> Reader::integer(const YAML::Node& node, std::string_view what,
                                         bool required, const YAML::Node& parent) {
  auto text = string(node, what, required, parent);
  if (!text) return std::nullopt;
  long long value = 0;
  const std::string t = trim(*text);
  const char* begin = t.data();
  if (!t.empty() && t[0] == '+') ++begin;
  auto [ptr, ec] = std::from_chars(begin, t.data() + t.size(), value);
  if (t.empty() || ec != std::errc() || ptr != t.data() + t.size()) {
    error(node, fmt::format("'{}' must be a whole number, not '{}'", what, *text));
    return std::nullopt;
  }
  return value;
}

std::optional<double> Reader::duration(const YAML::Node& node, std::string_view what) {
  auto text = string(node, what);
  if (!text) return std::nullopt;
  auto seconds = parse_duration(*text);
  if (!seconds) {
    error(node, fmt::format("{} = {} is not a duration", what, printable(*text)),
          "write e.g. 500ms, 10s, 2min or a number of seconds");
  }
  return seconds;
}

std::optional<double> Reader::number(const YAML::Node& node, std::string_view what, bool required,
                                     const YAML::Node& parent) {
  auto text = string(node, what, required, parent);
  if (!text) return std::nullopt;
  const std::string t = trim(*text);
  errno = 0;
  char* end = nullptr;
  const double value = std::strtod(t.c_str(), &end);
  if (t.empty() || end != t.c_str() + t.size() || errno == ERANGE || !std::isfinite(value)) {
    error(node, fmt::format("'{}' must be a number, not '{}'", what, *text));
    return std::nullopt;
  }
  return value;
}

std::optional<bool> Reader::boolean(const YAML::Node& node, std::string_view what, bool required,
                                    const YAML::Node& parent) {
  auto text = string(node, what, required, parent);
  if (!text) return std::nullopt;
  const std::string t = to_lower(trim(*text));
  if (t == "true" || t == "yes" || t == "on") return true;
  if (t == "false" || t == "no" || t == "off") return false;
  error(node, fmt::format("'{}' must be true or false, not '{}'", what, *text));
  return std::nullopt;
}

std::optional<std::vector<std::string>> Reader::string_list(const YAML::Node& node,
                                                            std::string_view what, bool required,
                                                            const YAML::Node& parent) {
  if (check_absent(node, what, required, parent)) return std::nullopt;
  std::vector<std::string> out;
  if (node.IsScalar()) {
    out.push_back(node.Scalar());
    return out;
  }
  if (!node.IsSequence()) {
    error(node, fmt::format("'{}' must be a list of values, not {}", what, describe_kind(node)));
    return std::nullopt;
  }
  bool ok = true;
  for (auto it = node.begin(); it != node.end(); ++it) {
    const YAML::Node item = *it;
    if (!item.IsScalar()) {
      error(item, fmt::format("each item of '{}' must be a single value, not {}", what,
                              describe_kind(item)));
      ok = false;
      continue;
    }
    out.push_back(item.Scalar());
  }
  if (!ok) return std::nullopt;
  return out;
}

bool Reader::is_sequence(const YAML::Node& node, std::string_view what) {
  if (!node.IsDefined() || node.IsNull()) return false;
  if (!node.IsSequence()) {
    error(node, fmt::format("'{}' must be a list (lines starting with '- '), not {}", what,
                            describe_kind(node)));
    return false;
  }
  return true;
}

}  // namespace pgslow::yaml
