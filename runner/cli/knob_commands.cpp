// pgslow knobs list|show|docs, pgslow presets list|show, pgslow check FILE.
// Only the commands that show live values start the managed cluster; nothing here changes
// the server's configuration.

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <cstdio>
#include <iostream>

#include "cli/commands.h"
#include "common/errors.h"
#include "common/paths.h"
#include "common/safe_fs.h"
#include "common/strings.h"
#include "common/yaml.h"
#include "knobs/catalog.h"
#include "knobs/docs.h"
#include "knobs/validate.h"
#include "knobs/value.h"
#include "pg/connection.h"
#include "report/catalog_view.h"
#include "report/registry.h"
#include "scenario/library.h"
#include "scenario/plan.h"
#include "scenario/scenario.h"
#include "server/managed_cluster.h"
#include "server/pooler.h"
#include "server/target.h"
#include "server/target_kind.h"

namespace fs = std::filesystem;

namespace pgslow::cli {

namespace {

using knobs::Catalog;
using knobs::ServerSetting;
using knobs::ServerSettings;
using knobs::SettingVerdict;
using knobs::Verdict;

// Where the server is: the one the target options name, else `fallback` (a scenario's
// target), else the managed cluster (started when it is down).
using ServerOptions = TargetOptions;

ServerSettings read_server(Context& ctx, const ServerOptions& opts, std::string* described,
                           const server::TargetSpec* fallback = nullptr) {
  std::unique_ptr<server::ServerControl> server =
      server::open_target(target_spec(ctx, opts, fallback));
  if (described) *described = server->describe();
  pg::Connection conn = pg::Connection::open(server->conninfo());
  return ServerSettings::read(conn);
}

// Listing and explaining read the live server but never start one (a fresh workdir would get
// an initdb and a running cluster for a listing): nullopt, said in an info line, when the
// server would be the managed cluster and it is not running.
std::optional<ServerSettings> read_running_server(Context& ctx, const ServerOptions& opts,
                                                  std::string* described) {
  const server::TargetSpec spec = target_spec(ctx, opts);
  if (spec.kind != server::TargetKind::kManaged) return read_server(ctx, opts, described);
  // The cluster as it runs, read through its socket: opening the target would start it, or
  // restart one running in another envelope (another run's).
  const auto idle = server::target_kind(spec.kind).reopen(spec);
  const auto* cluster = dynamic_cast<const server::ManagedCluster*>(idle.get());
  if (cluster == nullptr || !cluster->is_running()) {
    spdlog::info(
        "no live server read: the managed cluster in {} is not running, and a listing never "
        "starts one; `pgslow server start` starts it, --conninfo reads another server",
        idle->describe());
    return std::nullopt;
  }
  if (described) *described = cluster->describe();
  pg::Connection conn = pg::Connection::open(cluster->conninfo());
  return ServerSettings::read(conn);
}

std::string live_value(const ServerSetting& s) {
  const auto type = knobs::parse_vartype(s.vartype).value_or(knobs::VarType::kString);
  if (type == knobs::VarType::kInteger) {
    if (auto unit = knobs::parse_base_unit(s.unit)) {
      return knobs::format_with_unit(std::strtod(s.setting.c_str(), nullptr), *unit);
    }
  }
  if (type == knobs::VarType::kReal && !s.unit.empty()) return s.setting + s.unit;
  if (type == knobs::VarType::kString && s.setting.empty()) return "''";
  return s.setting;
}

// A min/max of pg_settings with its unit: "64kB  (64 x kB)".
std::string bound(const ServerSetting& s, const std::string& value) {
  if (s.vartype != "integer" || s.unit.empty()) return value;
  auto unit = knobs::parse_base_unit(s.unit);
  if (!unit) return value;
  return knobs::format_with_unit(std::strtod(value.c_str(), nullptr), *unit) + "  (" + value +
         " x " + s.unit + ")";
}

std::string applies_by(const ServerSetting& s) {
  if (s.context == "postmaster") return "restart";
  if (s.context == "internal") return "fixed";
  if (s.context == "backend" || s.context == "superuser-backend") return "reload+reconnect";
  return "reload";
}

std::string availability(const knobs::Knob& k, int major) {
  if (k.exists_in(major)) return "yes";
  if (major < k.since) return fmt::format("no (needs {})", k.since);
  return fmt::format("no (removed in {})", *k.until);
}

// Problems go to stderr (diagnostics), after what stdout already holds.
void print_problems(const std::vector<ConfigError>& problems, std::FILE* out = stderr) {
  std::fflush(stdout);
  for (const auto& p : problems) std::fprintf(out, "%s\n", p.str().c_str());
}

// A value for a table cell: as written when it is plain, quoted and escaped otherwise.
std::string cell_value(const std::string& value) {
  const std::string shown = yaml::printable(value, 40);
  const bool plain =
      !value.empty() && shown.size() == value.size() + 2 && value.find(' ') == std::string::npos;
  return plain ? value : shown;
}

std::string verdict_note(const SettingVerdict& v) {
  std::string note = v.reason;
  for (const auto& p : v.problems) {
    if (p.severity == ConfigError::Severity::kWarning) {
      note += (note.empty() ? "" : "; ") + std::string("warning: ") + p.message;
      break;
    }
  }
  return note;
}

std::vector<results::SettingCheck> setting_checks(const std::vector<SettingVerdict>& verdicts) {
  std::vector<results::SettingCheck> checks;
  for (const auto& v : verdicts) {
    checks.push_back({v.setting.name, cell_value(v.setting.value),
                      std::string(verdict_name(v.verdict)), verdict_note(v)});
  }
  return checks;
}

std::string count_summary(const std::vector<ConfigError>& problems) {
  std::size_t errors = 0;
  std::size_t warnings = 0;
  for (const auto& p : problems) {
    (p.severity == ConfigError::Severity::kError ? errors : warnings) += 1;
  }
  return fmt::format("{} error{}, {} warning{}", errors, errors == 1 ? "" : "s", warnings,
                     warnings == 1 ? "" : "s");
}

// ---- knobs --------------------------------------------------------------------------------

results::KnobList knobs_list(Context& ctx, const std::string& category, bool with_server,
                             const ServerOptions& opts) {
  const Catalog catalog = Catalog::load_default();
  if (!category.empty()) {
    const auto cats = catalog.categories();
    if (std::find(cats.begin(), cats.end(), category) == cats.end()) {
      auto near = closest_match(category, cats);
      throw InputError(fmt::format(
          "unknown category '{}' ({})", category,
          near ? fmt::format("did you mean '{}'?", *near) : "categories: " + join(cats, ", ")));
    }
  }
  results::KnobList list;
  list.category = category;
  std::optional<ServerSettings> server;
  if (with_server) {
    server = read_running_server(ctx, opts, &list.server);
    if (server) list.server_major = server->major;
  }
  for (const auto& k : catalog.knobs()) {
    if (!category.empty() && k.category != category) continue;
    results::KnobListRow row{k.name, k.category, k.since, k.healthy, k.slow, std::nullopt};
    if (server) {
      const ServerSetting* s = server->find(k.name);
      row.live = s ? results::LiveKnob{live_value(*s), "yes", applies_by(*s)}
                   : results::LiveKnob{"-", availability(k, server->major), "-"};
    }
    list.knobs.push_back(std::move(row));
  }
  return list;
}

results::KnobDetail knobs_show(Context& ctx, const std::string& name, bool offline,
                               const ServerOptions& opts) {
  const Catalog catalog = Catalog::load_default();
  const knobs::Knob* k = catalog.find(to_lower(name));
  if (!k) {
    auto near = closest_match(name, catalog.knob_names());
    throw InputError(
        fmt::format("'{}' is not in the knob catalog ({})", name,
                    near ? fmt::format("did you mean '{}'?", *near) : "see `pgslow knobs list`"));
  }
  results::KnobDetail d;
  d.name = k->name;
  d.category = k->category;
  d.versions = k->until ? fmt::format("{} to {}", k->since, *k->until - 1)
                        : fmt::format("{} and later", k->since);
  d.why = k->why;
  d.healthy = k->healthy;
  d.slow = k->slow;
  d.watch = k->watch;
  d.moves = k->moves;
  for (const auto& [v, m] : k->min_by_version) d.minimum.push_back({v, m});
  d.docs = k->refs;
  d.pitfalls = k->pitfalls;
  if (offline) return d;
  const std::optional<ServerSettings> running = read_running_server(ctx, opts, &d.server);
  if (!running) return d;
  const ServerSettings& server = *running;
  d.server_major = server.major;
  const ServerSetting* s = server.find(k->name);
  if (!s) {
    d.unavailable = availability(*k, server.major);
    return d;
  }
  results::LiveSetting live;
  live.current = live_value(*s);
  live.setting = s->setting;
  live.unit = s->unit;
  if (!s->min_val.empty()) live.min = bound(*s, s->min_val);
  if (!s->max_val.empty()) live.max = bound(*s, s->max_val);
  live.accepted = s->enumvals;
  live.type = s->vartype;
  live.context = s->context;
  live.applies_by = applies_by(*s);
  live.source = s->source;
  live.default_value = s->boot_val;
  live.pending_restart = s->pending_restart;
  d.live = std::move(live);
  return d;
}

void knobs_docs(Context& ctx, const std::string& output) {
  (void)ctx;
  const std::string md = knobs::render_markdown(Catalog::load_default());
  if (output.empty() || output == "-") {
    std::fwrite(md.data(), 1, md.size(), stdout);
  } else {
    write_file_durably(output, md);
    std::fprintf(stderr, "wrote %s\n", output.c_str());
  }
}

// ---- presets -------------------------------------------------------------------------------

results::PresetList presets_list() {
  const Catalog catalog = Catalog::load_default();
  results::PresetList list;
  for (const auto& p : catalog.presets()) {
    list.presets.push_back(
        {p.name, static_cast<int>(catalog.expand(p).size() + catalog.expand_pooler(p).size()),
         p.description});
  }
  return list;
}

results::PresetDetail presets_show(Context& ctx, const std::string& name, bool offline,
                                   const ServerOptions& opts) {
  const Catalog catalog = Catalog::load_default();
  const knobs::Preset* p = catalog.find_preset(name);
  if (!p) {
    std::vector<std::string> names;
    for (const auto& q : catalog.presets()) names.push_back(q.name);
    auto near = closest_match(name, names);
    throw InputError(fmt::format(
        "unknown preset '{}' ({})", name,
        near ? fmt::format("did you mean '{}'?", *near) : "presets: " + join(names, ", ")));
  }
  results::PresetDetail d;
  d.name = p->name;
  d.description = p->description;
  d.includes = p->includes;
  const auto settings = catalog.expand(*p);
  for (const auto& s : settings) {
    const knobs::Knob* k = catalog.find(s.name);
    d.settings.push_back({s.name, s.value, k ? k->category : "", k ? k->since : 0});
  }
  // Settings of pgslow's PgBouncer: a scenario stage's clients meet them (docs/pooler.md).
  for (const auto& s : catalog.expand_pooler(*p))
    d.settings.push_back({std::string(server::kPoolerKnobPrefix) + s.name, s.value, "pooler", 0});
  if (offline) return d;
  const std::optional<ServerSettings> server = read_running_server(ctx, opts, &d.server);
  if (!server) return d;
  d.server_major = server->major;
  const auto verdicts = knobs::validate(settings, catalog, *server);
  d.checks = setting_checks(verdicts);
  const auto problems = knobs::all_problems(verdicts);
  d.problem_count = count_summary(problems);
  for (const auto& problem : problems) d.problems.push_back(problem.str());
  return d;
}

// ---- check ---------------------------------------------------------------------------------

// The server a scenario runs against, as `pgslow run` opens it: --conninfo when given, else
// the scenario's own target (pgctl, command, with its options), else the managed cluster.
ServerSettings read_scenario_server(Context& ctx, const server::TargetSpec& target,
                                    const ServerOptions& opts, std::string* described) {
  return read_server(ctx, opts, described, &target);
}

// A scenario file (a top-level `stages:` or `workload:` key): its shape, its workload, its presets
// and every stage's configuration against the live server (or offline: names and safe values only),
// exactly as `pgslow plan` and `pgslow run` would check it before changing anything.
std::vector<ConfigError> check_scenario_file(Context& ctx, const fs::path& path, bool offline,
                                             const ServerOptions& opts) {
  std::vector<ConfigError> problems;
  // (A file that cannot run has been checked without a server already: every problem.)
  scenario::Scenario sc =
      scenario::parse_scenario(read_trusted_file(path, "the scenario"), path.string(), problems);
  if (has_errors(problems)) return problems;
  const Catalog catalog = Catalog::load_default();
  if (offline) {
    scenario::check_scenario_offline(sc, catalog, problems);
    return problems;
  }
  // make_plan checks the workload and every stage against the server.
  std::string described;
  const ServerSettings server = read_scenario_server(ctx, sc.target, opts, &described);
  try {
    scenario::Plan plan = scenario::make_plan(sc, catalog, server);
    std::printf("%s: %zu stages checked against PostgreSQL %d (%s); `pgslow plan %s` shows them\n",
                path.string().c_str(), plan.stages.size(), server.major, described.c_str(),
                path.string().c_str());
  } catch (const InputError& e) {
    problems.insert(problems.end(), e.problems().begin(), e.problems().end());
  }
  return problems;
}

// What kind of file `root` is, from its top-level keys.
enum class FileKind { kSettings, kScenario, kCatalog, kPresets };
FileKind kind_of(const YAML::Node& root) {
  if (!root.IsMap()) return FileKind::kSettings;
  // A scenario of sweeps alone has no stages: list; every scenario names its workload.
  if (root["stages"].IsDefined() || root["workload"].IsDefined()) return FileKind::kScenario;
  if (root["knobs"].IsDefined()) return FileKind::kCatalog;
  if (root["presets"].IsDefined()) return FileKind::kPresets;
  return FileKind::kSettings;
}

void check_file(Context& ctx, const fs::path& path, bool offline, const ServerOptions& opts) {
  std::vector<ConfigError> problems;
  yaml::Reader reader(path.string());
  auto root = reader.load_file(path);
  if (!root) {
    problems = reader.take_problems();
    print_problems(problems);
    throw InputError(fmt::format("{}: {}", path.string(), count_summary(problems)));
  }
  const FileKind kind = kind_of(*root);
  if (kind == FileKind::kScenario) {
    problems = check_scenario_file(ctx, path, offline, opts);
    print_problems(problems);
    if (has_errors(problems)) {
      throw InputError(fmt::format("{}: {}", path.string(), count_summary(problems)));
    }
    std::printf("%s: scenario ok (%s)\n", path.string().c_str(), count_summary(problems).c_str());
    return;
  }

  const Catalog catalog = Catalog::load_default();
  std::vector<std::vector<knobs::Setting>> groups;  // validated one group at a time
  std::vector<std::string> group_names;
  const std::string text = read_trusted_file(path, "the file");
  if (kind == FileKind::kCatalog) {
    // Every healthy and slow value of every knob, each on its own.
    for (const auto& k : knobs::parse_category(text, path.string(), problems)) {
      for (const auto& v : k.slow) {
        groups.push_back({knobs::Setting{k.name, v, k.where}});
        group_names.push_back(fmt::format("{} (slow)", k.name));
      }
      groups.push_back({knobs::Setting{k.name, k.healthy, k.where}});
      group_names.push_back(fmt::format("{} (healthy)", k.name));
    }
  } else if (kind == FileKind::kPresets) {
    const auto presets = knobs::parse_presets(text, path.string(), problems);
    // The file's presets may include each other and the catalog's.
    knobs::Catalog with_file = catalog;
    for (const auto& p : presets) {
      if (!catalog.find_preset(p.name)) with_file.add_preset(p);
    }
    for (const auto& p : presets) {
      try {
        groups.push_back(with_file.expand(p));
        group_names.push_back(p.name);
      } catch (const InputError& e) {
        problems.insert(problems.end(), e.problems().begin(), e.problems().end());
      }
    }
  } else {
    auto file = knobs::parse_settings(text, path.string(), problems);
    if (!has_errors(problems)) {
      try {
        groups.push_back(knobs::resolve_settings(file, catalog));
        group_names.push_back(file.name.empty() ? path.filename().string() : file.name);
      } catch (const InputError& e) {
        problems.insert(problems.end(), e.problems().begin(), e.problems().end());
      }
    }
  }

  std::size_t checked = 0;
  if (offline) {
    for (const auto& g : groups) {
      auto found = knobs::check_offline(g, catalog);
      problems.insert(problems.end(), found.begin(), found.end());
      checked += g.size();
    }
  } else if (!groups.empty()) {
    std::string described;
    const ServerSettings server = read_server(ctx, opts, &described);
    for (std::size_t i = 0; i < groups.size(); ++i) {
      const auto verdicts = knobs::validate(groups[i], catalog, server);
      if (kind != FileKind::kCatalog) {
        if (groups.size() > 1) std::printf("%s:\n", group_names[i].c_str());
        report::render_setting_checks_console(setting_checks(verdicts), std::cout);
        std::cout.flush();
        if (groups.size() > 1) std::printf("\n");
      }
      auto found = knobs::all_problems(verdicts);
      problems.insert(problems.end(), found.begin(), found.end());
      checked += groups[i].size();
    }
    std::printf("checked %zu setting%s against PostgreSQL %d (%s)\n", checked,
                checked == 1 ? "" : "s", server.major, described.c_str());
  }
  print_problems(problems);
  if (has_errors(problems)) {
    throw InputError(fmt::format("{}: {}", path.string(), count_summary(problems)));
  }
  std::printf("%s: ok (%s)\n", path.string().c_str(), count_summary(problems).c_str());
}

}  // namespace

void add_knob_commands(CLI::App& app, Context& ctx) {
  // Shared by the commands that read the live server; heap-held because CLI11 binds options
  // by reference and the callbacks run after this function returns.
  auto opts = std::make_shared<ServerOptions>();
  const auto add_conninfo = [&](CLI::App* cmd) { add_target_options(cmd, *opts); };

  auto* knobs_cmd = app.add_subcommand("knobs", "the knob catalog: list, show, docs");
  knobs_cmd->require_subcommand(1);

  auto category = std::make_shared<std::string>();
  auto with_server = std::make_shared<bool>(false);
  auto* list = knobs_cmd->add_subcommand("list", "a table of the knobs in the catalog");
  list->add_option("--category", *category, "only this category (cache, wal, ...)");
  list->add_flag("--server", *with_server,
                 "add the live server's value, availability and reload/restart");
  auto list_format = std::make_shared<std::string>("console");
  list->add_option("--format,-f", *list_format, "console | md | json (default: console)");
  add_conninfo(list);
  list->callback([&ctx, category, with_server, opts, list_format] {
    report::check_format<results::KnobList>(*list_format);
    before_command(ctx, "knobs list");
    report::render(knobs_list(ctx, *category, *with_server, *opts), *list_format, std::cout);
  });

  // `pgslow knobs show NAME`, and `pgslow explain NAME` as users guess it: one command.
  const auto add_show = [&](CLI::App* parent, const std::string& word, const std::string& help) {
    auto name = std::make_shared<std::string>();
    auto offline = std::make_shared<bool>(false);
    auto* show = parent->add_subcommand(word, help);
    show->add_option("NAME", *name, "the parameter, e.g. shared_buffers")->required();
    show->add_flag("--offline", *offline, "only the catalog entry; do not start or reach a server");
    auto show_format = std::make_shared<std::string>("console");
    show->add_option("--format,-f", *show_format, "console | md | json (default: console)");
    add_conninfo(show);
    show->callback([&ctx, name, offline, opts, show_format] {
      report::check_format<results::KnobDetail>(*show_format);
      before_command(ctx, "knobs show");
      report::render(knobs_show(ctx, *name, *offline, *opts), *show_format, std::cout);
    });
  };
  add_show(knobs_cmd, "show", "explain one knob and show its live pg_settings row");
  add_show(&app, "explain", "explain one knob and show its live pg_settings row (= knobs show)");

  auto output = std::make_shared<std::string>();
  auto* docs = knobs_cmd->add_subcommand("docs", "print docs/knobs.md, generated from the catalog");
  docs->add_option("-o,--output", *output, "write to this file instead of stdout");
  docs->callback([&ctx, output] {
    before_command(ctx, "knobs docs");
    knobs_docs(ctx, *output);
  });

  auto* presets_cmd = app.add_subcommand("presets", "named bundles of knobs: list, show");
  presets_cmd->require_subcommand(1);
  auto* plist = presets_cmd->add_subcommand("list", "the presets in the catalog");
  auto plist_format = std::make_shared<std::string>("console");
  plist->add_option("--format,-f", *plist_format, "console | md | json (default: console)");
  plist->callback([&ctx, plist_format] {
    report::check_format<results::PresetList>(*plist_format);
    before_command(ctx, "presets list");
    report::render(presets_list(), *plist_format, std::cout);
  });
  auto preset_name = std::make_shared<std::string>();
  auto preset_offline = std::make_shared<bool>(false);
  auto* pshow = presets_cmd->add_subcommand(
      "show", "the knobs of a preset and each one's verdict against the live server");
  pshow->add_option("NAME", *preset_name, "the preset, e.g. the-42000x")->required();
  pshow->add_flag("--offline", *preset_offline, "only the catalog; do not start or reach a server");
  auto pshow_format = std::make_shared<std::string>("console");
  pshow->add_option("--format,-f", *pshow_format, "console | md | json (default: console)");
  add_conninfo(pshow);
  pshow->callback([&ctx, preset_name, preset_offline, opts, pshow_format] {
    report::check_format<results::PresetDetail>(*pshow_format);
    before_command(ctx, "presets show");
    report::render(presets_show(ctx, *preset_name, *preset_offline, *opts), *pshow_format,
                   std::cout);
  });

  auto file = std::make_shared<std::string>();
  auto check_offline = std::make_shared<bool>(false);
  auto* check = app.add_subcommand(
      "check",
      "validate a preset, settings or knob file against the live server's pg_settings "
      "without changing its configuration (exit 2 on any error)");
  check->add_option("FILE", *file, "the YAML file, or a scenario's name (quick)")->required();
  check->add_flag("--offline", *check_offline,
                  "check syntax and names against the catalog only; no server");
  add_conninfo(check);
  check->callback([&ctx, file, check_offline, opts] {
    before_command(ctx, "check");
    // A file of any kind, or a scenario of the library by name, as `run` finds it.
    check_file(ctx, scenario::resolve_scenario(*file), *check_offline, *opts);
  });
}

}  // namespace pgslow::cli
