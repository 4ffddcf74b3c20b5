// `pgslow cliff KNOB --from A --to B`: how far a knob can go from A towards B before it
// hurts. Parses and wires only: the search is search/cliff_search.h, the experiment
// experiment/cliff_experiment.h, the output report/cliff_view.h; docs/cliff.md explains them.

#include <fmt/format.h>

#include <iostream>
#include <memory>

#include "cli/commands.h"
#include "cli/options.h"
#include "common/progress.h"
#include "experiment/cliff_experiment.h"
#include "report/cliff_view.h"
#include "report/registry.h"
#include "results/metric.h"
#include "server/target.h"

namespace pgslow::cli {
namespace {

struct CliffArgs {
  experiment::CliffExperiment experiment;  // the options bind to its fields
  std::optional<results::Metric> metric;
  std::vector<std::string> fixed;  // --set KNOB=VALUE
  TargetOptions target;
  std::string json;
  std::string markdown;
  std::string csv;
  std::string html;
};

void cliff_command(Context& ctx, CliffArgs& a) {
  before_command(ctx, "cliff");
  std::ostream& out = result_stream({a.json, a.markdown, a.csv, a.html});
  experiment::CliffExperiment& e = a.experiment;
  e.options.search.metric = a.metric.value_or(results::Metric::kTps);
  e.target = target_spec(ctx, a.target);
  refuse_command_target(*e.target, "cliff");
  e.workdir = ctx.workdir;
  std::unique_ptr<server::ServerControl> server = server::open_target(*e.target);
  std::unique_ptr<Progress> progress = command_progress(ctx);
  const results::Metric metric = e.options.search.metric;
  e.options.search.on_point = [&](const results::CliffPoint& p) {
    progress->note(report::cliff_point_line(p, metric));
  };
  const knobs::Catalog catalog = knobs::Catalog::load_default();
  e.options.settings = parse_knob_assignments(a.fixed, catalog);
  const results::CliffResult result =
      experiment::run_cliff_experiment(e, *server, catalog, *progress);

  out << report::rendered(result, "console") << std::flush;
  for (const auto& [format, path] : {std::pair{"json", a.json}, std::pair{"md", a.markdown},
                                     std::pair{"csv", a.csv}, std::pair{"html", a.html}}) {
    if (!path.empty()) write_requested_output(path, report::rendered(result, format), *progress);
  }
}

}  // namespace

void add_cliff_commands(CLI::App& app, Context& ctx) {
  auto a = std::make_shared<CliffArgs>();
  auto* cmd = app.add_subcommand(
      "cliff",
      "find how far a knob can go from one value towards another before it hurts: the last "
      "safe value and the first harmful one, with the curve and the evidence at each point");
  cmd->add_option("KNOB", a->experiment.options.knob,
                  "a numeric parameter (work_mem, shared_buffers, ...), or the server's machine: "
                  "server.memory, server.cpus (with --memory/--cpus to start from)")
      ->required();
  cmd->add_option("--set", a->fixed,
                  "KNOB=VALUE for every run, the baseline's too (repeatable), e.g. "
                  "shared_buffers=16MB while server.memory is searched");
  cmd->add_option("--from", a->experiment.options.from,
                  "the baseline value (safe by definition), e.g. 64MB; default: the server's "
                  "current value");
  cmd->add_option("--to", a->experiment.options.to, "the far end of the range, e.g. 64kB")
      ->required();
  cmd->add_option("--resolution", a->experiment.options.search.resolution,
                  "the factor between neighbouring values the search still tells apart (log "
                  "scale; integer knobs stop at adjacent integers)")
      ->capture_default_str();
  cmd->add_option("--workload", a->experiment.workload, "workload to measure with")
      ->capture_default_str();
  cmd->add_option("--script,-f", a->experiment.scripts,
                  "a pgbench script file FILE[@WEIGHT], repeatable: the script workload (e.g. "
                  "scenarios/scripts/sort-heavy.sql, whose sort spills to disk when work_mem is "
                  "small)");
  add_size_option(cmd, a->experiment.scale, "workload scale (tpcc-lite: warehouses)")
      ->capture_default_str();
  cmd->add_option("--clients", a->experiment.clients, "simulated clients")->capture_default_str();
  cmd->add_option("--duration", a->experiment.duration_s, "seconds measured per run")
      ->capture_default_str();
  cmd->add_option("--warmup", a->experiment.warmup_s, "seconds of warm-up before each run")
      ->capture_default_str();
  cmd->add_option("--repeats", a->experiment.options.search.repeats,
                  "runs of each point per look, each followed by a run of the baseline (>= 3)")
      ->capture_default_str();
  cmd->add_option("--max-looks", a->experiment.options.search.max_looks,
                  "times a point that looks worse but not clearly is measured again")
      ->capture_default_str();
  add_metric_option(cmd, a->metric, "default tps");
  add_target_options(cmd, a->target);
  cmd->add_option("--json", a->json,
                  "also write the result as JSON to this file (-: to standard output, the table "
                  "to standard error)");
  cmd->add_option("--markdown", a->markdown,
                  "also write the result as Markdown to this file (-: standard output)");
  cmd->add_option("--csv", a->csv,
                  "also write the points as CSV to this file (-: standard output)");
  cmd->add_option("--html", a->html,
                  "also write the result as HTML (with the curve drawn; -: standard output)");
  cmd->callback([&ctx, a] { cliff_command(ctx, *a); });
}

}  // namespace pgslow::cli
