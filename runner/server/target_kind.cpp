#include "server/target_kind.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <algorithm>

#include "common/errors.h"
#include "common/strings.h"
#include "pg/error.h"
#include "server/managed_cluster.h"

namespace pgslow::server {

namespace fs = std::filesystem;

namespace {

std::string recorded(const TargetRecord& r, std::string_view key) {
  auto it = r.target.find(std::string(key));
  return it == r.target.end() ? std::string() : it->second;
}

bool same_path(const fs::path& a, const fs::path& b) {
  std::error_code ec;
  if (fs::equivalent(a, b, ec)) return true;
  return fs::absolute(a).lexically_normal() == fs::absolute(b).lexically_normal();
}

bool differs(std::string* why, std::string what) {
  if (why) *why = std::move(what);
  return false;
}

bool same_data_dir(const TargetRecord& r, const std::optional<fs::path>& data_dir,
                   std::string* why) {
  if (r.data_dir.has_value() != data_dir.has_value() ||
      (data_dir && !same_path(*r.data_dir, *data_dir)))
    return differs(why, "it protects the data directory " +
                            (r.data_dir ? r.data_dir->string() : std::string("(none)")));
  return true;
}

template <class Server>
std::unique_ptr<ServerControl> open_as(const TargetSpec& spec) {
  return std::make_unique<Server>(spec);
}

// Putting the original back is not a change: allowed without allow_changes.
template <class Server>
std::unique_ptr<ServerControl> reopen_as(const TargetSpec& given) {
  TargetSpec spec = given;
  spec.allow_changes = true;
  return std::make_unique<Server>(spec);
}

// ---- managed ----

ManagedOptions managed_options(const TargetSpec& spec) {
  ManagedOptions options;
  options.workdir = spec.workdir.empty() ? fs::path(".pgslow") : spec.workdir;
  options.pg_bin = spec.pg_bin;
  options.pg_version = spec.pg_version;  // <workdir>/cluster-N
  options.envelope = spec.envelope;
  return options;
}

const TargetKindOps kManagedOps{
    TargetKind::kManaged,
    "managed",
    {},
    /*in_workdir=*/true,
    /*local=*/true,
    [](const TargetSpec&) { return std::vector<std::string>{}; },
    [](const TargetSpec& spec) -> std::unique_ptr<ServerControl> {
      auto cluster = std::make_unique<ManagedCluster>(managed_options(spec));
      cluster->start();  // also restarts a running one into the envelope asked for
      // The clients start after this, from this thread: they inherit an affinity that keeps
      // them off the server's CPUs, so the server's CPUs are its own.
      if (!spec.envelope.cpuset.empty()) spdlog::info("{}", keep_clients_off(spec.envelope.cpuset));
      return cluster;
    },
    [](const TargetSpec& spec) -> std::unique_ptr<ServerControl> {
      return std::make_unique<ManagedCluster>(managed_options(spec));
    },
    [](const ServerControl& server, const TargetSpec*, TargetRecord& r) {
      r.target.clear();
      r.target["kind"] = r.kind;
      const auto& managed = dynamic_cast<const ManagedCluster&>(server);
      r.target["workdir"] = managed.cluster_dir().parent_path().string();
      r.target["port"] = std::to_string(managed.port());
      if (managed.pg_version()) r.target["pg_version"] = std::to_string(*managed.pg_version());
    },
    [](const TargetRecord& r, const TargetSpec& given, std::string* why) {
      if (!same_path(recorded(r, "workdir"), given.workdir))
        return differs(why, "it protects the managed cluster of another workdir");
      if (recorded(r, "pg_version") != (given.pg_version ? std::to_string(*given.pg_version) : ""))
        return differs(why, recorded(r, "pg_version").empty()
                                ? std::string("it protects the workdir's default managed cluster")
                                : "it protects the managed cluster of PostgreSQL " +
                                      recorded(r, "pg_version"));
      return same_data_dir(r, ManagedCluster(managed_options(given)).data_dir(), why);
    },
    // --pg-version is a global option, placed before the verb by the caller.
    [](const TargetRecord&) { return std::vector<std::string>{}; },
};

// ---- pgctl ----

const TargetKindOps kPgctlOps{
    TargetKind::kPgctl,
    "pgctl",
    {"data_dir", "conninfo"},
    /*in_workdir=*/false,
    /*local=*/true,
    [](const TargetSpec& spec) {
      std::vector<std::string> out;
      if (spec.data_dir.empty())
        out.push_back(
            "a pgctl target needs data_dir: the server's data directory, e.g. data_dir: "
            "/var/lib/postgresql/15/main");
      return out;
    },
    open_as<PgctlServer>,
    reopen_as<PgctlServer>,
    [](const ServerControl&, const TargetSpec*, TargetRecord&) {},
    [](const TargetRecord& r, const TargetSpec& given, std::string* why) {
      return same_data_dir(r, given.data_dir, why);
    },
    [](const TargetRecord& r) {
      return std::vector<std::string>{"--data-dir", r.data_dir ? r.data_dir->string() : ""};
    },
};

// ---- command ----

// The fields of the command kind that are shell commands: a journal names its server only
// when the user gives the same ones.
constexpr std::string_view kCommandFields[] = {"reload", "restart", "apply", "restore"};

const TargetField& field(std::string_view yaml_name) {
  for (const TargetField& f : target_fields()) {
    if (f.yaml == yaml_name) return f;
  }
  throw RuntimeError(fmt::format("no target field {}", yaml_name));
}

const TargetKindOps kCommandOps{
    TargetKind::kCommand,
    "command",
    {"conninfo", "data_dir", "reload", "restart", "apply", "restore"},
    /*in_workdir=*/false,
    /*local=*/false,
    [](const TargetSpec& spec) {
      std::vector<std::string> out;
      if (spec.conninfo.empty())
        out.push_back(
            "a command target needs conninfo: how to reach the server, e.g. conninfo: "
            "\"host=localhost port=5432 user=postgres\"");
      if (!spec.restore_command.empty() && spec.apply_command.empty())
        out.push_back("a command target's restore command goes with an apply command: give apply");
      return out;
    },
    open_as<CommandServer>,
    reopen_as<CommandServer>,
    [](const ServerControl&, const TargetSpec* spec, TargetRecord& r) {
      if (!spec) return;
      for (std::string_view name : kCommandFields) {
        const TargetField& f = field(name);
        std::string value = f.get(*spec);
        if (!value.empty()) r.target[std::string(f.record)] = value;
      }
    },
    [](const TargetRecord& r, const TargetSpec& given, std::string* why) {
      if (pg::conninfo_without_secrets(given.conninfo) != pg::conninfo_without_secrets(r.conninfo))
        return differs(why, "it protects the server at " + r.conninfo);
      for (std::string_view name : kCommandFields) {
        const TargetField& f = field(name);
        if (recorded(r, f.record) != f.get(given))
          return differs(why, fmt::format("its server has another {} command", f.yaml));
      }
      std::optional<fs::path> data_dir;
      if (!given.data_dir.empty()) data_dir = given.data_dir;
      return same_data_dir(r, data_dir, why);
    },
    [](const TargetRecord& r) {
      std::vector<std::string> args = {"--conninfo", r.conninfo};
      if (r.data_dir) args.insert(args.end(), {"--data-dir", r.data_dir->string()});
      for (std::string_view name : kCommandFields) {
        const TargetField& f = field(name);
        std::string value = recorded(r, f.record);
        if (!value.empty()) args.insert(args.end(), {std::string(f.option), value});
      }
      return args;
    },
};

const std::vector<const TargetKindOps*>& all_kinds() {
  static const std::vector<const TargetKindOps*> kinds = {&kManagedOps, &kPgctlOps, &kCommandOps};
  return kinds;
}

}  // namespace

const std::vector<TargetField>& target_fields() {
  static const std::vector<TargetField> fields = {
      {"data_dir", "--data-dir", "data_dir",
       "an existing local server in this data directory (restarted with pg_ctl as its owner) "
       "instead of the managed cluster",
       [](const TargetSpec& s) { return s.data_dir.string(); },
       [](TargetSpec& s, const std::string& v) { s.data_dir = v; }},
      {"conninfo", "--conninfo", "conninfo",
       "a server reached by this connection string instead of the managed cluster",
       [](const TargetSpec& s) { return s.conninfo; },
       [](TargetSpec& s, const std::string& v) { s.conninfo = v; }},
      {"reload", "--reload-command", "reload_command",
       "shell command that reloads that server (default: pg_reload_conf())",
       [](const TargetSpec& s) { return s.reload_command; },
       [](TargetSpec& s, const std::string& v) { s.reload_command = v; }},
      {"restart", "--restart-command", "restart_command",
       "shell command that restarts that server (systemctl, docker compose, ...)",
       [](const TargetSpec& s) { return s.restart_command; },
       [](TargetSpec& s, const std::string& v) { s.restart_command = v; }},
      {"apply", "--apply-command", "apply_command",
       "shell command that sets parameters itself (JSON on stdin; no ALTER SYSTEM): kubectl "
       "patch, patronictl edit-config, a cloud parameter group (docs/server.md)",
       [](const TargetSpec& s) { return s.apply_command; },
       [](TargetSpec& s, const std::string& v) { s.apply_command = v; }},
      {"restore", "--restore-command", "restore_command",
       "shell command that puts the original values back (JSON on stdin; default: the apply "
       "command with the original values)",
       [](const TargetSpec& s) { return s.restore_command; },
       [](TargetSpec& s, const std::string& v) { s.restore_command = v; }},
  };
  return fields;
}

const TargetKindOps& target_kind(TargetKind kind) {
  for (const TargetKindOps* k : all_kinds()) {
    if (k->kind == kind) return *k;
  }
  throw RuntimeError("unknown target kind");
}

const TargetKindOps* find_target_kind(std::string_view name) {
  for (const TargetKindOps* k : all_kinds()) {
    if (k->name == to_lower(std::string(name))) return k;
  }
  return nullptr;
}

std::string target_kind_names() {
  std::vector<std::string> names;
  for (const TargetKindOps* k : all_kinds()) names.emplace_back(k->name);
  std::string last = names.back();
  names.pop_back();
  return join(names, ", ") + " or " + last;
}

TargetKind infer_kind(const TargetSpec& spec) {
  for (std::string_view name : kCommandFields) {
    if (!field(name).get(spec).empty()) return TargetKind::kCommand;
  }
  if (!spec.conninfo.empty() && spec.data_dir.empty()) return TargetKind::kCommand;
  if (!spec.data_dir.empty()) return TargetKind::kPgctl;
  return TargetKind::kManaged;
}

std::string_view to_string(TargetKind kind) {
  return target_kind(kind).name;
}

std::unique_ptr<ServerControl> open_target(const TargetSpec& spec) {
  const TargetKindOps& ops = target_kind(spec.kind);
  std::vector<std::string> problems = ops.problems(spec);
  if (!problems.empty()) throw InputError(join(problems, "; "));
  if (!spec.envelope.empty() && spec.kind != TargetKind::kManaged) {
    // Only a server pgslow starts itself can start inside the cgroup; a pgctl target's server
    // runs already, a command target's is started by the user's commands.
    // Named by where it is (--conninfo alone makes a command target: a bare "command target"
    // would not say which server).
    const std::string where = !spec.conninfo.empty() ? pg::conninfo_without_secrets(spec.conninfo)
                                                     : spec.data_dir.string();
    throw RuntimeError(fmt::format(
        "pgslow cannot give the server of a {} target ({}) an envelope ({}): it makes one only "
        "for the managed cluster, whose postmaster it starts inside a cgroup. Limit that server "
        "where it is started (docker run --memory --cpus, systemd MemoryMax= CPUQuota=), or run "
        "on the managed cluster (docs/envelope.md)",
        to_string(spec.kind), where, spec.envelope.describe()));
  }
  return ops.open(spec);
}

void read_target(yaml::Reader& r, const YAML::Node& node, TargetSpec& spec) {
  spec.kind = TargetKind::kManaged;
  if (!node.IsDefined() || node.IsNull()) return;
  if (node.IsScalar()) {
    if (to_lower(node.Scalar()) == "managed") return;
    r.error(node, fmt::format("target {} needs its details", yaml::printable(node.Scalar())),
            "write `target: managed`, or a map with kind: pgctl|command (docs/scenario-format.md)");
    return;
  }
  std::vector<std::string> allowed = {"kind", "allow_changes"};
  for (const TargetField& f : target_fields()) allowed.emplace_back(f.yaml);
  yaml::Fields f = r.fields(node, "target", allowed);
  const TargetKindOps* ops = nullptr;
  if (auto kind = r.string(f.get("kind"), "target.kind", true, node)) {
    ops = find_target_kind(*kind);
    if (ops)
      spec.kind = ops->kind;
    else
      r.error(f.get("kind"), fmt::format("unknown target kind {}", yaml::printable(*kind)),
              "use " + target_kind_names());
  }
  for (const TargetField& field : target_fields()) {
    const std::string key(field.yaml);
    if (!f.has(key)) continue;
    if (ops && std::find(ops->fields.begin(), ops->fields.end(), field.yaml) == ops->fields.end()) {
      r.error(
          f.get(key), fmt::format("a {} target takes no {}", ops->name, field.yaml),
          ops->fields.empty()
              ? std::string("remove it")
              : "it takes " +
                    join(std::vector<std::string>(ops->fields.begin(), ops->fields.end()), ", "));
      continue;
    }
    if (auto v = r.string(f.get(key), "target." + key)) field.set(spec, *v);
  }
  if (auto v = r.boolean(f.get("allow_changes"), "target.allow_changes")) spec.allow_changes = *v;
  if (ops) {
    for (const std::string& p : ops->problems(spec)) r.error(node, p);
  }
}

TargetRecord record_target(const ServerControl& server, const TargetSpec* spec) {
  TargetRecord r;
  r.kind = std::string(to_string(server.kind()));
  r.description = server.describe();
  r.data_dir = server.data_dir();
  // No secret at all, not even a redacted "password=***" (which would override PGPASSWORD,
  // ~/.pgpass and the service file): recovery gets credentials the libpq way.
  r.conninfo = pg::conninfo_without_secrets(server.conninfo());
  std::map<std::string, std::string>& t = r.target;
  t["kind"] = r.kind;
  if (r.data_dir) t["data_dir"] = r.data_dir->string();
  t["conninfo"] = r.conninfo;
  if (std::optional<fs::path> log = server.log_file()) t["log_file"] = log->string();
  if (spec) {
    if (spec->pg_bin) t["pg_bin"] = spec->pg_bin->string();
    if (!spec->log_file.empty()) t["log_file"] = spec->log_file.string();
  }
  target_kind(server.kind()).record(server, spec, r);
  return r;
}

bool record_matches(const TargetRecord& record, const TargetSpec& given, std::string* why) {
  const std::string kind(to_string(given.kind));
  if (record.kind != kind)
    return differs(why, "it protects a " + record.kind + " server, not a " + kind + " one");
  return target_kind(given.kind).matches(record, given, why);
}

}  // namespace pgslow::server
