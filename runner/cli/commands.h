#pragma once
// Each command group adds its subcommands to the app; main only wires them.
// A subcommand's callback throws pgslow::Error (exit code inside) or returns normally (0);
// one that needs another exit code throws pgslow::Error with it.

#include <CLI/CLI.hpp>

#include "cli/context.h"
#include "cli/target_options.h"

namespace pgslow::cli {

void add_server_commands(CLI::App& app, Context& ctx);  // server start|status|stop|destroy|conninfo
void add_knob_commands(CLI::App& app, Context& ctx);    // knobs, presets, check, explain
void add_list_commands(CLI::App& app, Context& ctx);    // scenarios, workloads
void add_workload_commands(CLI::App& app, Context& ctx);  // load, bench, check-data
void add_apply_commands(CLI::App& app, Context& ctx);     // apply, restore, recover, status
void add_run_commands(CLI::App& app, Context& ctx);       // run, plan
void add_report_commands(CLI::App& app, Context& ctx);    // report, compare
void add_bisect_commands(CLI::App& app, Context& ctx);    // bisect
void add_cliff_commands(CLI::App& app, Context& ctx);     // cliff
void add_lesson_commands(CLI::App& app, Context& ctx);    // lesson (workshop)
void add_mystery_commands(CLI::App& app, Context& ctx);   // mystery start|clues|guess|reveal
void add_jobs_commands(CLI::App& app, Context& ctx);      // jobs (the matrix as Kubernetes Jobs)

// `--from-snapshot NAME` of run and bench (docs/server.md, "Snapshots"): the managed cluster
// the context names starts from a copy of its snapshot NAME. An empty name does nothing;
// `names_server` (the target options name another server) is refused.
void add_from_snapshot_option(CLI::App* cmd, std::string& name);
void start_from_snapshot(const Context& ctx, const std::string& name, bool names_server);

// Runs before every command that touches a workdir: apply::repair_before_command for the
// context's workdir and its managed cluster (apply/before_command.h).
void before_command(Context& ctx, const std::string& command);

}  // namespace pgslow::cli
