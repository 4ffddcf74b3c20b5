// `pgslow cliff KNOB --from A --to B`: how far a knob can go from A towards B before it
// hurts. Parses and wires only: the search is bisect/cliff.h, the experiment
// stage/cliff_experiment.h, the output report/cliff.h; docs/cliff.md explains them.

#include <fmt/format.h>

#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <sstream>

#include "cli/commands.h"
#include "cli/options.h"
#include "common/paths.h"
#include "common/progress.h"
#include "report/cliff.h"
#include "report/metric.h"
#include "server/target.h"
#include "stage/cliff_experiment.h"

namespace pgslow::cli {
namespace {

struct CliffArgs {
  std::string knob;
  std::string from;
  std::string to;
  double resolution = 2;
  std::string workload = "tpcb-like";
  std::vector<std::string> scripts;  // --script FILE[@WEIGHT]: the script workload
  int scale = 1;
  int clients = 4;
  double duration = 10;
  double warmup = 2;
  int repeats = 3;
  int max_looks = 2;
  std::optional<report::Metric> metric;
  TargetOptions target;
  std::string json;
  std::string markdown;
  std::string csv;
  std::string html;
};

std::string point_line(const report::CliffPoint& p, report::Metric metric) {
  const report::EffectInterval e = report::in_metric_terms(metric, p.effect);
  return fmt::format("point {:>2}  {:<10} {:>2} runs  {:+6.1f}% [{:+.1f}%, {:+.1f}%]  {}{}",
                     p.order, p.value, p.samples.size(), (e.ratio - 1) * 100, (e.low - 1) * 100,
                     (e.high - 1) * 100, report::to_string(p.verdict),
                     p.looks > 1 ? fmt::format(" (look {})", p.looks) : "");
}

void write_output(const std::string& path, const std::string& text, Progress& progress) {
  if (path.empty()) return;
  write_file_durably(path, text);
  progress.note("wrote " + path);
}

void cliff_command(Context& ctx, const CliffArgs& a) {
  before_command(ctx, "cliff");
  stage::CliffExperiment e;
  e.options.knob = a.knob;
  e.options.from = a.from;
  e.options.to = a.to;
  e.options.search.metric = a.metric.value_or(report::Metric::kTps);
  e.options.search.resolution = a.resolution;
  e.options.search.repeats = a.repeats;
  e.options.search.max_looks = a.max_looks;
  e.workload = a.workload;
  e.scripts = a.scripts;
  e.scale = a.scale;
  e.clients = a.clients;
  e.duration_s = a.duration;
  e.warmup_s = a.warmup;
  e.target = target_spec(ctx, a.target);
  e.workdir = ctx.workdir;
  std::unique_ptr<server::ServerControl> server = server::open_target(*e.target);
  std::unique_ptr<Progress> progress;
  if (ctx.verbosity == Verbosity::kQuiet)
    progress = std::make_unique<SilentProgress>();
  else
    progress = std::make_unique<ConsoleProgress>();
  const report::Metric metric = e.options.search.metric;
  e.options.search.on_point = [&](const report::CliffPoint& p) {
    progress->note(point_line(p, metric));
  };
  const knobs::Catalog catalog = knobs::Catalog::load_default();
  const report::CliffResult result = stage::run_cliff_experiment(e, *server, catalog, *progress);

  std::ostringstream console;
  report::render_cliff_console(result, console);
  std::cout << console.str() << std::flush;
  write_output(a.json, report::cliff_to_json(result).dump(2) + "\n", *progress);
  auto rendered = [&](void (*render)(const report::CliffResult&, std::ostream&)) {
    std::ostringstream out;
    render(result, out);
    return out.str();
  };
  if (!a.markdown.empty())
    write_output(a.markdown, rendered(report::render_cliff_markdown), *progress);
  if (!a.csv.empty()) write_output(a.csv, rendered(report::render_cliff_csv), *progress);
  if (!a.html.empty()) write_output(a.html, rendered(report::render_cliff_html), *progress);
}

}  // namespace

void add_cliff_commands(CLI::App& app, Context& ctx) {
  auto a = std::make_shared<CliffArgs>();
  auto* cmd = app.add_subcommand(
      "cliff",
      "find how far a knob can go from one value towards another before it hurts: the last "
      "safe value and the first harmful one, with the curve and the evidence at each point");
  cmd->add_option("KNOB", a->knob, "a numeric parameter: work_mem, shared_buffers, ...")
      ->required();
  cmd->add_option("--from", a->from,
                  "the baseline value (safe by definition), e.g. 64MB; default: the server's "
                  "current value");
  cmd->add_option("--to", a->to, "the far end of the range, e.g. 64kB")->required();
  cmd->add_option("--resolution", a->resolution,
                  "the factor between neighbouring values the search still tells apart (log "
                  "scale; integer knobs stop at adjacent integers)")
      ->capture_default_str();
  cmd->add_option("--workload", a->workload, "workload to measure with")->capture_default_str();
  cmd->add_option("--script,-f", a->scripts,
                  "a pgbench script file FILE[@WEIGHT], repeatable: the script workload (e.g. "
                  "scenarios/scripts/sort-heavy.sql, whose sort spills to disk when work_mem is "
                  "small)");
  cmd->add_option("--scale", a->scale, "workload scale")->capture_default_str();
  cmd->add_option("--clients", a->clients, "simulated clients")->capture_default_str();
  cmd->add_option("--duration", a->duration, "seconds measured per run")->capture_default_str();
  cmd->add_option("--warmup", a->warmup, "seconds of warm-up before each run")
      ->capture_default_str();
  cmd->add_option("--repeats", a->repeats,
                  "runs of each point per look, each followed by a run of the baseline (>= 3)")
      ->capture_default_str();
  cmd->add_option("--max-looks", a->max_looks,
                  "times a point that looks worse but not clearly is measured again")
      ->capture_default_str();
  add_metric_option(cmd, a->metric, "default tps");
  add_target_options(cmd, a->target);
  cmd->add_option("--json", a->json, "also write the result as JSON to this file");
  cmd->add_option("--markdown", a->markdown, "also write the result as Markdown to this file");
  cmd->add_option("--csv", a->csv, "also write the points as CSV to this file");
  cmd->add_option("--html", a->html, "also write the result as HTML (with the curve drawn)");
  cmd->callback([&ctx, a] { cliff_command(ctx, *a); });
}

}  // namespace pgslow::cli
