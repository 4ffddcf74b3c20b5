#include "cli/target_options.h"

#include <fmt/format.h>

#include "common/errors.h"
#include "pg/error.h"
#include "server/target_kind.h"

namespace pgslow::cli {

bool TargetOptions::names_server() const {
  for (const auto& [name, value] : fields) {
    if (!value.empty()) return true;
  }
  return false;
}

void add_target_options(CLI::App* cmd, TargetOptions& t) {
  CLI::Option_group* group =
      cmd->add_option_group("Target",
                            "which server: the managed cluster unless one of these names another "
                            "(docs/server.md)");
  for (const server::TargetField& f : server::target_fields()) {
    std::string& value = t.fields[std::string(f.yaml)];  // std::map: the reference stays valid
    group->add_option(std::string(f.option), value, std::string(f.help));
  }
  group->add_flag("--allow-changes", t.allow_changes,
                  "allow pgslow to change a server that is not the managed cluster");
  CLI::Option_group* envelope = cmd->add_option_group(
      "Envelope",
      "the machine the managed cluster's server gets, over a scenario's server: "
      "section (docs/envelope.md)");
  envelope->add_option("--memory", t.memory,
                       "memory for the server's processes and their page cache, e.g. 512MB");
  envelope->add_option("--cpus", t.cpus, "CPU time for the server, e.g. 1.5");
  envelope->add_option("--cpuset", t.cpuset,
                       "the CPUs the server may use, e.g. 1 or 0-1; the clients avoid them");
}

namespace {

void apply_envelope_options(const TargetOptions& t, server::Envelope& e) {
  std::string why;
  auto fail = [&](const char* option, const std::string& value) {
    throw InputError(fmt::format("{} {}: {}", option, value, why));
  };
  if (!t.memory.empty()) {
    auto v = server::parse_envelope_memory(t.memory, &why);
    if (!v) fail("--memory", t.memory);
    e.memory_bytes = *v;
  }
  if (!t.cpus.empty()) {
    auto v = server::parse_envelope_cpus(t.cpus, &why);
    if (!v) fail("--cpus", t.cpus);
    e.cpus = *v;
  }
  if (!t.cpuset.empty()) {
    if (!server::parse_cpuset(t.cpuset, &why)) fail("--cpuset", t.cpuset);
    e.cpuset = t.cpuset;
  }
}

}  // namespace

server::TargetSpec managed_target(const Context& ctx) {
  server::TargetSpec spec;
  spec.workdir = ctx.workdir;
  spec.pg_bin = ctx.pg_bin;
  spec.pg_version = ctx.pg_version;
  return spec;
}

server::TargetSpec target_spec(const Context& ctx, const TargetOptions& t,
                               const server::TargetSpec* fallback) {
  server::TargetSpec spec;
  if (t.names_server()) {
    for (const server::TargetField& f : server::target_fields()) {
      auto it = t.fields.find(std::string(f.yaml));
      if (it != t.fields.end() && !it->second.empty()) f.set(spec, it->second);
    }
    spec.kind = server::infer_kind(spec);
  } else if (fallback) {
    spec = *fallback;
  }
  spec.workdir = ctx.workdir;
  if (ctx.pg_bin) spec.pg_bin = ctx.pg_bin;
  spec.pg_version = ctx.pg_version;
  spec.allow_changes = spec.allow_changes || t.allow_changes;
  apply_envelope_options(t, spec.envelope);
  return spec;
}

void refuse_command_target(const server::TargetSpec& spec, std::string_view command) {
  if (spec.kind != server::TargetKind::kCommand) return;
  throw InputError(fmt::format(
      "pgslow {} cannot search a server reached by conninfo or through user commands ({}): it "
      "applies dozens of configurations, restarts among them, which such a server takes only "
      "through commands that may return before the values are in place (an HA manager applying "
      "from its store). Run it on the managed cluster or on a local data directory "
      "(--data-dir, --allow-changes) with the same settings, or measure this server's "
      "configurations one by one with `pgslow run` (docs/{}.md)",
      command, pg::conninfo_without_secrets(spec.conninfo), command));
}

}  // namespace pgslow::cli
