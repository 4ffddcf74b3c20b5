// `pgslow bisect --good G --bad B`: which knob(s) of the bad configuration make it slow.
// The method and the output are explained in docs/bisect.md.

#include <fmt/format.h>

#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <sstream>

#include "bisect/attribution.h"
#include "bisect/bisector.h"
#include "bisect/configuration.h"
#include "bisect/lab_measurer.h"
#include "cli/commands.h"
#include "cli/options.h"
#include "common/paths.h"
#include "common/progress.h"
#include "common/strings.h"
#include "driver/driver.h"
#include "knobs/validate.h"
#include "pg/connection.h"
#include "report/bisect.h"
#include "report/metric.h"
#include "server/target.h"
#include "stage/lab_session.h"
#include "workload/registry.h"

namespace pgslow::cli {
namespace {

struct BisectArgs {
  std::string good;
  std::string bad;
  std::string workload = "tpcb-like";
  int scale = 1;
  int clients = 4;
  double duration = 10;
  double warmup = 2;
  int repeats = 3;
  int max_repeats = 5;
  double min_effect = 10;  // percent
  bool isolate = false;
  std::optional<report::Metric> metric;  // unset: tps
  TargetOptions target;
  std::string json;
  std::string markdown;
};

std::string run_line(const bisect::RunRecord& r, std::size_t candidates, report::Metric metric) {
  std::string what = r.knobs.empty()                ? "good"
                     : r.knobs.size() == candidates ? fmt::format("bad ({} changes)", candidates)
                     : r.knobs.size() <= 3          ? "good + " + join(r.knobs, ", ")
                                           : fmt::format("good + {} changes", r.knobs.size());
  return fmt::format("run {:>3}  {:<9} {:<44} {:>3} run{}  {:>16}  {:<9} {:.1f} s{}", r.number,
                     r.purpose, what, r.new_runs, r.new_runs == 1 ? " " : "s",
                     report::format_metric_value(metric, r.tps_level), bisect::to_string(r.verdict),
                     r.seconds, r.restart ? "  (restart)" : "");
}

void bisect_command(Context& ctx, const BisectArgs& a) {
  before_command(ctx, "bisect");
  std::vector<ConfigError> problems;
  auto bad_option = [&](const std::string& message) {
    problems.push_back({{"command line", 0, 0}, message, "", ConfigError::Severity::kError});
  };
  if (a.repeats < 2)
    bad_option("--repeats must be at least 2: the noise needs two runs of each level");
  if (a.max_repeats < 1) bad_option("--max-repeats must be at least 1");
  if (a.min_effect <= 0 || a.min_effect >= 100)
    bad_option("--min-effect must be a percentage between 0 and 100");
  if (a.duration <= 0) bad_option("--duration must be positive (seconds)");
  if (a.warmup < 0) bad_option("--warmup must not be negative (seconds)");

  knobs::Catalog catalog = knobs::Catalog::load_default();
  bisect::Configuration good = bisect::load_configuration(a.good, catalog);
  bisect::Configuration bad = bisect::load_configuration(a.bad, catalog);

  const workload::Workload& wl = workload::find_workload(a.workload);
  workload::WorkloadParams params;
  params.scale = a.scale;
  params.clients = a.clients;
  for (auto& p : wl.validate(params)) problems.push_back(p);
  driver::DriverOptions options;
  options.clients = params.clients;
  options.duration_s = a.duration;
  options.warmup_s = a.warmup;
  for (auto& p : driver::validate(options)) problems.push_back(p);
  if (has_errors(problems)) throw InputError(problems);

  server::TargetSpec spec = target_spec(ctx, a.target);
  std::unique_ptr<server::ServerControl> server = server::open_target(spec);
  const report::Metric metric = a.metric.value_or(report::Metric::kTps);
  bisect::require_measurable(metric, *server);

  // Validation first: nothing changes on the server before every candidate has a verdict.
  knobs::ServerSettings live;
  {
    pg::Connection conn = pg::Connection::open(server->conninfo());
    live = knobs::ServerSettings::read(conn);
  }
  bisect::Difference diff = bisect::difference(good, bad, catalog, live);
  int restart_candidates = 0;
  for (const auto& c : diff.candidates) restart_candidates += c.needs_restart ? 1 : 0;
  std::unique_ptr<Progress> progress;
  if (ctx.verbosity == Verbosity::kQuiet)
    progress = std::make_unique<SilentProgress>();
  else
    progress = std::make_unique<ConsoleProgress>();
  progress->note(fmt::format(
      "bisect {} -> {} on {} (PostgreSQL {}): {} candidate change{} ({} need a restart), {} not "
      "bisected, {} identical; {} at scale {}, {} clients, {:.0f} s runs, judged by {}",
      good.label, bad.label, server->describe(), live.major, diff.candidates.size(),
      diff.candidates.size() == 1 ? "" : "s", restart_candidates, diff.excluded.size(),
      diff.identical.size(), a.workload, params.scale, params.clients, a.duration,
      report::metric_name(metric)));

  bisect::Options bo;
  bo.level_repeats = a.repeats;
  bo.max_repeats = std::max(a.max_repeats, a.repeats);
  bo.min_effect = a.min_effect / 100.0;
  bo.metric = metric;
  std::size_t n = diff.candidates.size();
  bo.on_run = [&](const bisect::RunRecord& r) { progress->note(run_line(r, n, metric)); };

  bisect::Result result;
  int live_restarts = -1;
  if (diff.candidates.empty()) {
    // Nothing differs: no run is needed to say so.
    class NoServer final : public bisect::Measurer {
      std::vector<double> measure(const std::vector<knobs::Setting>&, int) override {
        throw RuntimeError("internal: a bisect with no candidates measured something");
      }
    } none;
    result = bisect::Bisector(none, {}, bo).run();
  } else {
    stage::LabOptions lab_options;
    lab_options.target = spec;
    lab_options.workdir = ctx.workdir;
    lab_options.command = "pgslow bisect";
    lab_options.measure.warmup_s = a.warmup;
    lab_options.measure.duration_s = a.duration;
    stage::LabSession lab(*server, catalog, wl, params, lab_options, *progress);
    lab.prepare();  // the template, once; a matching one is reused
    bisect::LabMeasurer measurer(lab, diff.good, metric);
    try {
      if (a.isolate) {
        // Each change's part: the same attribution `pgslow run --attribute` makes.
        bisect::AttributionOptions ao;
        ao.search = bo;
        ao.stage = bad.label;
        ao.reference = good.label;
        ao.together = bisect::together_groups(catalog);
        bisect::Attributed at = bisect::attribute(measurer, diff.candidates, ao);
        result = std::move(at.search);
        result.attribution = std::move(at.attribution);
      } else {
        result = bisect::Bisector(measurer, diff.candidates, bo).run();
      }
    } catch (...) {
      // Put the configuration back before the error (or Ctrl-C) reaches the user.
      lab.restore_after_error();
      throw;
    }
    lab.finish();
    live_restarts = lab.restarts();
  }
  result.excluded = diff.excluded;
  result.identical = diff.identical;
  // The restarts the server really made (the Applier restarts only when a postmaster-context
  // value differs from what is running), rather than the search's own estimate.
  if (live_restarts >= 0) result.restarts = live_restarts;

  const report::BisectResult shown = bisect::to_report(result);
  std::ostringstream console;
  report::render_bisect_console(shown, console);
  std::cout << console.str() << std::flush;
  if (!a.json.empty()) {
    write_file_durably(a.json, report::bisect_to_json(shown).dump(2) + "\n");
    progress->note("wrote " + a.json);
  }
  if (!a.markdown.empty()) {
    std::ostringstream md;
    report::render_bisect_markdown(shown, md);
    write_file_durably(a.markdown, md.str());
    progress->note("wrote " + a.markdown);
  }
}

}  // namespace

void add_bisect_commands(CLI::App& app, Context& ctx) {
  auto a = std::make_shared<BisectArgs>();
  auto* cmd = app.add_subcommand(
      "bisect", "find which knob(s) of a bad configuration make it slower than a good one");
  cmd->add_option("--good", a->good,
                  "the good configuration: a preset (`default` is the server as it is), a "
                  "settings YAML file or a postgresql.conf file")
      ->required();
  cmd->add_option("--bad", a->bad, "the bad configuration (same forms as --good)")->required();
  cmd->add_option("--workload", a->workload, "workload to measure with")->capture_default_str();
  cmd->add_option("--scale", a->scale, "workload scale")->capture_default_str();
  cmd->add_option("--clients", a->clients, "simulated clients")->capture_default_str();
  cmd->add_option("--duration", a->duration, "seconds measured per run")->capture_default_str();
  cmd->add_option("--warmup", a->warmup, "seconds of warm-up before each run")
      ->capture_default_str();
  cmd->add_option("--repeats", a->repeats, "runs of good and of bad (their levels and the noise)")
      ->capture_default_str();
  cmd->add_option("--max-repeats", a->max_repeats,
                  "runs of one configuration at most when it lands near the threshold")
      ->capture_default_str();
  cmd->add_option("--min-effect", a->min_effect,
                  "percent: bad must be at least this much slower than good to bisect")
      ->capture_default_str();
  add_metric_option(cmd, a->metric,
                    "default tps. cpu_per_tx moves less than TPS with other load on a shared "
                    "machine (docs/bisect.md)");
  cmd->add_flag("--isolate", a->isolate,
                "also name each change's part: its effect alone with an interval, the bad "
                "configuration without it, and a verdict (the attribution of `run --attribute`)");
  add_target_options(cmd, a->target);
  cmd->add_option("--json", a->json, "also write the result as JSON to this file");
  cmd->add_option("--markdown", a->markdown, "also write the result as Markdown to this file");
  cmd->callback([&ctx, a] { bisect_command(ctx, *a); });
}

}  // namespace pgslow::cli
