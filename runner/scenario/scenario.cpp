#include "scenario/scenario.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <set>

#include "common/strings.h"
#include "common/yaml.h"
#include "knobs/catalog.h"
#include "results/metric.h"
#include "scenario/plan.h"
#include "scenario/sweep.h"
#include "server/target_kind.h"

namespace pgslow::scenario {

namespace fs = std::filesystem;

std::string_view mode_name(Mode m) {
  switch (m) {
    case Mode::kCumulative:
      return "cumulative";
    case Mode::kIsolated:
      return "isolated";
    case Mode::kBoth:
      return "both";
  }
  return "cumulative";
}

std::optional<double> parse_precision(std::string_view text) {
  std::string t = trim(text);
  const bool percent = !t.empty() && t.back() == '%';
  if (percent) t.pop_back();
  char* end = nullptr;
  const double v = std::strtod(t.c_str(), &end);
  if (t.empty() || *end != '\0' || !std::isfinite(v)) return std::nullopt;
  const double fraction = percent ? v / 100 : v;
  if (fraction < 0.005 || fraction > 0.5) return std::nullopt;
  return fraction;
}

namespace {

// Newlines and tabs are layout in a description, not control.
std::string remove_layout(std::string s) {
  for (char& c : s) {
    if (c == '\n' || c == '\t' || c == '\r') c = ' ';
  }
  return s;
}

const std::vector<std::string> kTopFields = {
    "name",          "description", "target",    "workload", "measure",
    "mode",          "baseline",    "stages",    "expect",   "allow_changes",
    "allow_partial", "sweep",       "attribute", "server",   "pooler"};

std::optional<int> read_positive_int(yaml::Reader& r, const YAML::Node& node, std::string_view what,
                                     long long min_value, long long max_value) {
  auto v = r.integer(node, what);
  if (!v) return std::nullopt;
  if (*v < min_value || *v > max_value) {
    r.error(node, fmt::format("{} = {} is out of range", what, *v),
            fmt::format("use a whole number from {} to {}", min_value, max_value));
    return std::nullopt;
  }
  return static_cast<int>(*v);
}

void read_target(yaml::Reader& r, const YAML::Node& node, Scenario& s) {
  if (node.IsDefined() && !node.IsNull()) s.target_where = r.where(node);
  server::read_target(r, node, s.target);
}

// `server: {memory: 512MB, cpus: 1.5, cpuset: "1"}`: the server's envelope (docs/envelope.md).
void read_server(yaml::Reader& r, const YAML::Node& node, Scenario& s) {
  if (!node.IsDefined() || node.IsNull()) return;
  yaml::Fields f = r.fields(node, "server", {"memory", "cpus", "cpuset"});
  if (!node.IsMap()) return;
  std::string why;
  if (auto v = r.string(f.get("memory"), "server.memory")) {
    if (auto bytes = server::parse_envelope_memory(*v, &why)) {
      s.target.envelope.memory_bytes = *bytes;
    } else {
      r.error(f.get("memory"), "server.memory: " + why,
              "the server's processes and their page cache stay within it, e.g. memory: 512MB");
    }
  }
  if (auto v = r.string(f.get("cpus"), "server.cpus")) {
    if (auto cpus = server::parse_envelope_cpus(*v, &why)) {
      s.target.envelope.cpus = *cpus;
    } else {
      r.error(f.get("cpus"), "server.cpus: " + why, "the server's CPU time, e.g. cpus: 1.5");
    }
  }
  if (auto v = r.string(f.get("cpuset"), "server.cpuset")) {
    if (server::parse_cpuset(*v, &why)) {
      s.target.envelope.cpuset = trim(*v);
    } else {
      r.error(f.get("cpuset"), "server.cpuset: " + why,
              "the CPUs the server may use, quoted, e.g. cpuset: \"1\"");
    }
  }
}

// `pooler: {kind: pgbouncer, pool_mode: transaction, default_pool_size: 10}`: pgslow's own
// PgBouncer in front of the managed cluster; `{kind: external, conninfo: "..."}`: the target's
// own pooler (docs/pooler.md).
void read_pooler(yaml::Reader& r, const YAML::Node& node, Scenario& s) {
  if (!node.IsDefined() || node.IsNull()) return;
  std::vector<std::string> names = {"kind", "conninfo"};
  for (const auto& spec : server::pooler_settings()) names.emplace_back(spec.name);
  yaml::Fields f = r.fields(node, "pooler", names);
  if (!node.IsMap()) return;
  server::PoolerSpec pooler;
  pooler.where = r.where(node);
  if (auto kind = r.string(f.get("kind"), "pooler.kind")) {
    if (*kind != "pgbouncer" && *kind != "external") {
      r.error(f.get("kind"), fmt::format("unknown pooler kind {}", yaml::printable(*kind)),
              "use pgbouncer (pgslow starts its own) or external (with the conninfo of the "
              "target's own pooler)");
    }
    pooler.kind = *kind;
  }
  if (auto v = r.string(f.get("conninfo"), "pooler.conninfo")) pooler.conninfo = *v;
  if (pooler.kind == "external" && pooler.conninfo.empty()) {
    r.error(node, "an external pooler needs its conninfo",
            "add e.g. conninfo: \"host=/run/pgbouncer port=6432\"");
  }
  if (pooler.kind != "external" && f.has("conninfo")) {
    r.error(f.get("conninfo"), "pooler.conninfo is for kind: external",
            "pgslow's own PgBouncer needs no conninfo: remove it");
  }
  for (const auto& spec : server::pooler_settings()) {
    const std::string name(spec.name);
    if (!f.has(name)) continue;
    auto value = r.string(f.get(name), "pooler." + name);
    if (!value) continue;
    if (pooler.kind == "external") {
      r.error(f.get(name), fmt::format("pooler.{} is for pgslow's own PgBouncer", name),
              "pgslow does not change an external pooler: remove it, or use kind: pgbouncer");
    } else if (auto why = server::check_pooler_setting(name, *value, "")) {
      r.error(f.get(name), "pooler: " + *why);
    } else {
      pooler.settings[name] = *value;
    }
  }
  s.pooler = pooler;
}

void read_workload(yaml::Reader& r, const YAML::Node& node, Scenario& s) {
  if (!node.IsDefined()) {
    r.add(ConfigError{SourceLocation{r.file(), 1, 1}, "the scenario has no workload",
                      "add e.g. workload: {name: tpcb-like, scale: 10, clients: 8}"});
    return;
  }
  s.workload.where = r.where(node);
  if (node.IsScalar()) {  // `workload: tpcb-like`
    s.workload.name = node.Scalar();
    return;
  }
  yaml::Fields f =
      r.fields(node, "workload",
               {"name", "scale", "warehouses", "clients", "think_time", "seed", "options"});
  if (auto v = r.string(f.get("name"), "workload.name", true, node)) s.workload.name = *v;
  if (f.has("scale") && f.has("warehouses")) {
    r.error(f.get("warehouses"), "workload.scale and workload.warehouses are the same setting",
            "keep one of them");
  }
  YAML::Node scale = f.has("scale") ? f.get("scale") : f.get("warehouses");
  if (auto v = read_positive_int(r, scale, "workload.scale", 1, 100000)) s.workload.scale = *v;
  if (auto v = read_positive_int(r, f.get("clients"), "workload.clients", 1, 10000)) {
    s.workload.clients = *v;
  }
  if (auto v = r.boolean(f.get("think_time"), "workload.think_time")) s.workload.think_time = *v;
  if (auto v = r.integer(f.get("seed"), "workload.seed")) {
    s.workload.seed = static_cast<std::uint64_t>(*v);
  }
  yaml::Fields options = r.fields(f.get("options"), "workload.options");
  if (f.has("options")) {
    for (const auto& [key, value] : options.entries()) {
      if (value.IsSequence()) {  // a list (scripts: [a.sql@1, b.sql@2]): comma-separated
        std::vector<std::string> items;
        for (const auto& item : value) {
          if (auto v = r.string(item, "workload.options." + key)) items.push_back(*v);
        }
        s.workload.options[key] = join(items, ",");
      } else if (auto v = r.string(value, "workload.options." + key)) {
        s.workload.options[key] = *v;
      }
    }
  }
}

void read_measure(yaml::Reader& r, const YAML::Node& node, Scenario& s) {
  if (!node.IsDefined()) return;
  yaml::Fields f = r.fields(node, "measure",
                            {"warmup", "duration", "repeats", "check_data", "wait_sampling",
                             "metric", "design", "pairs", "precision", "budget", "protocol"});
  if (auto v = r.string(f.get("protocol"), "measure.protocol")) {
    if (auto p = driver::parse_protocol(trim(*v))) {
      s.measure.protocol = *p;
    } else {
      r.error(f.get("protocol"),
              fmt::format("measure.protocol = {} is not a protocol", yaml::printable(*v)),
              "use simple, extended or prepared (pgbench -M)");
    }
  }
  if (auto v = r.duration(f.get("warmup"), "measure.warmup")) s.measure.warmup_s = *v;
  if (auto v = r.duration(f.get("duration"), "measure.duration")) {
    if (*v < 1) {
      r.error(f.get("duration"), "measure.duration must be at least 1s",
              "shorter runs measure connection set-up, not the server");
    } else {
      s.measure.duration_s = *v;
    }
  }
  if (auto v = read_positive_int(r, f.get("repeats"), "measure.repeats", 1, 100)) {
    s.measure.repeats = *v;
  }
  if (auto v = r.boolean(f.get("check_data"), "measure.check_data")) s.measure.check_data = *v;
  if (auto v = r.boolean(f.get("wait_sampling"), "measure.wait_sampling"))
    s.measure.wait_sampling = *v;
  if (auto v = r.string(f.get("design"), "measure.design")) {
    if (*v == "auto" || *v == "isolated") {
      s.measure.switchback = *v == "auto";
    } else {
      r.error(f.get("design"),
              fmt::format("measure.design = {} is not a design", yaml::printable(*v)),
              "auto (switchback where the knobs allow it) or isolated (separate runs)");
    }
  }
  if (auto v = read_positive_int(r, f.get("pairs"), "measure.pairs", 3, 200)) s.measure.pairs = *v;
  if (auto v = r.string(f.get("precision"), "measure.precision")) {
    if (auto p = parse_precision(*v)) {
      s.measure.precision = *p;
    } else {
      r.error(f.get("precision"),
              fmt::format("measure.precision = {} is not a precision", yaml::printable(*v)),
              "a half-width of the interval between 0.5% and 50%, e.g. 5%");
    }
  }
  if (auto v = r.duration(f.get("budget"), "measure.budget")) {
    if (*v < 10) {
      r.error(f.get("budget"), "measure.budget must be at least 10s",
              "a switchback stage needs a few blocks of each configuration");
    } else {
      s.measure.budget_s = *v;
    }
  }
  if (auto v = r.string(f.get("metric"), "measure.metric")) {
    if (auto m = results::parse_metric(*v)) {
      s.measure.metric = *m;
    } else {
      r.error(f.get("metric"), fmt::format("unknown measure.metric {}", yaml::printable(*v)),
              "use " + results::metric_names());
    }
  }
}

void read_stages(yaml::Reader& r, const YAML::Node& node, Scenario& s) {
  if (!node.IsDefined()) {
    r.add(ConfigError{SourceLocation{r.file(), 1, 1}, "the scenario has no stages",
                      "add a stages: list; each stage names presets and/or settings"});
    return;
  }
  if (!r.is_sequence(node, "stages")) return;
  std::set<std::string> names = {"baseline"};
  for (const auto& item : node) {
    StageSpec stage;
    stage.where = r.where(item);
    yaml::Fields f = r.fields(
        item, "a stage",
        {"name", "description", "presets", "settings", "load", "attribute", "same_as_baseline"});
    if (!item.IsMap()) continue;
    auto name = r.string(f.get("name"), "stage name", true, item);
    if (name && has_control_characters(*name)) {
      r.error(f.get("name"),
              fmt::format("the stage name \"{}\" holds control characters", printable(*name)),
              "use words, digits and punctuation");
    } else if (name) {
      stage.name = *name;
      if (!names.insert(to_lower(*name)).second) {
        r.error(f.get("name"), fmt::format("stage name '{}' is used twice", *name),
                *name == "baseline" ? "the baseline stage is implicit; name yours differently"
                                    : "give each stage its own name");
      }
    }
    const std::string what = name ? fmt::format("stage '{}'", *name) : "a stage";
    if (auto v = r.string(f.get("description"), what + " description")) stage.description = *v;
    if (f.has("presets")) {
      YAML::Node presets = f.get("presets");
      if (presets.IsScalar()) {
        stage.presets.push_back(PresetRef{presets.Scalar(), r.where(presets)});
      } else if (r.is_sequence(presets, what + " presets")) {
        for (const auto& p : presets) {
          if (auto v = r.string(p, what + " preset"))
            stage.presets.push_back(PresetRef{*v, r.where(p)});
        }
      }
    }
    if (f.has("settings"))
      stage.settings = knobs::read_settings(r, f.get("settings"), what + " settings");
    stage.load = read_load(r, f.get("load"), what + " load");
    stage.attribute = r.boolean(f.get("attribute"), what + " attribute");
    stage.same_as_baseline =
        r.boolean(f.get("same_as_baseline"), what + " same_as_baseline").value_or(false);
    const bool changes = !stage.presets.empty() || !stage.settings.empty() || !stage.load.empty();
    if (stage.same_as_baseline && changes) {
      r.error(f.get("same_as_baseline"),
              fmt::format("{} is same_as_baseline: true but changes something", what),
              "an A/A stage runs the baseline's configuration again: drop its presets:, "
              "settings: and load:, or same_as_baseline");
    } else if (!changes && !stage.same_as_baseline && name) {
      r.error(item, fmt::format("{} changes nothing", what),
              "give it presets:, settings: or load: (the baseline is measured anyway), or "
              "same_as_baseline: true for an A/A check");
    }
    s.stages.push_back(std::move(stage));
  }
  if (s.stages.empty()) {
    r.error(node, "the stages list is empty", "add at least one stage");
  }
}

void read_expect(yaml::Reader& r, const YAML::Node& node, Scenario& s) {
  if (!node.IsDefined()) return;
  if (!r.is_sequence(node, "expect")) return;
  for (const auto& item : node) {
    yaml::Fields f = r.fields(item, "an expectation",
                              {"stage", "slower_than_baseline", "within_baseline", "no_effect"});
    if (!item.IsMap()) continue;
    Expectation e;
    e.where = r.where(item);
    auto stage = r.string(f.get("stage"), "expect.stage", true, item);
    if (stage) e.stage = *stage;
    bool slower = f.has("slower_than_baseline");
    bool within = f.has("within_baseline");
    bool none = f.has("no_effect");
    if (int{slower} + int{within} + int{none} != 1) {
      r.error(item,
              "an expectation needs exactly one of slower_than_baseline, within_baseline and "
              "no_effect",
              "e.g. slower_than_baseline: 10 (at least 10x slower), within_baseline: 10% or "
              "no_effect: true (an A/A stage: no measurable effect on any axis)");
      continue;
    }
    if (none) {
      e.kind = Expectation::Kind::kNoEffect;
      auto text = r.string(f.get("no_effect"), "no_effect");
      if (!text) continue;
      if (trim(*text) != "true") {
        r.error(f.get("no_effect"),
                fmt::format("no_effect = {} is not true", yaml::printable(*text)),
                "write no_effect: true, or leave the expectation out");
        continue;
      }
      e.text = fmt::format("{} has no measurable effect on any axis", e.stage);
    } else if (slower) {
      e.kind = Expectation::Kind::kSlowerThanBaseline;
      auto text = r.string(f.get("slower_than_baseline"), "slower_than_baseline");
      if (!text) continue;
      std::string t = trim(*text);
      if (!t.empty() && (t.back() == 'x' || t.back() == 'X')) t.pop_back();
      char* end = nullptr;
      double v = std::strtod(t.c_str(), &end);
      if (t.empty() || *end != '\0' || !(v > 0) || !std::isfinite(v)) {
        r.error(f.get("slower_than_baseline"),
                fmt::format("slower_than_baseline = {} is not a factor", yaml::printable(*text)),
                "write a number such as 10 or 10x (at least 10 times slower)");
        continue;
      }
      e.value = v;
      e.text = fmt::format("{} at least {}x slower than baseline", e.stage, t);
    } else {
      e.kind = Expectation::Kind::kWithinBaseline;
      auto text = r.string(f.get("within_baseline"), "within_baseline");
      if (!text) continue;
      std::string t = trim(*text);
      bool percent = !t.empty() && t.back() == '%';
      if (percent) t.pop_back();
      char* end = nullptr;
      double v = std::strtod(t.c_str(), &end);
      if (t.empty() || *end != '\0' || v < 0 || !std::isfinite(v)) {
        r.error(f.get("within_baseline"),
                fmt::format("within_baseline = {} is not a percentage", yaml::printable(*text)),
                "write e.g. 10%");
        continue;
      }
      e.value = percent || v >= 1 ? v / 100.0 : v;
      e.text = fmt::format("{} within {}% of baseline", e.stage, e.value * 100);
    }
    s.expect.push_back(std::move(e));
  }
}

Scenario parse_scenario_node(yaml::Reader& r, const YAML::Node& root, Scenario s) {
  yaml::Fields f = r.fields(root, "a scenario", kTopFields);
  if (!root.IsMap()) return s;
  if (auto v = r.string(f.get("name"), "name")) {
    // The name becomes a folder under results/: a path of its own would write elsewhere.
    if (std::string why = unsafe_file_name_reason(*v); !why.empty()) {
      r.error(f.get("name"), fmt::format("the scenario name \"{}\" {}", printable(*v), why),
              "use letters, digits, '-', '_' and '.', e.g. name: cache-study");
    } else {
      s.name = *v;
    }
  }
  if (auto v = r.string(f.get("description"), "description")) {
    if (has_control_characters(remove_layout(*v)))
      r.error(f.get("description"), "the description holds control characters",
              "remove them (escape sequences would reach the terminal and the reports)");
    s.description = *v;
  }
  read_target(r, f.get("target"), s);
  read_server(r, f.get("server"), s);
  read_pooler(r, f.get("pooler"), s);
  if (auto v = r.boolean(f.get("allow_changes"), "allow_changes")) s.target.allow_changes = *v;
  if (auto v = r.boolean(f.get("allow_partial"), "allow_partial")) s.allow_partial = *v;
  read_workload(r, f.get("workload"), s);
  read_measure(r, f.get("measure"), s);
  if (auto v = r.boolean(f.get("attribute"), "attribute")) s.attribute = *v;
  if (auto mode = r.string(f.get("mode"), "mode")) {
    std::string m = to_lower(*mode);
    if (m == "cumulative") {
      s.mode = Mode::kCumulative;
    } else if (m == "isolated") {
      s.mode = Mode::kIsolated;
    } else if (m == "both") {
      s.mode = Mode::kBoth;
    } else {
      r.error(f.get("mode"), fmt::format("unknown mode {}", yaml::printable(*mode)),
              "use cumulative, isolated or both");
    }
  }
  if (f.has("baseline")) {
    yaml::Fields b = r.fields(f.get("baseline"), "baseline", {"settings"});
    if (b.has("settings"))
      s.baseline = knobs::read_settings(r, b.get("settings"), "baseline settings");
  }
  if (f.has("sweep")) read_sweep(r, f.get("sweep"), s);
  if (f.has("sweep") && !f.has("stages")) {
    s.stages = expand_sweep(s.sweep);  // a sweep alone is enough
  } else {
    read_stages(r, f.get("stages"), s);
    auto points = expand_sweep(s.sweep);
    s.stages.insert(s.stages.begin(), points.begin(), points.end());
  }
  read_expect(r, f.get("expect"), s);
  // Expectations must name a stage that exists.
  std::vector<std::string> stage_names = {"baseline"};
  for (const auto& st : s.stages) stage_names.push_back(st.name);
  for (const auto& e : s.expect) {
    bool found = false;
    for (const auto& n : stage_names) found = found || iequals(n, e.stage);
    if (!found && !e.stage.empty()) {
      auto suggestion = closest_match(e.stage, stage_names);
      r.add(ConfigError{
          e.where,
          fmt::format("expect names stage '{}', which the scenario does not have", e.stage),
          suggestion ? fmt::format("did you mean '{}'?", *suggestion)
                     : "stages: " + join(stage_names, ", ")});
    }
  }
  return s;
}

// A scenario that cannot run still has what it could read checked without a server (its
// workload's name, its stages' knobs and presets), so that one pass names every problem, in
// line order: a misspelt knob is not found only after the `measure:` error above it is fixed.
void add_problems_of_what_was_read(const Scenario& s, std::vector<ConfigError>& problems) {
  if (!has_errors(problems)) return;
  check_scenario_offline(s, knobs::Catalog::load_default(), problems);
  std::stable_sort(
      problems.begin(), problems.end(), [](const ConfigError& a, const ConfigError& b) {
        return std::pair(a.where.line, a.where.column) < std::pair(b.where.line, b.where.column);
      });
  problems.erase(
      std::unique(problems.begin(), problems.end(),
                  [](const ConfigError& a, const ConfigError& b) { return a.str() == b.str(); }),
      problems.end());
}

}  // namespace

Scenario parse_scenario(std::string_view text, const std::string& file,
                        std::vector<ConfigError>& problems) {
  yaml::Reader r(file);
  Scenario s;
  s.file = file;
  s.name = fs::path(file).stem().string();
  if (auto root = r.load_string(text)) s = parse_scenario_node(r, *root, std::move(s));
  std::vector<ConfigError> found = r.take_problems();
  add_problems_of_what_was_read(s, found);
  problems.insert(problems.end(), found.begin(), found.end());
  return s;
}

Scenario load_scenario(const fs::path& path) {
  yaml::Reader r(path.string());
  Scenario s;
  s.file = path;
  s.name = path.stem().string();
  if (auto root = r.load_file(path)) s = parse_scenario_node(r, *root, std::move(s));
  std::vector<ConfigError> found = r.take_problems();
  add_problems_of_what_was_read(s, found);
  if (has_errors(found)) throw InputError(std::move(found));
  return s;
}

bool looks_like_scenario(const fs::path& path) {
  yaml::Reader r(path.string());
  auto root = r.load_file(path);
  if (!root || !root->IsMap()) return false;
  const YAML::Node& map = *root;
  return map["stages"].IsDefined() || map["workload"].IsDefined();
}

workload::WorkloadParams workload_params(const Scenario& s) {
  workload::WorkloadParams params;
  params.scale = s.workload.scale;
  params.clients = s.workload.clients;
  params.think_time = s.workload.think_time;
  params.seed = s.workload.seed;
  params.options = s.workload.options;
  params.base_dir = s.file.parent_path();  // script files are relative to the scenario
  return params;
}

const std::string* SweepSpec::envelope_dimension() const {
  for (const auto& d : dimensions) {
    if (is_envelope_dimension(d)) return &d;
  }
  return nullptr;
}

server::Envelope run_envelope(const Scenario& scenario, const server::TargetSpec& target) {
  server::Envelope e = target.envelope;
  const std::string* swept = scenario.sweep.envelope_dimension();
  if (swept == nullptr) return e;
  if (target.kind != server::TargetKind::kManaged) {
    const auto d = static_cast<std::size_t>(swept - scenario.sweep.dimensions.data());
    const SourceLocation where = scenario.sweep.values[d].empty()
                                     ? scenario.sweep.where
                                     : scenario.sweep.values[d].front().where;
    throw InputError({envelope_sweep_refusal(*swept, target.kind, where)});
  }
  for (const auto& d : scenario.sweep.dimensions) {
    if (d == "server.memory" && e.memory_bytes == 0)
      e.memory_bytes = server::Envelope::kUnlimitedMemory;
    if (d == "server.cpus" && e.cpus == 0) e.cpus = server::Envelope::kUnlimitedCpus;
  }
  return e;
}

}  // namespace pgslow::scenario
