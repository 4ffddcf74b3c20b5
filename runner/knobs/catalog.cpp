#include "knobs/catalog.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <set>

#include "common/paths.h"
#include "common/strings.h"
#include "common/yaml.h"
#include "knobs/evidence_keys.h"
#include "knobs/value.h"

namespace fs = std::filesystem;

namespace pgslow::knobs {

namespace {

const std::vector<std::string> kFileFields = {"category", "description", "moves", "knobs",
                                              "presets"};
const std::vector<std::string> kKnobFields = {
    "name",     "since", "until",          "healthy",        "slow",      "why",       "watch",
    "pitfalls", "refs",  "min_by_version", "max_by_version", "acts_with", "carryover", "moves"};
const std::vector<std::string> kPresetFields = {"name", "description", "includes", "settings"};
// A preset of the catalog may also give pgslow's PgBouncer settings (Preset::pooler).
const std::vector<std::string> kCatalogPresetFields = {"name", "description", "includes",
                                                       "settings", "pooler"};

// Oldest and newest major versions a catalog entry may name (9 stands for "anything old").
constexpr long long kOldestMajor = 9;
constexpr long long kNewestMajor = 99;

bool valid_preset_name(std::string_view name) {
  if (name.empty() || name.size() > 63) return false;
  for (char c : name) {
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_')) return false;
  }
  return true;
}

std::optional<int> read_version(yaml::Reader& r, const YAML::Node& node, std::string_view what,
                                bool required, const YAML::Node& parent) {
  auto v = r.integer(node, what, required, parent);
  if (!v) return std::nullopt;
  if (*v < kOldestMajor || *v > kNewestMajor) {
    r.error(node, fmt::format("'{}' must be a PostgreSQL major version, not {}", what, *v),
            "e.g. 13, 17 (9 for anything older than 10)");
    return std::nullopt;
  }
  return static_cast<int>(*v);
}

std::map<int, std::string> read_by_version(yaml::Reader& r, const YAML::Node& node,
                                           std::string_view what) {
  std::map<int, std::string> out;
  yaml::Fields f = r.fields(node, what);
  for (const auto& [key, value] : f.entries()) {
    YAML::Node key_node = f.key_node(key);
    auto major = read_version(r, key_node, fmt::format("a version in {}", what), false, node);
    auto text = r.string(value, fmt::format("{}[{}]", what, key), true, key_node);
    if (major && text) out[*major] = *text;
  }
  return out;
}

// A setting's value: a scalar as written, or a list of scalars joined with commas
// (log_destination: [stderr, jsonlog]).
std::optional<std::string> setting_value(yaml::Reader& r, const YAML::Node& node,
                                         const std::string& name, const YAML::Node& key) {
  if (!node.IsDefined() || node.IsNull()) {
    r.error(key, fmt::format("'{}' has no value", name),
            "write the value after the colon, e.g. shared_buffers: 8MB");
    return std::nullopt;
  }
  std::string value;
  if (node.IsSequence()) {
    auto items = r.string_list(node, name);
    if (!items) return std::nullopt;
    value = join(*items, ",");
  } else if (node.IsScalar()) {
    value = node.Scalar();
  } else {
    r.error(node, fmt::format("the value of '{}' must be a single value, not {}", name,
                              yaml::describe_kind(node)));
    return std::nullopt;
  }
  if (auto bad = unsafe_value_problem(value)) {
    r.error(node, fmt::format("the value of '{}' {}", name, *bad),
            "PostgreSQL parameter values are one line of text; remove the control characters");
    return std::nullopt;
  }
  return value;
}

}  // namespace

std::vector<Setting> read_settings(yaml::Reader& r, const YAML::Node& node, std::string_view what) {
  std::vector<Setting> out;
  yaml::Fields f = r.fields(node, what);
  for (const auto& [name, value] : f.entries()) {
    YAML::Node key = f.key_node(name);
    if (!is_valid_parameter_name(name)) {
      r.error(key, fmt::format("{} is not a parameter name", yaml::printable(name)),
              "parameter names are letters, digits, underscores and at most one dot");
      continue;
    }
    if (auto v = setting_value(r, value, name, key)) {
      out.push_back(Setting{name, *v, r.where(key)});
    }
  }
  return out;
}

namespace {

// Each entry of the list under `field` is one of `allowed`; an error at the entry otherwise,
// with the nearest name (`what`: "an evidence key"; `listed`: where the names are listed).
void check_names(yaml::Reader& r, yaml::Fields& f, const char* field,
                 const std::vector<std::string>& entries, const std::vector<std::string>& allowed,
                 std::string_view what, std::string_view listed) {
  const YAML::Node node = f.get(field);
  for (std::size_t i = 0; i < entries.size(); ++i) {
    if (std::find(allowed.begin(), allowed.end(), entries[i]) != allowed.end()) continue;
    auto near = closest_match(entries[i], allowed);
    r.error(node.IsSequence() ? node[i] : node, fmt::format("'{}' is not {}", entries[i], what),
            near ? fmt::format("did you mean '{}'?", *near)
                 : fmt::format("{} are listed in docs/knob-format.md", listed));
  }
}

// `moves:`, the axes a knob (or every knob of a category) is known to move: each an axis key.
std::optional<std::vector<std::string>> read_moves(yaml::Reader& r, yaml::Fields& f,
                                                   const YAML::Node& node) {
  auto moves = r.string_list(f.get("moves"), "moves", false, node);
  if (moves)
    check_names(r, f, "moves", *moves, {kAxisKeys.begin(), kAxisKeys.end()}, "an axis", "the axes");
  return moves;
}

std::optional<Knob> read_knob(yaml::Reader& r, const YAML::Node& node,
                              const std::string& category) {
  const std::size_t errors_before = r.problems().size();
  yaml::Fields f = r.fields(node, "a knob", kKnobFields);
  if (!node.IsMap()) return std::nullopt;
  Knob k;
  k.category = category;
  k.where = r.where(node);
  if (auto name = r.string(f.get("name"), "name", true, node)) {
    if (!is_valid_parameter_name(*name)) {
      r.error(f.get("name"), fmt::format("{} is not a parameter name", yaml::printable(*name)),
              "PostgreSQL parameter names are letters, digits, underscores and at most one dot");
    }
    k.name = *name;
  }
  if (auto since = read_version(r, f.get("since"), "since", true, node)) k.since = *since;
  if (f.has("until")) {
    k.until = read_version(r, f.get("until"), "until", false, node);
    if (k.until && *k.until <= k.since) {
      r.error(f.get("until"),
              fmt::format("'until' ({}) must be after 'since' ({})", *k.until, k.since));
    }
  }
  if (auto healthy = r.string(f.get("healthy"), "healthy", true, node)) k.healthy = *healthy;
  if (auto slow = r.string_list(f.get("slow"), "slow", true, node)) {
    if (slow->empty()) r.error(f.get("slow"), "'slow' needs at least one value");
    k.slow = *slow;
  }
  if (auto why = r.string(f.get("why"), "why", true, node)) k.why = trim(*why);
  if (auto watch = r.string_list(f.get("watch"), "watch", true, node)) {
    check_names(r, f, "watch", *watch, evidence_key_names(), "an evidence key",
                "the evidence keys");
    k.watch = *watch;
  }
  if (auto carryover = r.string(f.get("carryover"), "carryover", true, node)) {
    if (*carryover == "connection") {
      k.carryover_per_connection = true;
    } else if (auto seconds = parse_duration(*carryover)) {
      k.carryover_s = *seconds;
    } else {
      r.error(f.get("carryover"),
              fmt::format("carryover = {} is neither a duration nor 'connection'",
                          yaml::printable(*carryover)),
              "how long the knob's effect takes to settle after a reload: e.g. 0s, 30s, 5min, "
              "or connection when it lasts as long as a connection's cached plans");
    }
  }
  if (auto moves = read_moves(r, f, node)) k.moves = *moves;
  if (auto pitfalls = r.string_list(f.get("pitfalls"), "pitfalls")) k.pitfalls = *pitfalls;
  if (auto with = r.string_list(f.get("acts_with"), "acts_with")) k.acts_with = *with;
  if (auto refs = r.string(f.get("refs"), "refs", true, node)) {
    if (!starts_with(*refs, "https://") && !starts_with(*refs, "http://")) {
      r.error(f.get("refs"), "'refs' must be a link to the PostgreSQL documentation",
              "e.g. https://www.postgresql.org/docs/current/runtime-config-wal.html");
    }
    k.refs = *refs;
  }
  for (const auto* values : {&k.healthy, &k.refs}) {
    if (auto bad = unsafe_value_problem(*values)) r.error(node, "a value " + *bad);
  }
  for (const auto& s : k.slow) {
    if (auto bad = unsafe_value_problem(s)) {
      r.error(f.get("slow"), fmt::format("a slow value of '{}' {}", k.name, *bad));
    }
  }
  if (f.has("min_by_version"))
    k.min_by_version = read_by_version(r, f.get("min_by_version"), "min_by_version");
  if (f.has("max_by_version"))
    k.max_by_version = read_by_version(r, f.get("max_by_version"), "max_by_version");
  if (has_errors(std::vector<ConfigError>(r.problems().begin() + static_cast<long>(errors_before),
                                          r.problems().end()))) {
    return std::nullopt;
  }
  return k;
}

std::optional<Preset> read_preset(yaml::Reader& r, const YAML::Node& node) {
  const std::size_t errors_before = r.problems().size();
  yaml::Fields f = r.fields(node, "a preset", kCatalogPresetFields);
  if (!node.IsMap()) return std::nullopt;
  Preset p;
  p.where = r.where(node);
  if (auto name = r.string(f.get("name"), "name", true, node)) {
    if (!valid_preset_name(*name)) {
      r.error(f.get("name"), fmt::format("{} is not a preset name", yaml::printable(*name)),
              "letters, digits, '-' and '_'");
    }
    p.name = *name;
  }
  if (auto d = r.string(f.get("description"), "description", true, node)) p.description = trim(*d);
  if (auto inc = r.string_list(f.get("includes"), "includes")) p.includes = *inc;
  if (!f.has("settings") && !f.has("pooler") && p.includes.empty()) {
    r.error(node, fmt::format("preset '{}' has no settings", p.name),
            "add 'settings:' with parameter: value lines, 'pooler:' with PgBouncer settings, or "
            "'includes:'");
  }
  p.settings = read_settings(r, f.get("settings"), fmt::format("the settings of '{}'", p.name));
  p.pooler = read_settings(r, f.get("pooler"), fmt::format("the pooler settings of '{}'", p.name));
  if (has_errors(std::vector<ConfigError>(r.problems().begin() + static_cast<long>(errors_before),
                                          r.problems().end()))) {
    return std::nullopt;
  }
  return p;
}

struct FileContents {
  CategoryInfo info;
  std::vector<Knob> knobs;
  std::vector<Preset> presets;
};

FileContents read_catalog_file(yaml::Reader& r, const YAML::Node& root) {
  FileContents out;
  yaml::Fields f = r.fields(root, "a knob file", kFileFields);
  if (!root.IsMap()) return out;
  out.info.where = r.where(root);
  if (f.has("knobs")) {
    if (auto c = r.string(f.get("category"), "category", true, root)) out.info.name = *c;
    if (auto d = r.string(f.get("description"), "description")) out.info.description = trim(*d);
    if (auto moves = read_moves(r, f, root)) out.info.moves = *moves;
  } else if (!f.has("presets")) {
    r.error(root, "a knob file needs 'knobs:' (a list of knobs) or 'presets:' (a list of presets)");
  }
  if (r.is_sequence(f.get("knobs"), "knobs")) {
    for (const auto& k : f.get("knobs")) {
      if (auto knob = read_knob(r, k, out.info.name)) {
        // A knob without its own `moves:` moves what its category's knobs move.
        if (knob->moves.empty()) knob->moves = out.info.moves;
        out.knobs.push_back(std::move(*knob));
      }
    }
  }
  if (r.is_sequence(f.get("presets"), "presets")) {
    for (const auto& p : f.get("presets")) {
      if (auto preset = read_preset(r, p)) out.presets.push_back(std::move(*preset));
    }
  }
  return out;
}

}  // namespace

std::vector<Knob> parse_category(std::string_view text, const std::string& file,
                                 std::vector<ConfigError>& problems, CategoryInfo* info) {
  yaml::Reader r(file);
  std::vector<Knob> knobs;
  if (auto root = r.load_string(text)) {
    FileContents c = read_catalog_file(r, *root);
    if (info) *info = c.info;
    knobs = std::move(c.knobs);
  }
  auto found = r.take_problems();
  problems.insert(problems.end(), found.begin(), found.end());
  return knobs;
}

std::vector<Preset> parse_presets(std::string_view text, const std::string& file,
                                  std::vector<ConfigError>& problems) {
  yaml::Reader r(file);
  std::vector<Preset> presets;
  if (auto root = r.load_string(text)) presets = read_catalog_file(r, *root).presets;
  auto found = r.take_problems();
  problems.insert(problems.end(), found.begin(), found.end());
  return presets;
}

Catalog Catalog::load(const fs::path& knobs_dir) {
  std::error_code ec;
  if (!fs::is_directory(knobs_dir, ec)) {
    throw InputError(fmt::format("the knob catalog folder {} does not exist", knobs_dir.string()));
  }
  std::vector<fs::path> files;
  for (const auto& entry : fs::directory_iterator(knobs_dir, ec)) {
    const auto ext = entry.path().extension();
    if (entry.is_regular_file() && (ext == ".yaml" || ext == ".yml")) files.push_back(entry.path());
  }
  std::sort(files.begin(), files.end());

  Catalog cat;
  std::vector<ConfigError> problems;
  for (const auto& path : files) {
    yaml::Reader r(path.string());
    auto root = r.load_file(path);
    if (root) {
      FileContents c = read_catalog_file(r, *root);
      if (!c.knobs.empty() || !c.info.name.empty()) {
        const std::string stem = path.stem().string();
        if (!c.info.name.empty() && c.info.name != stem) {
          r.warning(*root,
                    fmt::format("category '{}' is in a file named {}", c.info.name,
                                path.filename().string()),
                    fmt::format("name the file {}.yaml", c.info.name));
        }
        cat.categories_.push_back(c.info);
      }
      for (auto& k : c.knobs) cat.knobs_.push_back(std::move(k));
      for (auto& p : c.presets) cat.presets_.push_back(std::move(p));
    }
    for (auto& p : r.take_problems()) {
      (p.severity == ConfigError::Severity::kError ? problems : cat.warnings_).push_back(p);
    }
  }
  if (files.empty()) {
    problems.push_back({SourceLocation{knobs_dir.string()}, "no knob files (*.yaml) found",
                        "the catalog is knobs/<category>.yaml", ConfigError::Severity::kError});
  }

  // Names are unique across files.
  std::map<std::string, const Knob*> seen;
  for (const auto& k : cat.knobs_) {
    auto [it, fresh] = seen.emplace(k.name, &k);
    if (!fresh) {
      problems.push_back({k.where, fmt::format("knob '{}' is defined twice", k.name),
                          "first at " + it->second->where.str(), ConfigError::Severity::kError});
    }
  }
  std::map<std::string, const Preset*> seen_presets;
  for (const auto& p : cat.presets_) {
    auto [it, fresh] = seen_presets.emplace(p.name, &p);
    if (!fresh) {
      problems.push_back({p.where, fmt::format("preset '{}' is defined twice", p.name),
                          "first at " + it->second->where.str(), ConfigError::Severity::kError});
    }
  }
  // acts_with names catalog knobs (attribution reports them as one unit).
  for (const auto& k : cat.knobs_) {
    for (const auto& w : k.acts_with) {
      if (!cat.find(w))
        problems.push_back({k.where,
                            fmt::format("knob '{}': acts_with names unknown knob '{}'", k.name, w),
                            "name a knob of the catalog", ConfigError::Severity::kError});
    }
  }
  // Presets name catalog knobs and existing presets, without cycles.
  const auto names = cat.knob_names();
  std::vector<std::string> preset_names;
  for (const auto& p : cat.presets_) preset_names.push_back(p.name);
  for (const auto& p : cat.presets_) {
    for (const auto& s : p.settings) {
      if (!cat.find(s.name)) {
        auto near = closest_match(s.name, names);
        problems.push_back(
            {s.where,
             fmt::format("preset '{}' sets '{}', which is not in the catalog", p.name, s.name),
             near ? fmt::format("did you mean '{}'?", *near)
                  : "add the knob to knobs/<category>.yaml first",
             ConfigError::Severity::kError});
      }
    }
    for (const auto& inc : p.includes) {
      if (!cat.find_preset(inc)) {
        auto near = closest_match(inc, preset_names);
        problems.push_back(
            {p.where, fmt::format("preset '{}' includes '{}', which is not a preset", p.name, inc),
             near ? fmt::format("did you mean '{}'?", *near) : "", ConfigError::Severity::kError});
      }
    }
  }
  // Cycles among includes; unknown includes were reported above, so only the cycles are new.
  std::set<std::string> cycles;
  for (const auto& p : cat.presets_) {
    try {
      (void)cat.expand(p);
    } catch (const InputError& e) {
      for (const auto& problem : e.problems()) {
        if (problem.message.find("cycle") != std::string::npos &&
            cycles.insert(problem.where.str()).second) {
          problems.push_back(problem);
        }
      }
    }
  }
  if (has_errors(problems)) {
    problems.insert(problems.end(), cat.warnings_.begin(), cat.warnings_.end());
    throw InputError(problems);
  }
  return cat;
}

std::vector<Setting> overlay(std::vector<Setting> base, const std::vector<Setting>& top) {
  for (const auto& s : top) {
    auto it = std::find_if(base.begin(), base.end(),
                           [&](const Setting& b) { return iequals(b.name, s.name); });
    if (it != base.end()) {
      *it = s;
    } else {
      base.push_back(s);
    }
  }
  return base;
}

Catalog Catalog::load_default() {
  return load(data_root() / "knobs");
}

const Knob* Catalog::find(std::string_view name) const {
  // Case-insensitive, as PostgreSQL compares parameter names (TimeZone, DateStyle).
  for (const auto& k : knobs_) {
    if (iequals(k.name, name)) return &k;
  }
  return nullptr;
}

const Preset* Catalog::find_preset(std::string_view name) const {
  for (const auto& p : presets_) {
    if (p.name == name) return &p;
  }
  return nullptr;
}

std::vector<std::string> Catalog::categories() const {
  std::vector<std::string> out;
  for (const auto& c : categories_) {
    if (std::find(out.begin(), out.end(), c.name) == out.end()) out.push_back(c.name);
  }
  // Knobs added in memory may name categories without a file.
  for (const auto& k : knobs_) {
    if (std::find(out.begin(), out.end(), k.category) == out.end()) out.push_back(k.category);
  }
  return out;
}

const CategoryInfo* Catalog::category(std::string_view name) const {
  for (const auto& c : categories_) {
    if (c.name == name) return &c;
  }
  return nullptr;
}

std::vector<std::string> Catalog::knob_names() const {
  std::vector<std::string> out;
  out.reserve(knobs_.size());
  for (const auto& k : knobs_) out.push_back(k.name);
  return out;
}

void Catalog::expand_into(const Preset& preset, std::vector<Setting> Preset::*part,
                          std::vector<Setting>& out, std::vector<std::string>& stack) const {
  if (std::find(stack.begin(), stack.end(), preset.name) != stack.end()) {
    stack.push_back(preset.name);
    throw InputError(std::vector<ConfigError>{
        {preset.where, "presets include each other in a cycle: " + join(stack, " -> "),
         "remove one of the includes", ConfigError::Severity::kError}});
  }
  stack.push_back(preset.name);
  for (const auto& inc : preset.includes) {
    const Preset* p = find_preset(inc);
    if (!p) {
      throw InputError(std::vector<ConfigError>{
          {preset.where,
           fmt::format("preset '{}' includes '{}', which is not a preset", preset.name, inc), "",
           ConfigError::Severity::kError}});
    }
    expand_into(*p, part, out, stack);
  }
  for (const auto& s : preset.*part) {
    auto it =
        std::find_if(out.begin(), out.end(), [&](const Setting& o) { return o.name == s.name; });
    if (it != out.end()) {
      *it = s;
    } else {
      out.push_back(s);
    }
  }
  stack.pop_back();
}

std::vector<Setting> Catalog::expand(const Preset& preset) const {
  std::vector<Setting> out;
  std::vector<std::string> stack;
  expand_into(preset, &Preset::settings, out, stack);
  return out;
}

std::vector<Setting> Catalog::expand_for_server(const Preset& preset, std::string_view what) const {
  const std::vector<Setting> pooler = expand_pooler(preset);
  if (!pooler.empty()) {
    std::vector<std::string> given;
    for (const auto& s : pooler) given.push_back(fmt::format("pgbouncer.{} {}", s.name, s.value));
    throw InputError(fmt::format(
        "preset '{}' sets pgslow's PgBouncer ({}), which {} cannot apply: it changes the server "
        "only. Measure it in a scenario stage (`presets: [{}]` with `pooler: {{kind: "
        "pgbouncer}}`, docs/pooler.md)",
        preset.name, join(given, ", "), what, preset.name));
  }
  return expand(preset);
}

std::vector<Setting> Catalog::expand_pooler(const Preset& preset) const {
  std::vector<Setting> out;
  std::vector<std::string> stack;
  expand_into(preset, &Preset::pooler, out, stack);
  return out;
}

namespace {

SettingsFile read_settings_root(yaml::Reader& r, const YAML::Node& root) {
  SettingsFile out;
  if (root.IsMap() && root["settings"].IsDefined()) {
    yaml::Fields f = r.fields(root, "a preset file", kPresetFields);
    if (auto n = r.string(f.get("name"), "name")) out.name = *n;
    if (auto d = r.string(f.get("description"), "description")) out.description = trim(*d);
    if (auto inc = r.string_list(f.get("includes"), "includes")) out.includes = *inc;
    out.settings = read_settings(r, f.get("settings"), "settings");
  } else if (root.IsMap()) {
    out.settings = read_settings(r, root, "a settings file");
  } else {
    r.error(root,
            "a settings file must be a map of parameter: value lines (or a preset with "
            "'settings:'), not " +
                yaml::describe_kind(root),
            "e.g. shared_buffers: 8MB");
  }
  return out;
}

}  // namespace

SettingsFile parse_settings(std::string_view text, const std::string& file,
                            std::vector<ConfigError>& problems) {
  yaml::Reader r(file);
  SettingsFile out;
  if (auto root = r.load_string(text)) out = read_settings_root(r, *root);
  auto found = r.take_problems();
  problems.insert(problems.end(), found.begin(), found.end());
  return out;
}

SettingsFile load_settings_file(const fs::path& path) {
  yaml::Reader r(path.string());
  SettingsFile out;
  if (auto root = r.load_file(path)) out = read_settings_root(r, *root);
  r.throw_if_errors();
  return out;
}

std::vector<Setting> resolve_settings(const SettingsFile& file, const Catalog& catalog) {
  Preset p;
  p.name = file.name.empty() ? "(file)" : file.name;
  p.includes = file.includes;
  p.settings = file.settings;
  if (!file.settings.empty()) p.where = file.settings.front().where;
  return catalog.expand(p);
}

bool same_settings(const std::vector<Setting>& a, const std::vector<Setting>& b) {
  if (a.size() != b.size()) return false;
  for (const auto& s : a) {
    auto it = std::find_if(b.begin(), b.end(), [&](const Setting& t) {
      return iequals(t.name, s.name) && t.value == s.value;
    });
    if (it == b.end()) return false;
  }
  return true;
}

}  // namespace pgslow::knobs
