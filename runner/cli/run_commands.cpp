// `pgslow run SCENARIO` and `pgslow plan SCENARIO`.

#include <fmt/format.h>

#include <algorithm>
#include <iostream>

#include "cli/commands.h"
#include "cli/options.h"
#include "cli/scenario_support.h"
#include "common/paths.h"
#include "common/process.h"
#include "common/progress.h"
#include "common/strings.h"
#include "experiment/run.h"
#include "report/registry.h"
#include "report/text.h"
#include "report/versions_view.h"
#include "results/axes.h"
#include "scenario/library.h"
#include "scenario/plan.h"
#include "server/pg_versions.h"
#include "server/target.h"
#include "server/target_kind.h"
#include "workshop/dashboard.h"

namespace pgslow::cli {

namespace fs = std::filesystem;

Prepared prepare(Context& ctx, const std::string& arg, const TargetOptions& targs,
                 const ScenarioOverrides& overrides) {
  // The target options win over the scenario's own target.
  return experiment::prepare_scenario(
      scenario::resolve_scenario(arg), overrides,
      [&](const server::TargetSpec& own) { return target_spec(ctx, targs, &own); });
}

void add_measure_overrides(CLI::App* cmd, ScenarioOverrides& overrides) {
  cmd->add_option("--precision", overrides.precision,
                  "measure each switchback stage until its 95% interval is this narrow, e.g. "
                  "5% (within --budget); overrides measure.precision");
  cmd->add_option("--budget", overrides.budget_s,
                  "seconds a switchback stage may take to reach --precision (default 120)");
  cmd->add_option("--design", overrides.design,
                  "auto: reload-only stages switch back and forth with the baseline in one run; "
                  "isolated: every stage in separate runs");
}

namespace {

struct RunArgs {
  std::string scenario;
  std::string out;
  TargetOptions target;
  std::optional<double> duration, warmup;
  std::optional<int> repeats;
  int workers = 0;
  int max_tries = 0;
  bool allow_partial = false;
  driver::Protocol protocol = driver::Protocol::kPrepared;
  bool protocol_given = false;  // -M was given: over the scenario's measure.protocol
  ScenarioOverrides overrides;  // --attribute, --precision, --budget, --design, --pooler
  bool check_data = false;
  bool no_wait_sampling = false;
  bool keep_data = false;  // --keep-data
  bool detail = false;  // --detail: every axis, the evidence and the attribution under each stage
  std::string json;     // --json FILE|-: report.json's document there too (-: standard output)
  std::optional<results::Metric> metric;  // --metric: what attributions judge by
  bool metric_auto = false;               // --metric auto
  std::vector<std::string> versions;      // --versions 15,16,17,18
  std::string from_snapshot;              // --from-snapshot NAME
};

experiment::RunOptions run_options(const RunArgs& a) {
  experiment::RunOptions options;
  options.duration_s = a.duration;
  options.warmup_s = a.warmup;
  options.repeats = a.repeats;
  options.workers = a.workers;
  options.max_tries = a.max_tries;
  options.allow_partial = a.allow_partial;
  if (a.protocol_given) options.protocol = a.protocol;
  options.check_data = a.check_data;
  options.no_wait_sampling = a.no_wait_sampling;
  options.keep_data = a.keep_data;
  options.metric = a.metric;
  // --precision watches the metric's own axis; auto (the default): TPS or CPU/tx, first.
  options.precision_axis = a.metric ? results::precision_axis_of(*a.metric) : "auto";
  options.pooler = a.overrides.pooler;
  return options;
}

// A run's results folder and `--versions`' side by side files in every format; the stages so far
// of an interrupted run on `out` (the terminal, or standard error under `--json -`).
experiment::ResultsOutput results_output(bool detail, std::ostream& out) {
  return {report::write_results,
          [detail, &out](const results::Run& run) {
            report::render_console(run, out, {detail, report::output_columns()});
          },
          report::write_versions};
}

// pgslow's managed cluster stays up after a run (the next one starts at once); says so, and the
// commands that stop or remove it, with this run's own program, workdir and version.
std::string left_running_note(const Context& ctx, const Prepared& p) {
  if (!server::target_kind(p.target.kind).in_workdir) return "";
  std::vector<std::string> pgslow{ctx.program, "--workdir", ctx.workdir.string()};
  if (ctx.pg_version) {
    pgslow.push_back("--pg-version");
    pgslow.push_back(std::to_string(*ctx.pg_version));
  }
  const std::string cmd = shell_quote(pgslow);
  std::string text;
  for (const auto& line :
       report::wrap_text(fmt::format("Still running: the {}; `{} server stop` stops it, `{} "
                                     "server destroy` removes it and its data",
                                     p.server->describe(), cmd, cmd),
                         report::output_columns(), "  "))
    text += line + "\n";
  return text;
}

// `run --versions 15,16,17,18`: the same scenario on each version's managed cluster, one after
// the other, then one report with the versions side by side. Every version is validated before
// the first one changes anything. While one version is measured, the other versions' clusters
// are stopped: their checkpoints, autovacuum and memory would otherwise share the machine with
// the measurement (a version's last stage leaves dirty buffers that its checkpointer writes out
// minutes later). At the end every cluster runs again, as one `run` leaves its cluster. With
// --dashboard, the page follows every version's progress and server counters.
void run_versions(Context& ctx, const RunArgs& a, CLI::App* cmd, const DashboardArgs& dashboard) {
  std::ostream& out = result_stream({a.json});
  std::vector<int> majors;
  for (const auto& text : a.versions) {
    int major = server::parse_major_version(text);
    if (std::find(majors.begin(), majors.end(), major) != majors.end())
      throw InputError(fmt::format("--versions names PostgreSQL {} twice", major));
    majors.push_back(major);
  }
  if (ctx.pg_version) {
    throw InputError("give either --pg-version (or $PGSLOW_PG_VERSION) or --versions, not both");
  }
  if (ctx.pg_bin)
    throw InputError("--versions picks each version's programs itself: drop --pg-bin");
  // Every version's programs are there before the first cluster is created or started: a
  // missing one (`pgslow server install N`) leaves the workdir as it was.
  for (int major : majors) server::pg_bin_for_version(major);
  std::vector<experiment::VersionPoint> versions;
  for (int major : majors) {
    Context c = ctx;
    c.pg_version = major;
    Prepared p = prepare(c, a.scenario, a.target, a.overrides);
    if (!server::target_kind(p.target.kind).in_workdir) {
      throw InputError(
          fmt::format("--versions runs on pgslow's managed clusters, and the target is a {} server",
                      server::to_string(p.target.kind)));
    }
    versions.push_back({major, std::move(p)});
  }
  const std::string name = versions.front().prepared.scenario.name;
  const fs::path out_dir = experiment::results_folder(a.out, name);

  ConsoleProgress console;
  std::unique_ptr<workshop::Dashboard> board =
      open_dashboard(cmd, dashboard, "pgslow run --versions " + name);
  SilentProgress none;
  TeeProgress progress(console, board ? static_cast<Progress&>(*board) : none);
  const results::VersionRuns runs = experiment::run_versions(
      versions, run_options(a), ctx.workdir, out_dir, progress, results_output(a.detail, out),
      [&](const experiment::VersionPoint& v) {
        if (board)
          board->watch_server(v.prepared.server->conninfo(), v.prepared.server->data_dir());
      });
  report::render(runs, "console", out);
  if (!a.json.empty()) write_requested_output(a.json, report::rendered(runs, "json"), progress);
  out << fmt::format(
      "\nResults: {0}/versions.md (.json .csv .html); each version's own report in {0}/pg<N>/\n",
      out_dir.string());
  linger(board.get(), dashboard);
  for (std::size_t i = 0; i < versions.size(); ++i)
    experiment::check_run(runs.runs[i], out_dir / fmt::format("pg{}", versions[i].major),
                          fmt::format("PostgreSQL {}: ", versions[i].major));
}

}  // namespace

void add_run_commands(CLI::App& app, Context& ctx) {
  // pgslow plan
  {
    auto* cmd = app.add_subcommand("plan", "show what a run would do, changing nothing");
    auto scenario_arg = std::make_shared<std::string>();
    auto overrides = std::make_shared<ScenarioOverrides>();
    cmd->add_option("scenario", *scenario_arg, "scenario file or name (scenarios/NAME.yaml)")
        ->required();
    auto targs = std::make_shared<TargetOptions>();
    add_target_options(cmd, *targs);
    cmd->add_flag("--attribute", overrides->attribute,
                  "show the cost of naming each knob's part in every multi-knob stage");
    add_measure_overrides(cmd, *overrides);
    auto format = std::make_shared<std::string>("console");
    cmd->add_option("--format,-f", *format, "console | md | json (default: console)");
    cmd->callback([&ctx, scenario_arg, targs, overrides, format] {
      report::check_format<results::PlanResult>(*format);
      before_command(ctx, "plan");
      Prepared p = prepare(ctx, *scenario_arg, *targs, *overrides);
      report::render(scenario::plan_result(p.plan), *format, std::cout);
    });
  }
  // pgslow run
  {
    auto* cmd = app.add_subcommand("run", "run a scenario and print the before/after table");
    auto a = std::make_shared<RunArgs>();
    cmd->add_option("scenario", a->scenario, "scenario file or name (scenarios/NAME.yaml)")
        ->required();
    cmd->add_option("--out", a->out, "results folder (default results/<scenario>-<time>)");
    add_target_options(cmd, a->target);
    cmd->add_option("--duration", a->duration, "seconds per measured run (overrides the scenario)");
    cmd->add_option("--warmup", a->warmup, "warm-up seconds (overrides the scenario)");
    cmd->add_option("--repeats", a->repeats, "measured runs per stage (overrides the scenario)");
    cmd->add_option("--workers", a->workers, "driver threads (default: one per core)");
    cmd->add_option(
        "--max-tries", a->max_tries,
        "attempts per transaction on serialization failure or deadlock (default: "
        "the workload's: until it commits for tpcc-lite's strict isolation levels, else 1)");
    cmd->add_flag("--allow-partial", a->allow_partial, "go on when some clients cannot connect");
    add_protocol_option(cmd, a->protocol);
    add_pooler_option(cmd, a->overrides.pooler);
    add_measure_overrides(cmd, a->overrides);
    cmd->add_flag("--attribute", a->overrides.attribute,
                  "name each knob's part in every stage with several knobs (extra runs; "
                  "`pgslow plan --attribute` shows how many)");
    add_metric_option(cmd, a->metric,
                      "for the attributions (default: the scenario's measure.metric, else tps) "
                      "and the axis --precision watches; auto (the default): attributions by "
                      "tps, and --precision stops when TPS or CPU/tx reaches it, whichever first",
                      &a->metric_auto);
    cmd->add_flag("--check-data", a->check_data,
                  "run the workload's consistency checks after each run; a failed check fails "
                  "the stage");
    cmd->add_flag("--detail", a->detail,
                  "under each stage, every axis, the evidence, waits, warnings and the "
                  "attribution (report.md has them too)");
    cmd->add_option("--json", a->json,
                    "also write the run's report.json document to this file (-: to standard "
                    "output, the table to standard error; with --versions, versions.json's)");
    cmd->add_flag("--no-wait-sampling", a->no_wait_sampling,
                  "do not sample the backends' wait events (the report then has no \"waits\")");
    cmd->add_flag("--keep-data", a->keep_data,
                  "on a server pgslow does not own (not the managed cluster), keep the "
                  "workload's databases for the next run instead of dropping them at the end");
    cmd->add_option("--versions", a->versions,
                    "run on the managed cluster of each of these PostgreSQL major versions "
                    "(e.g. 15,16,17,18) and report them side by side")
        ->delimiter(',');
    add_from_snapshot_option(cmd, a->from_snapshot);
    auto dashboard = add_dashboard_options(cmd);
    cmd->callback([&ctx, a, cmd, dashboard] {
      before_command(ctx, "run");
      a->protocol_given = cmd->get_option("--protocol")->count() > 0;
      if (!a->from_snapshot.empty() && !a->versions.empty()) {
        throw InputError(
            "--from-snapshot names one cluster's snapshot: run each version with --pg-version N "
            "--from-snapshot NAME instead of --versions");
      }
      start_from_snapshot(ctx, a->from_snapshot, a->target.names_server());
      if (!a->versions.empty()) return run_versions(ctx, *a, cmd, *dashboard);
      Prepared p = prepare(ctx, a->scenario, a->target, a->overrides);
      fs::path out_dir = experiment::results_folder(a->out, p.scenario.name);
      ConsoleProgress console;
      std::unique_ptr<workshop::Dashboard> board =
          open_dashboard(cmd, *dashboard, "pgslow run " + p.scenario.name);
      if (board) board->watch_server(p.server->conninfo(), p.server->data_dir());
      SilentProgress none;
      TeeProgress progress(console, board ? static_cast<Progress&>(*board) : none);
      std::ostream& out = result_stream({a->json});
      results::Run run = experiment::run_prepared(p, run_options(*a), ctx.workdir, out_dir,
                                                  progress, results_output(a->detail, out));
      report::render_console(run, out, {a->detail, report::output_columns()});
      if (!a->json.empty())
        write_requested_output(a->json, report::rendered(run, "json"), progress);
      out << fmt::format("\nResults: {}/report.md (.json .csv .html)\n", out_dir.string());
      out << left_running_note(ctx, p);
      linger(board.get(), *dashboard);
      experiment::check_run(run, out_dir);
    });
  }
}

}  // namespace pgslow::cli
