#pragma once
// What runs before every pgslow command that touches a workdir: take the workdir's lock (a
// command that only reads goes on when another pgslow holds it), and repair a run that was
// interrupted (the journal of a process that is gone: Ctrl-C, kill -9, power loss) before
// anything else happens. Only the workdir's own managed cluster is restored without being named;
// any other server's journal is reported with the command that restores it.

#include <filesystem>
#include <string>

#include "server/target.h"

namespace pgslow::apply {

// `command` is the pgslow subcommand ("run", "knobs list", "server destroy", ...): it decides
// whether the workdir lock is needed, and what a journal found means for it. `managed` is the
// workdir's managed cluster. Throws RuntimeError when the repair fails for a command that would
// change the server; apply::Interrupted when Ctrl-C came during the repair.
void repair_before_command(const std::filesystem::path& workdir, const server::TargetSpec& managed,
                           const std::string& command);

}  // namespace pgslow::apply
