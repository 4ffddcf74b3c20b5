#pragma once
// The one group of target options every command that reaches a server takes (--data-dir,
// --conninfo, --reload-command, --restart-command, --apply-command, --restore-command,
// --allow-changes), made from server/'s table of target fields.

#include <CLI/CLI.hpp>
#include <map>
#include <string>

#include "cli/context.h"
#include "server/target.h"

namespace pgslow::cli {

struct TargetOptions {
  std::map<std::string, std::string> fields;  // TargetField::yaml -> value given
  bool allow_changes = false;
  // --memory, --cpus, --cpuset: the server's envelope (server/envelope.h), over a scenario's.
  std::string memory;
  std::string cpus;
  std::string cpuset;
  // Whether any option names a server (not just --allow-changes).
  bool names_server() const;
};

// Adds the "Target" option group to `cmd`; `t` must outlive the parse (heap-held).
void add_target_options(CLI::App* cmd, TargetOptions& t);

// The server the options name; when they name none, `fallback` (a scenario's own target, or
// the managed cluster of the workdir and --pg-version). The workdir, --pg-bin and --pg-version
// always come from the context; --allow-changes adds to the fallback's allow_changes;
// --memory/--cpus/--cpuset replace the fallback's envelope fields (InputError naming the
// option when one is malformed).
server::TargetSpec target_spec(const Context& ctx, const TargetOptions& t,
                               const server::TargetSpec* fallback = nullptr);
// Searches (bisect, cliff) apply dozens of configurations and measure each: a command target's
// applies are the user's commands, which may return before the server shows the values (an HA
// manager applying from its store), and a search would then compare configurations that were
// never in place. InputError naming `command` and what to do instead.
void refuse_command_target(const server::TargetSpec& spec, std::string_view command);

// The managed cluster of the workdir and --pg-version (<workdir>/cluster-N): the one server a
// journal may name without the user naming it.
server::TargetSpec managed_target(const Context& ctx);

}  // namespace pgslow::cli
