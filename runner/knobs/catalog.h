#pragma once
// The knob catalog (knobs/<category>.yaml) and the presets (knobs/presets.yaml): data that
// workshops teach from, loaded with the location of every entry so problems point at a line.
// The format is documented in docs/knob-format.md.

#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/errors.h"
#include "common/yaml.h"

namespace pgslow::knobs {

// One parameter assignment, with where it was written.
struct Setting {
  std::string name;
  std::string value;
  SourceLocation where;
};

// Whether two configurations set the same parameters (names case-insensitively) to the same
// values, in any order; where each was written does not count.
bool same_settings(const std::vector<Setting>& a, const std::vector<Setting>& b);

struct Knob {
  std::string name, category;
  int since = 0;                  // first major version that has the parameter
  std::optional<int> until;       // first major version that no longer has it
  std::string healthy;            // the usual healthy value, for contrast
  std::vector<std::string> slow;  // slow levels, worst last
  std::string why;
  std::vector<std::string> watch;  // evidence keys (evidence_keys.h)
  // The axes the knob is known to move (`moves:`, else its category's; evidence_keys.h
  // kAxisKeys): a stage that changes it tests TPS and these first (results/summary.h).
  std::vector<std::string> moves;
  std::vector<std::string> pitfalls;
  std::string refs;
  // Knobs this one only acts together with (commit_siblings with commit_delay): attribution
  // measures and reports them as one unit, never split.
  std::vector<std::string> acts_with;
  // How long the knob's effect takes to settle after a reload (its carryover): it decides
  // whether a stage can switch back and forth within one run (docs/knob-format.md). Seconds,
  // or per_connection: the value stays with a connection's cached plans until it reconnects.
  double carryover_s = 0;
  bool carryover_per_connection = false;
  // Known per-version minimums/maximums ("15: 1MB, 17: 64kB"), for hints when a value is out
  // of the live server's range: the version is the first major version with that bound.
  std::map<int, std::string> min_by_version;
  std::map<int, std::string> max_by_version;
  SourceLocation where;

  // Whether the parameter exists in PostgreSQL `major`.
  bool exists_in(int major) const { return major >= since && (!until || major < *until); }
};

struct Preset {
  std::string name, description;
  std::vector<std::string> includes;  // applied first, in order
  std::vector<Setting> settings;
  // `pooler:`: settings of pgslow's PgBouncer (pool_mode, default_pool_size, ...), which a
  // scenario stage gives its clients' pooler instead of the server (docs/pooler.md); checked
  // against server/pooler.h's table when a scenario is planned.
  std::vector<Setting> pooler;
  SourceLocation where;
};

struct CategoryInfo {
  std::string name, description;
  std::vector<std::string> moves;  // what its knobs move unless a knob says otherwise
  SourceLocation where;
};

class Catalog {
 public:
  // Reads every knobs/*.yaml (presets.yaml holds the presets). Throws InputError carrying
  // every problem found in every file (warnings alone do not throw; see warnings()).
  static Catalog load(const std::filesystem::path& knobs_dir);
  // The catalog of the data folder (data_root()/knobs).
  static Catalog load_default();

  const Knob* find(std::string_view name) const;
  const Preset* find_preset(std::string_view name) const;
  // The preset's settings with its includes resolved in order (includes first, the preset's
  // own settings last; a later value of the same knob wins and keeps its location). Throws
  // InputError on an unknown include or a cycle.
  std::vector<Setting> expand(const Preset& preset) const;
  // The same for the presets' `pooler:` settings.
  std::vector<Setting> expand_pooler(const Preset& preset) const;
  // expand() for a command that changes the server only (`what`: "pgslow bisect"); a preset
  // with pooler settings is an InputError saying where they can be measured.
  std::vector<Setting> expand_for_server(const Preset& preset, std::string_view what) const;

  const std::vector<Knob>& knobs() const { return knobs_; }
  const std::vector<Preset>& presets() const { return presets_; }
  // Category names, in file-name order.
  std::vector<std::string> categories() const;
  const CategoryInfo* category(std::string_view name) const;
  std::vector<std::string> knob_names() const;
  // Non-fatal problems found while loading (e.g. a category name that differs from its file).
  const std::vector<ConfigError>& warnings() const { return warnings_; }

  // For tests and tools that build a catalog in memory.
  void add_knob(Knob knob) { knobs_.push_back(std::move(knob)); }
  void add_preset(Preset preset) { presets_.push_back(std::move(preset)); }

 private:
  void expand_into(const Preset& preset, std::vector<Setting> Preset::*part,
                   std::vector<Setting>& out, std::vector<std::string>& stack) const;
  std::vector<Knob> knobs_;
  std::vector<Preset> presets_;
  std::vector<CategoryInfo> categories_;
  std::vector<ConfigError> warnings_;
};

// Parses one category file's text (exposed for the fuzz target and tests). Problems are
// appended to `problems`; knobs with errors are left out.
std::vector<Knob> parse_category(std::string_view text, const std::string& file,
                                 std::vector<ConfigError>& problems, CategoryInfo* info = nullptr);
// Parses a presets file's text (`presets:` list).
std::vector<Preset> parse_presets(std::string_view text, const std::string& file,
                                  std::vector<ConfigError>& problems);

// A settings file the user writes: either a preset (`settings:` with optional `name`,
// `description`, `includes`) or a plain map of parameter: value. Includes name catalog
// presets and are expanded when a catalog is given. Throws InputError with every problem.
struct SettingsFile {
  std::string name;
  std::string description;
  std::vector<std::string> includes;
  std::vector<Setting> settings;  // the file's own settings
};
SettingsFile load_settings_file(const std::filesystem::path& path);
// Same from text (the fuzz target's entry point); problems are appended, never thrown.
SettingsFile parse_settings(std::string_view text, const std::string& file,
                            std::vector<ConfigError>& problems);
// `base` with `top` laid over it: a setting of `top` replaces the one of the same name
// (case-insensitive, as PostgreSQL compares names) in place, others are appended in order.
std::vector<Setting> overlay(std::vector<Setting> base, const std::vector<Setting>& top);

// A YAML map of `parameter: value` (a list value is joined with commas) with the location of
// each key; problems go to the reader. Shared by presets, settings files and scenarios.
std::vector<Setting> read_settings(yaml::Reader& r, const YAML::Node& node, std::string_view what);

// The file's settings with its includes expanded against `catalog` (includes first).
std::vector<Setting> resolve_settings(const SettingsFile& file, const Catalog& catalog);

}  // namespace pgslow::knobs
