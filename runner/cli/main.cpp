// pgslow: make PostgreSQL slow on purpose, measure how slow, and say why.
// main only parses the shared options and wires the command groups (cli/commands.h).

#include <fmt/format.h>

#include <cstdio>

#include "cli/commands.h"
#include "common/errors.h"
#include "common/log.h"
#include "common/progress.h"
#include "common/version.h"
#include "pg/error.h"
#include "server/pg_versions.h"

namespace {

// -v, -q and -P (common/progress.h) on `cmd` and every subcommand under it.
void add_output_options(CLI::App* cmd, bool& verbose, bool& quiet, int& progress_every) {
  cmd->add_flag("-v,--verbose", verbose, "show debug diagnostics on stderr")->group("Output");
  cmd->add_flag("-q,--quiet", quiet,
                "print only the results, warnings and errors (no progress, unless -P asks)")
      ->group("Output");
  cmd->add_option("-P,--progress", progress_every,
                  "a progress report every N seconds, one line each (as pgbench -P); by default "
                  "one line rewritten in place on a terminal, nothing otherwise")
      ->check(CLI::Validator(
          [](const std::string& text) {
            const bool whole = !text.empty() && text.size() <= 6 &&
                               text.find_first_not_of("0123456789") == std::string::npos;
            return whole && std::stoi(text) > 0
                       ? std::string()
                       : "a whole number of seconds, 1 or more (e.g. -P 5), not \"" + text + "\"";
          },
          ""))
      ->type_name("N")
      ->group("Output");
  for (CLI::App* sub : cmd->get_subcommands({}))
    add_output_options(sub, verbose, quiet, progress_every);
}

}  // namespace

int main(int argc, char** argv) {
  using namespace pgslow;
  CLI::App app{"pgslow: make PostgreSQL slow on purpose, measure how slow, and say why"};
  app.require_subcommand(1);
  app.set_version_flag("--version", std::string("pgslow ") + kVersion);

  cli::Context ctx;
  std::string workdir = ctx.workdir.string();
  std::string pg_bin;
  std::string pg_version;
  bool verbose = false;
  bool quiet = false;
  app.add_option("--workdir", workdir, "pgslow's working directory (managed cluster, journal)")
      ->capture_default_str();
  app.add_option("--pg-bin", pg_bin, "folder with the PostgreSQL server binaries (initdb, pg_ctl)");
  app.add_option("--pg-version", pg_version,
                 "major version of the managed cluster (15-18; 16-18 via `pgslow server install`)")
      ->envname("PGSLOW_PG_VERSION");
  int progress_every = 0;
  add_output_options(&app, verbose, quiet, progress_every);

  cli::add_server_commands(app, ctx);
  cli::add_knob_commands(app, ctx);
  cli::add_list_commands(app, ctx);
  cli::add_workload_commands(app, ctx);
  cli::add_apply_commands(app, ctx);
  cli::add_run_commands(app, ctx);
  cli::add_report_commands(app, ctx);
  cli::add_bisect_commands(app, ctx);
  cli::add_cliff_commands(app, ctx);
  cli::add_lesson_commands(app, ctx);
  cli::add_mystery_commands(app, ctx);
  cli::add_jobs_commands(app, ctx);
  // -v, -q and -P are taken after the command too (`pgslow bench -P 1`, `pgslow run -q quick`).
  for (CLI::App* command : app.get_subcommands({}))
    add_output_options(command, verbose, quiet, progress_every);

  // Options are known before any subcommand callback runs.
  app.parse_complete_callback([&] {
    if (argc > 0) ctx.program = argv[0];
    ctx.workdir = workdir;
    if (!pg_bin.empty()) ctx.pg_bin = pg_bin;
    if (!pg_version.empty()) ctx.pg_version = server::parse_major_version(pg_version);
    ctx.verbosity =
        verbose ? Verbosity::kVerbose : (quiet ? Verbosity::kQuiet : Verbosity::kNormal);
    init_logging(ctx.verbosity);
    set_console_options({.quiet = quiet, .every_s = progress_every});
  });

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    int rc = app.exit(e);
    return rc == 0 ? kExitOk : kExitBadInput;
  } catch (const InputError& e) {
    std::fprintf(stderr, "pgslow: %s\n", e.what());
    return e.code();
  } catch (const ExitStatus& e) {
    return e.code();  // the command has said what happened
  } catch (const Error& e) {
    std::fprintf(stderr, "pgslow: error: %s\n", e.what());
    return e.code();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "pgslow: internal error: %s\n", e.what());
    return kExitRuntime;
  }
  return kExitOk;
}
