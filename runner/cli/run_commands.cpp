// `pgslow run SCENARIO` and `pgslow plan SCENARIO`.

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <fstream>
#include <iostream>

#include "apply/interrupt.h"
#include "cli/commands.h"
#include "cli/options.h"
#include "cli/scenario_support.h"
#include "common/paths.h"
#include "common/printable.h"
#include "common/progress.h"
#include "common/strings.h"
#include "knobs/validate.h"
#include "pg/connection.h"
#include "report/reporter.h"
#include "report/versions.h"
#include "scenario/plan.h"
#include "scenario/run.h"
#include "server/managed_cluster.h"
#include "server/pg_versions.h"
#include "server/target.h"
#include "workshop/dashboard.h"

namespace pgslow::cli {

namespace fs = std::filesystem;

// A scenario argument is a file, or the name of one in scenarios/ ("quick").
fs::path resolve_scenario(const std::string& arg) {
  fs::path p(arg);
  if (fs::exists(p)) return p;
  for (const fs::path& candidate :
       {data_root() / "scenarios" / (arg + ".yaml"), data_root() / "scenarios" / arg,
        data_root() / "scenarios" / "workshop" / (arg + ".yaml")}) {
    if (fs::exists(candidate)) return candidate;
  }
  std::vector<std::string> names;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(data_root() / "scenarios", ec)) {
    if (e.path().extension() == ".yaml") names.push_back(e.path().stem().string());
  }
  auto suggestion = closest_match(arg, names);
  throw InputError(fmt::format(
      "no scenario file or named scenario '{}'{}; the named ones are: {}", arg,
      suggestion ? fmt::format(" (did you mean '{}'?)", *suggestion) : "", join(names, ", ")));
}

