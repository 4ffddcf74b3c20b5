#pragma once
// The one place pgslow reads YAML (knob catalog, presets, settings files, scenarios, bisect).
//
// yaml-cpp throws on malformed input, accepts duplicate keys silently, and throws again when a
// node has the wrong shape. Users' files deserve better: every problem becomes a ConfigError
// with file:line:column (1-based) and a hint, all problems are collected, nothing crashes.
//
//   yaml::Reader r("scenario.yaml");
//   auto root = r.load_file(path);                       // nullopt: problems say why
//   if (root) {
//     yaml::Fields f = r.fields(*root, "scenario", {"name", "stages"});  // unknown/duplicate keys
//     auto name = r.string(f.get("name"), "name", /*required=*/true);
//   }
//   r.throw_if_errors();                                  // InputError with every problem

#include <yaml-cpp/yaml.h>

#include <cstddef>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/errors.h"

namespace pgslow::yaml {

// Files larger than this are refused before parsing: no knob, preset or scenario file is
// anywhere near it, and parsing a huge document costs memory and time for nothing.
inline constexpr std::size_t kMaxFileBytes = 1024 * 1024;
// Deeper nesting than this is refused: yaml-cpp recurses per level.
inline constexpr int kMaxDepth = 64;
// A document with more nodes than this is refused (aliases can make a small file huge).
inline constexpr std::size_t kMaxNodes = 200000;

// Why text is not acceptable as YAML input (NUL bytes, invalid UTF-8), or nullopt when it is.
// `where` receives the 1-based line and column of the first bad byte.
std::optional<std::string> text_problem(std::string_view text, SourceLocation& where);

// A map's entries by key, after duplicate and unknown keys were reported.
class Fields {
 public:
  // The value of `key`, or an undefined node (`!node`) when absent.
  YAML::Node get(std::string_view key) const;
  bool has(std::string_view key) const { return get(key).IsDefined(); }
  // Entries in file order (first occurrence of each key).
  const std::vector<std::pair<std::string, YAML::Node>>& entries() const { return entries_; }
  // The node of the key itself (for "unknown setting" errors pointing at the key).
  YAML::Node key_node(std::string_view key) const;

 private:
  friend class Reader;
  std::vector<std::pair<std::string, YAML::Node>> entries_;
  std::vector<YAML::Node> keys_;
};

class Reader {
 public:
  // `file` names the input in every message (a path, or "<string>").
  explicit Reader(std::string file) : file_(std::move(file)) {}

  const std::string& file() const { return file_; }

  // Reads and parses a file: refuses a missing file, a non-regular file, a file over
  // `max_bytes`, a binary file, an empty document. nullopt when it was refused.
  std::optional<YAML::Node> load_file(const std::filesystem::path& path,
                                      std::size_t max_bytes = kMaxFileBytes);
  // Parses text (same checks except the file ones).
  std::optional<YAML::Node> load_string(std::string_view text,
                                        std::size_t max_bytes = kMaxFileBytes);

  // 1-based location of a node in this reader's file (line 0 when unknown).
  SourceLocation where(const YAML::Node& node) const;

  void error(const YAML::Node& node, std::string message, std::string hint = {});
  void warning(const YAML::Node& node, std::string message, std::string hint = {});
  void add(ConfigError problem) { problems_.push_back(std::move(problem)); }

  // A map's fields. Reports (and then ignores) duplicate keys, non-scalar keys, and keys not
  // in `allowed` (with "did you mean"); an empty `allowed` accepts any key. When `node` is not
  // a map, reports "`what` must be a map" and returns no fields.
  Fields fields(const YAML::Node& node, std::string_view what,
                const std::vector<std::string>& allowed = {});

  // Typed getters: nullopt (and, when the node is present or `required`, an error naming
  // `what`) instead of yaml-cpp exceptions. An absent node is fine unless `required`.
  std::optional<std::string> string(const YAML::Node& node, std::string_view what,
                                    bool required = false, const YAML::Node& parent = {});
  std::optional<long long> integer(const YAML::Node& node, std::string_view what,
                                   bool required = false, const YAML::Node& parent = {});
  std::optional<double> number(const YAML::Node& node, std::string_view what, bool required = false,
                               const YAML::Node& parent = {});
  std::optional<bool> boolean(const YAML::Node& node, std::string_view what, bool required = false,
                              const YAML::Node& parent = {});
  // A duration: a YAML number (seconds) or a string with a unit ("500ms", "10s", "2min"); an
  // error naming `what` otherwise.
  std::optional<double> duration(const YAML::Node& node, std::string_view what);
  // A list of scalars; a single scalar is accepted as a list of one.
  std::optional<std::vector<std::string>> string_list(const YAML::Node& node, std::string_view what,
                                                      bool required = false,
                                                      const YAML::Node& parent = {});
  // A sequence node (reports an error when present but not a sequence).
  bool is_sequence(const YAML::Node& node, std::string_view what);

  const std::vector<ConfigError>& problems() const { return problems_; }
  std::vector<ConfigError> take_problems() { return std::move(problems_); }
  bool ok() const { return !has_errors(problems_); }
  // Throws InputError carrying every problem when any is an error.
  void throw_if_errors() const;

 private:
  bool check_absent(const YAML::Node& node, std::string_view what, bool required,
                    const YAML::Node& parent);
  bool check_shape(const YAML::Node& root);
  std::string file_;
  std::vector<ConfigError> problems_;
};

// Text quoted for an error message: control characters escaped (\n, \x00), cut after
// `max_chars` with "...", so a hostile value cannot garble the terminal or flood it.
std::string printable(std::string_view text, std::size_t max_chars = 60);

// "a map", "a list", "a value", "nothing" for messages about the wrong shape.
std::string describe_kind(const YAML::Node& node);

}  // namespace pgslow::yaml
