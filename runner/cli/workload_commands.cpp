// pgslow load | bench | check-data: load a workload's template, run it once with no knob
// changes (like pgbench), check its data.

#include <fmt/format.h>

#include <algorithm>
#include <iostream>

#include "apply/interrupt.h"
#include "cli/commands.h"
#include "cli/options.h"
#include "common/errors.h"
#include "common/paths.h"
#include "common/progress.h"
#include "common/strings.h"
#include "driver/driver.h"
#include "experiment/bench.h"
#include "knobs/catalog.h"
#include "pg/connection.h"
#include "report/registry.h"
#include "report/text.h"
#include "server/managed_cluster.h"
#include "server/target.h"
#include "workload/dataset.h"
#include "workload/registry.h"
#include "workload/tpcc/audit.h"

namespace pgslow::cli {

namespace {

// Where the workload runs: the server the target options name, else the managed cluster
// (started if needed).
struct Target {
  std::string conninfo;
  std::unique_ptr<server::ServerControl> server;
};

Target open_target(Context& ctx, const TargetOptions& targs) {
  Target t;
  t.server = server::open_target(target_spec(ctx, targs));
  t.conninfo = t.server->conninfo();
  return t;
}

struct WorkloadArgs {
  std::string workload;
  int scale = 0;  // 0: not given
  TargetOptions target;
  std::uint64_t seed = 1;
  std::vector<std::string> options;  // KEY=VALUE
  std::vector<std::string> scripts;  // --script FILE[@WEIGHT]
};

void add_workload_args(CLI::App* cmd, WorkloadArgs& a) {
  cmd->add_option("--workload,-w", a.workload, "workload name (script when --script is given)");
  add_size_option(cmd, a.scale,
                  "data size: pgbench scale, warehouses (tpcc-lite), 1,000 rows (update-spread)");
  cmd->add_option("--option,-o", a.options,
                  "a workload option KEY=VALUE, repeatable (tpcc-lite: isolation=serializable, "
                  "load_connections=4)");
  cmd->add_option("--script,-f", a.scripts,
                  "a pgbench script file FILE[@WEIGHT] for -w script, repeatable (pgbench -f)");
  add_target_options(cmd, a.target);
}

const workload::Workload& resolve(WorkloadArgs& a, workload::WorkloadParams& params,
                                  std::vector<ConfigError>& problems) {
  if (!a.scripts.empty() && a.workload.empty()) a.workload = "script";
  if (a.workload.empty())
    throw InputError("--workload is required (`pgslow workloads` lists them), or --script FILE");
  const workload::Workload& w = workload::find_workload(a.workload);
  params.scale = a.scale > 0 ? a.scale : 1;
  params.seed = a.seed;
  for (const auto& kv : a.options) {
    const auto eq = kv.find('=');
    if (eq == std::string::npos || eq == 0) {
      ConfigError e;
      e.message = "--option '" + kv + "' is not KEY=VALUE";
      e.hint = "e.g. --option isolation=serializable";
      e.where.file = "command line";
      problems.push_back(std::move(e));
      continue;
    }
    params.options[kv.substr(0, eq)] = kv.substr(eq + 1);
  }
  workload::add_script_files(params, a.scripts);
  auto errs = w.validate(params);
  for (auto& e : errs)
    if (e.where.file.empty()) e.where.file = "command line";
  problems.insert(problems.end(), errs.begin(), errs.end());
  return w;
}

void throw_problems(std::vector<ConfigError> problems) {
  if (has_errors(problems)) throw InputError(std::move(problems));
}

// `bench --spec`: the audit's needs (docs/tpcc-lite.md, "The audit"), each unless given.
void apply_spec_defaults(WorkloadArgs& args, experiment::Timing& timing, const CLI::Option& warmup,
                         const CLI::Option& ramp, const CLI::Option& duration) {
  const bool isolation_given =
      std::any_of(args.options.begin(), args.options.end(),
                  [](const std::string& kv) { return kv.starts_with("isolation="); });
  if (!isolation_given) args.options.push_back("isolation=serializable");
  if (ramp.count() == 0) timing.ramp_s = 30;
  if (warmup.count() == 0) timing.warmup_s = timing.ramp_s + 60;
  if (duration.count() == 0) timing.duration_s = workload::tpcc::kMinMeasuredSeconds;  // 5.5.1.1
}

// The scale of the one clone of `w` on the server (check-data without --scale); an error when
// there is none or more than one.
int only_clone_scale(const std::string& conninfo, const workload::Workload& w) {
  int scale = 0;
  pg::Connection admin = pg::Connection::open(conninfo);
  std::string prefix = workload::clone_database_name(w.name(), 0);
  prefix.pop_back();  // "pgslow_<workload>_"
  pg::Result r = admin.exec_params(
      "SELECT datname FROM pg_database WHERE starts_with(datname, $1) ORDER BY datname", {prefix});
  std::vector<std::string> found;
  for (int i = 0; i < r.rows(); ++i) {
    std::string name(r.get(i, 0));
    std::string rest = name.substr(prefix.size());
    if (!rest.empty() && rest.find_first_not_of("0123456789") == std::string::npos) {
      found.push_back(name);
      scale = std::stoi(rest);
    }
  }
  if (found.empty())
    throw RuntimeError(
        fmt::format("no clone of {} to check: run `pgslow bench --workload {}` "
                    "first",
                    w.name(), w.name()));
  if (found.size() > 1)
    throw InputError(fmt::format("several clones of {} ({}): pass --{} to pick one", w.name(),
                                 join(found, ", "), w.size_name()));
  return scale;
}

void add_load_command(CLI::App& app, Context& ctx) {
  auto load_args = std::make_shared<WorkloadArgs>();
  auto force = std::make_shared<bool>(false);
  CLI::App* load = app.add_subcommand(
      "load", "load a workload's data into its template database (skipped when up to date)");
  add_workload_args(load, *load_args);
  load->add_flag("--force", *force, "reload even when the template is up to date");
  load->callback([&ctx, load_args, force] {
    before_command(ctx, "load");
    workload::WorkloadParams params;
    std::vector<ConfigError> problems;
    const workload::Workload& w = resolve(*load_args, params, problems);
    throw_problems(problems);
    Target t = open_target(ctx, load_args->target);
    ConsoleProgress progress;
    workload::Dataset ds(t.conninfo, w, params);
    ds.load(progress, *force);
  });
}

void add_bench_command(CLI::App& app, Context& ctx) {
  auto bench_args = std::make_shared<WorkloadArgs>();
  // The one measurement bench makes: the command line sets its load and timing.
  auto trial = std::make_shared<experiment::Trial>();
  experiment::Timing* timing = &trial->timing;
  results::LoadSettings* load = &trial->load;
  auto json_file = std::make_shared<std::string>();
  auto no_reset = std::make_shared<bool>(false);
  auto check_data = std::make_shared<bool>(false);
  auto think_time = std::make_shared<bool>(false);
  auto no_waits = std::make_shared<bool>(false);
  auto spec = std::make_shared<bool>(false);
  timing->duration_s = 10;
  timing->warmup_s = 0;
  CLI::App* bench = app.add_subcommand(
      "bench", "run a workload once with no knob changes (like pgbench), from a fresh clone");
  add_workload_args(bench, *bench_args);
  add_load_options(bench, *load);
  bench->add_flag("--think-time", *think_time,
                  "tpcc-lite: each terminal's keying time before and think time after every "
                  "transaction (5.2.5.7), as the spec's tpmC needs");
  bench->add_option("--workers,-j", timing->workers, "driver threads (0: one per core)")
      ->capture_default_str();
  CLI::Option* duration_opt =
      bench->add_option("--duration,-T", timing->duration_s, "measured seconds")
          ->capture_default_str();
  CLI::Option* warmup_opt =
      bench->add_option("--warmup", timing->warmup_s, "seconds before measuring")
          ->capture_default_str();
  CLI::Option* ramp_opt = bench->add_option(
      "--ramp", timing->ramp_s,
      "start the clients one by one over these seconds of the warm-up (0: all at once)");
  bench->add_flag("--spec", *spec,
                  "tpcc-lite: what the audit needs for the tpmC label: 10 terminals per "
                  "warehouse, keying and think times, serializable retried until commit, a "
                  "staggered --ramp (30 s) inside a warm-up one minute longer, and 120 minutes "
                  "measured (each unless given); the audit's rates need many warehouses besides");
  bench->add_option("--max-tries", timing->max_tries,
                    "attempts per transaction on serialization failure or deadlock, each after a "
                    "random backoff (default: until it commits for tpcc-lite under "
                    "repeatable-read or serializable, else 1: no retry)");
  add_protocol_option(bench, timing->protocol);
  auto pooler = std::make_shared<std::optional<server::PoolerSpec>>();
  add_pooler_option(bench, *pooler);
  bench->add_flag("--allow-partial", timing->allow_partial,
                  "run with the clients that could connect when the server refuses some");
  bench->add_option("--seed", bench_args->seed, "random seed of the inputs")->capture_default_str();
  bench->add_option("--json", *json_file,
                    "write the measurement as JSON to this file (-: to standard output, the "
                    "table to standard error)");
  bench->add_flag("--no-reset", *no_reset,
                  "run on the database --conninfo names as it is (e.g. tables `pgbench -i` made), "
                  "without a template clone");
  auto from_snapshot = std::make_shared<std::string>();
  add_from_snapshot_option(bench, *from_snapshot);
  bench->add_flag("--check-data", *check_data,
                  "run the workload's consistency checks after the run (exit 1 when one fails)");
  bench->add_flag("--no-wait-sampling", *no_waits,
                  "do not sample the backends' wait events (to measure the sampler's cost)");
  bench->callback([&ctx, bench_args, trial, json_file, no_reset, check_data, think_time, no_waits,
                   spec, warmup_opt, ramp_opt, duration_opt, from_snapshot, pooler] {
    before_command(ctx, "bench");
    std::ostream& out = result_stream({*json_file});
    if (*spec) {
      *think_time = true;
      apply_spec_defaults(*bench_args, trial->timing, *warmup_opt, *ramp_opt, *duration_opt);
    }
    workload::WorkloadParams params;
    params.clients = trial->load.clients;
    params.think_time = *think_time;
    std::vector<ConfigError> problems;
    const workload::Workload& w = resolve(*bench_args, params, problems);
    workload::resolve_clients(w, params, 1);
    trial->load.clients = params.clients;
    trial->timing.schedule_seed = bench_args->seed;
    trial->timing.check_data = *check_data;
    trial->timing.wait_sampling = !*no_waits;
    auto derrs =
        driver::validate(experiment::driver_options(*trial, params.clients), params.think_time);
    for (auto& e : derrs) e.where.file = "command line";
    problems.insert(problems.end(), derrs.begin(), derrs.end());
    throw_problems(problems);

    if (*no_reset && !bench_args->target.names_server())
      throw InputError("--no-reset needs --conninfo: the database to run on as it is");
    start_from_snapshot(ctx, *from_snapshot, bench_args->target.names_server());
    std::unique_ptr<server::ServerControl> server =
        server::open_target(target_spec(ctx, bench_args->target));
    ConsoleProgress progress;
    experiment::BenchOptions bench_options;
    bench_options.trial = *trial;
    bench_options.reset_data = !*no_reset;
    bench_options.workdir = ctx.workdir;
    bench_options.pooler = *pooler;
    const results::BenchResult result =
        experiment::run_bench(*server, w, params, bench_options, progress);
    out << report::rendered(result, "console") << std::flush;
    if (!json_file->empty())
      write_requested_output(*json_file, report::rendered(result, "json"), progress);
    if (result.interrupted)
      throw Error(kExitInterrupted, "interrupted: the result above is partial");
    // A failed check failed the measurement above (its error names the clauses).
    if (*check_data) out << "consistency checks: all passed\n";
  });
}

void add_check_data_command(CLI::App& app, Context& ctx) {
  auto check_args = std::make_shared<WorkloadArgs>();
  CLI::App* check = app.add_subcommand(
      "check-data", "run a workload's consistency checks on its current clone (exit 1 on failure)");
  add_workload_args(check, *check_args);
  auto check_format = std::make_shared<std::string>("console");
  check->add_option("--format", *check_format, "console | md | json (default: console)");
  check->callback([&ctx, check_args, check_format] {
    report::check_format<results::CheckDataResult>(*check_format);
    before_command(ctx, "check-data");
    workload::WorkloadParams params;
    std::vector<ConfigError> problems;
    const workload::Workload& w = resolve(*check_args, params, problems);
    throw_problems(problems);
    Target t = open_target(ctx, check_args->target);
    // No --scale: the one clone of this workload there is.
    if (check_args->scale == 0) params.scale = only_clone_scale(t.conninfo, w);
    workload::Dataset ds(t.conninfo, w, params);
    pg::Connection conn = pg::Connection::open(ds.clone_conninfo());
    const results::CheckDataResult result{std::string(w.name()), ds.clone_name(),
                                          w.check(conn, params)};
    report::render(result, *check_format, std::cout);
    std::cout << std::flush;
    if (!result.passed())
      throw RuntimeError(fmt::format("consistency checks failed on {}", ds.clone_name()));
  });
}

}  // namespace

void add_workload_commands(CLI::App& app, Context& ctx) {
  add_load_command(app, ctx);
  add_bench_command(app, ctx);
  add_check_data_command(app, ctx);
}

}  // namespace pgslow::cli