// Parse, open the target, validate against the live server. Changes nothing.
Prepared prepare(Context& ctx, const std::string& arg, const TargetOptions& targs,
                 const ScenarioOverrides& overrides) {
  Prepared p;
  p.scenario = scenario::load_scenario(resolve_scenario(arg));
  if (overrides.attribute) p.scenario.attribute = true;
  scenario::MeasureSpec& m = p.scenario.measure;
  if (overrides.precision) {
    const auto precision = scenario::parse_precision(*overrides.precision);
    if (!precision)
      throw InputError(
          fmt::format("--precision {} is not a precision: give the interval's "
                      "half-width between 0.5% and 50%, e.g. --precision 5%",
                      printable(*overrides.precision)));
    m.precision = *precision;
  }
  if (overrides.budget_s) {
    if (*overrides.budget_s < 10)
      throw InputError(
          "--budget must be at least 10 (seconds): a switchback stage needs a few "
          "blocks of each configuration");
    m.budget_s = *overrides.budget_s;
  }
  if (overrides.design) {
    if (*overrides.design != "auto" && *overrides.design != "isolated")
      throw InputError(
          fmt::format("--design {} is not a design: use auto (switchback where the "
                      "knobs allow it) or isolated (separate runs)",
                      printable(*overrides.design)));
    m.switchback = *overrides.design == "auto";
  }
  p.catalog = knobs::Catalog::load_default();
  // The target options win over the scenario's own target.
  p.target = target_spec(ctx, targs, &p.scenario.target);
  p.server = server::open_target(p.target);
  pg::Connection conn = pg::Connection::open(p.server->conninfo());
  knobs::ServerSettings settings = knobs::ServerSettings::read(conn);
  p.plan = scenario::make_plan(p.scenario, p.catalog, settings);
  return p;
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

scenario::RunOptions run_options_for(const Prepared& prepared) {
  scenario::RunOptions options;
  options.target = prepared.target;
  return options;
}

fs::path default_out_dir(const std::string& scenario_name) {
  // Every kind of name that ends up here was checked where it was read (with its file and
  // line); this is the last guard that no name leads out of results/.
  if (std::string why = unsafe_file_name_reason(scenario_name); !why.empty())
    throw InputError(
        fmt::format("the results folder name \"{}\" {}", printable(scenario_name), why));
  std::time_t t = std::time(nullptr);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y%m%d-%H%M%S", std::localtime(&t));
  return fs::path("results") / fmt::format("{}-{}", scenario_name, buf);
}

void render(const report::Run& run, std::string_view format, std::ostream& out) {
  report::make_reporter(format)->report(run, out);
}

// report.md/.json/.csv/.html and one server log excerpt per stage.
void write_results(const report::Run& run, const fs::path& dir) {
  fs::create_directories(dir / "logs");
  for (const auto& [format, file] :
       std::vector<std::pair<std::string, std::string>>{{"md", "report.md"},
                                                        {"json", "report.json"},
                                                        {"csv", "report.csv"},
                                                        {"html", "report.html"}}) {
    std::ofstream out(dir / file);
    render(run, format, out);
  }
  for (std::size_t i = 0; i < run.stages.size(); ++i) {
    const auto& st = run.stages[i];
    std::string name = fmt::format("{:02}-{}.log", i, st.name);
    for (char& c : name) {
      if (!std::isalnum(static_cast<unsigned char>(c)) && c != '.' && c != '-') c = '_';
    }
    std::ofstream out(dir / "logs" / name);
    out << st.log_excerpt;
  }
}

namespace {

struct RunArgs {
  std::string scenario;
  std::string out;
  TargetOptions target;
  std::optional<double> duration, warmup;
  std::optional<int> repeats;
  int workers = 0;
  int max_tries = 1;
  bool allow_partial = false;
  driver::Protocol protocol = driver::Protocol::kPrepared;
  ScenarioOverrides overrides;  // --attribute, --precision, --budget, --design
  bool check_data = false;
  std::optional<report::Metric> metric;  // --metric: what attributions judge by
  std::vector<std::string> versions;     // --versions 15,16,17,18
};

// Runs a validated scenario, writes its results to `out_dir`, and returns them. The
// configuration is restored on every way out (scenario::run_plan).
report::Run run_prepared(Context& ctx, Prepared& p, const RunArgs& a, const fs::path& out_dir,
                         Progress& progress) {
  scenario::RunOptions options = run_options_for(p);
  options.duration_s = a.duration;
  options.warmup_s = a.warmup;
  options.repeats = a.repeats;
  options.workers = a.workers;
  options.max_tries = a.max_tries;
  options.allow_partial = a.allow_partial;
  options.protocol = a.protocol;
  options.check_data = a.check_data;
  options.metric = a.metric;

  progress.note(fmt::format("pgslow run {}: {} stages on {}, about {:.0f} s of measuring",
                            p.scenario.name, p.plan.stages.size(), p.server->describe(),
                            p.plan.estimated_seconds));
  report::Run run;
  try {
    scenario::run_plan(p.plan, *p.server, p.catalog, ctx.workdir, options, progress, run);
  } catch (const apply::Interrupted& e) {
    // run_plan restored the configuration before this (also when the signal came during the
    // final restore); the exit code is 130/143 all the same.
    if (!run.stages.empty()) {
      write_results(run, out_dir);
      render(run, "console", std::cout);
      std::cerr << fmt::format("pgslow: {}; configuration restored; results so far in {}\n",
                               e.what(), out_dir.string());
    }
    throw;
  }
  write_results(run, out_dir);
  return run;
}

// Exit status of a finished run: 1 when the baseline or every changed stage failed (nothing
// it was asked to measure was measured), kExitExpectation when an expectation failed. `which`
// names the run among several ("PostgreSQL 16: "), or is empty.
void check_run(const report::Run& run, const fs::path& out_dir, const std::string& which = "") {
  std::size_t failed = 0;
  for (std::size_t i = 1; i < run.stages.size(); ++i) failed += run.stages[i].error.empty() ? 0 : 1;
  if (!run.stages.empty() && !run.stages.front().error.empty())
    throw RuntimeError(fmt::format(
        "{}the baseline stage failed: {}; nothing could be compared (the configuration is "
        "restored)",
        which, run.stages.front().error));
  if (run.stages.size() > 1 && failed == run.stages.size() - 1)
    throw RuntimeError(
        fmt::format("{}every changed stage failed ({} of {}); see the errors above and the logs "
                    "in {} (the configuration is restored)",
                    which, failed, run.stages.size() - 1, (out_dir / "logs").string()));
  for (const auto& e : run.expectations) {
    if (!e.passed) {
      throw Error(kExitExpectation,
                  fmt::format("{}expectation failed: {} (measured: {})", which, e.text, e.detail));
    }
  }
}

// `run --versions 15,16,17,18`: the same scenario on each version's managed cluster, one after
// the other, then one report with the versions side by side. Every version is validated before
// the first one changes anything. While one version is measured, the other versions' clusters
// are stopped: their checkpoints, autovacuum and memory would otherwise share the machine with
// the measurement (a version's last stage leaves dirty buffers that its checkpointer writes out
// minutes later). At the end every cluster runs again, as one `run` leaves its cluster. With
// --dashboard, the page follows every version's progress and server counters.
void run_versions(Context& ctx, const RunArgs& a, CLI::App* cmd, const DashboardArgs& dashboard) {
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
  std::vector<Prepared> prepared;
  for (int major : majors) {
    Context c = ctx;
    c.pg_version = major;
    Prepared p = prepare(c, a.scenario, a.target, a.overrides);
    if (p.target.kind != server::TargetKind::kManaged) {
      throw InputError(
          fmt::format("--versions runs on pgslow's managed clusters, and the target is a {} server",
                      server::to_string(p.target.kind)));
    }
    prepared.push_back(std::move(p));
  }
  const std::string name = prepared.front().scenario.name;
  const fs::path out_dir = a.out.empty() ? default_out_dir(name) : fs::path(a.out);

  ConsoleProgress console;
  std::unique_ptr<workshop::Dashboard> board =
      open_dashboard(cmd, dashboard, "pgslow run --versions " + name);
  SilentProgress none;
  TeeProgress progress(console, board ? static_cast<Progress&>(*board) : none);

  report::VersionRuns runs;
  std::vector<fs::path> dirs;
  auto cluster = [&](std::size_t i) {
    return dynamic_cast<server::ManagedCluster*>(prepared[i].server.get());
  };
  for (std::size_t i = 0; i < majors.size(); ++i) {
    for (std::size_t j = 0; j < majors.size(); ++j) {
      if (j == i || cluster(j) == nullptr || !cluster(j)->is_running()) continue;
      spdlog::info("stopping the PostgreSQL {} cluster while PostgreSQL {} is measured", majors[j],
                   majors[i]);
      cluster(j)->stop();
    }
    if (cluster(i) != nullptr && !cluster(i)->is_running()) cluster(i)->start();
    if (board) board->watch_server(prepared[i].server->conninfo());
    Context c = ctx;
    c.pg_version = majors[i];
    dirs.push_back(out_dir / fmt::format("pg{}", majors[i]));
    runs.runs.push_back(run_prepared(c, prepared[i], a, dirs.back(), progress));
  }
  for (std::size_t i = 0; i < majors.size(); ++i) {
    if (cluster(i) != nullptr && !cluster(i)->is_running()) cluster(i)->start();
  }
  fs::create_directories(out_dir);
  for (const auto& format : report::version_report_formats()) {
    if (format == "console") continue;
    std::ofstream out(out_dir / ("versions." + format));
    report::render_versions(runs, format, out);
  }
  report::render_versions(runs, "console", std::cout);
  std::cout << fmt::format(
      "\nResults: {0}/versions.md (.json .csv .html); each version's own report in {0}/pg<N>/\n",
      out_dir.string());
  linger(board.get(), dashboard);
  for (std::size_t i = 0; i < majors.size(); ++i)
    check_run(runs.runs[i], dirs[i], fmt::format("PostgreSQL {}: ", majors[i]));
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
    cmd->callback([&ctx, scenario_arg, targs, overrides] {
      before_command(ctx, "plan");
      Prepared p = prepare(ctx, *scenario_arg, *targs, *overrides);
      scenario::print_plan(p.plan, std::cout);
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
    cmd->add_option("--max-tries", a->max_tries,
                    "attempts per transaction on serialization failure or deadlock");
    cmd->add_flag("--allow-partial", a->allow_partial, "go on when some clients cannot connect");
    add_protocol_option(cmd, a->protocol);
    add_measure_overrides(cmd, a->overrides);
    cmd->add_flag("--attribute", a->overrides.attribute,
                  "name each knob's part in every stage with several knobs (extra runs; "
                  "`pgslow plan --attribute` shows how many)");
    add_metric_option(cmd, a->metric,
                      "for the attributions (default: the scenario's measure.metric, else tps)");
    cmd->add_flag("--check-data", a->check_data,
                  "run the workload's consistency checks after each run; a failed check fails "
                  "the stage");
    cmd->add_option("--versions", a->versions,
                    "run on the managed cluster of each of these PostgreSQL major versions "
                    "(e.g. 15,16,17,18) and report them side by side")
        ->delimiter(',');
    auto dashboard = add_dashboard_options(cmd);
    cmd->callback([&ctx, a, cmd, dashboard] {
      before_command(ctx, "run");
      if (!a->versions.empty()) return run_versions(ctx, *a, cmd, *dashboard);
      Prepared p = prepare(ctx, a->scenario, a->target, a->overrides);
      fs::path out_dir = a->out.empty() ? default_out_dir(p.scenario.name) : fs::path(a->out);
      ConsoleProgress console;
      std::unique_ptr<workshop::Dashboard> board =
          open_dashboard(cmd, *dashboard, "pgslow run " + p.scenario.name);
      if (board) board->watch_server(p.server->conninfo());
      SilentProgress none;
      TeeProgress progress(console, board ? static_cast<Progress&>(*board) : none);
      report::Run run = run_prepared(ctx, p, *a, out_dir, progress);
      render(run, "console", std::cout);
      std::cout << fmt::format("\nResults: {}/report.md (.json .csv .html)\n", out_dir.string());
      linger(board.get(), *dashboard);
      check_run(run, out_dir);
    });
  }
}

}  // namespace pgslow::cli
