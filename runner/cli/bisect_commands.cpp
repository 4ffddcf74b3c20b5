// `pgslow bisect --good G --bad B`: which knob(s) of the bad configuration make it slow.
// The method and the output are explained in docs/bisect.md.

#include <fmt/format.h>

#include <iostream>
#include <memory>

#include "cli/commands.h"
#include "cli/options.h"
#include "common/progress.h"
#include "experiment/bisect_experiment.h"
#include "report/registry.h"
#include "results/metric.h"
#include "search/configuration.h"
#include "search/sources.h"
#include "server/pg_versions.h"
#include "server/target.h"

namespace pgslow::cli {
namespace {

struct BisectArgs {
  std::string good;
  std::string bad;
  std::string good_from;  // a live server's conninfo
  std::string bad_from;
  std::optional<long long> good_version;  // a PostgreSQL major's built-in defaults
  std::optional<long long> bad_version;
  double min_effect = 10;                 // percent
  std::optional<results::Metric> metric;  // unset: tps
  std::string direction = "slower";
  experiment::BisectExperiment experiment;
  TargetOptions target;
  std::string json;
  std::string markdown;
};

// --good/--good-from/--good-version (which = "good"): exactly one; the configuration it names.
search::Configuration source_of(const std::string& which, const std::string& spec,
                                const std::string& from, std::optional<long long> version,
                                const knobs::Catalog& catalog,
                                std::vector<search::Excluded>& left_out) {
  const int given = (spec.empty() ? 0 : 1) + (from.empty() ? 0 : 1) + (version ? 1 : 0);
  if (given != 1)
    throw InputError(
        fmt::format("give the {0} configuration once: --{0} PRESET|FILE, --{0}-from CONNINFO or "
                    "--{0}-version MAJOR{1}",
                    which, given == 0 ? "" : fmt::format(" ({} were given)", given)));
  if (!spec.empty()) return search::load_configuration(spec, catalog);
  if (!from.empty()) {
    search::Sourced s = search::configuration_from_server(from);
    left_out.insert(left_out.end(), s.left_out.begin(), s.left_out.end());
    return s.configuration;
  }
  const int major = server::require_supported_major(*version, "--" + which + "-version");
  return {fmt::format("PostgreSQL {} defaults", major), {}};  // filled by run_bisect
}

void bisect_command(Context& ctx, BisectArgs& a) {
  before_command(ctx, "bisect");
  std::ostream& out = result_stream({a.json, a.markdown});
  knobs::Catalog catalog = knobs::Catalog::load_default();
  experiment::BisectExperiment& e = a.experiment;
  if (a.good_version.has_value() != a.bad_version.has_value())
    throw InputError("--good-version and --bad-version go together: give both majors");
  e.good = source_of("good", a.good, a.good_from, a.good_version, catalog, e.left_out);
  e.bad = source_of("bad", a.bad, a.bad_from, a.bad_version, catalog, e.left_out);
  // Range-checked by source_of.
  e.good_version = static_cast<int>(a.good_version.value_or(0));
  e.bad_version = static_cast<int>(a.bad_version.value_or(0));
  e.min_effect = a.min_effect / 100.0;
  e.metric = a.metric.value_or(results::Metric::kTps);
  e.metric.better = a.direction == "faster";
  server::TargetSpec spec = target_spec(ctx, a.target);
  refuse_command_target(spec, "bisect");
  e.target = spec;
  e.workdir = ctx.workdir;
  std::unique_ptr<server::ServerControl> server = server::open_target(spec);
  std::unique_ptr<Progress> progress = command_progress(ctx);

  const search::Result result = experiment::run_bisect(e, *server, catalog, *progress);

  const results::BisectResult shown = search::to_report(result);
  out << report::rendered(shown, "console") << std::flush;
  for (const auto& [format, path] : {std::pair{"json", a.json}, std::pair{"md", a.markdown}}) {
    if (!path.empty()) write_requested_output(path, report::rendered(shown, format), *progress);
  }
}

}  // namespace

void add_bisect_commands(CLI::App& app, Context& ctx) {
  auto a = std::make_shared<BisectArgs>();
  auto* cmd = app.add_subcommand(
      "bisect",
      "find which knob(s) of a bad configuration make it slower (or, with --direction faster, "
      "better) than a good one");
  cmd->add_option("--good", a->good,
                  "the good configuration: a preset (`default` is the server as it is), a "
                  "settings YAML file or a postgresql.conf file");
  cmd->add_option("--bad", a->bad, "the bad configuration (same forms as --good)");
  cmd->add_option("--good-from", a->good_from,
                  "the good configuration: a live server's non-default settings (a conninfo; "
                  "its files, ports and libraries are left out, and named)");
  cmd->add_option("--bad-from", a->bad_from, "the bad configuration from a live server");
  cmd->add_option("--good-version", a->good_version,
                  "with --bad-version: the built-in defaults that differ between two "
                  "PostgreSQL majors (15-18 installed), applied to the server under test");
  cmd->add_option("--bad-version", a->bad_version, "the other major (see --good-version)");
  experiment::BisectExperiment& e = a->experiment;
  cmd->add_option("--workload", e.workload, "workload to measure with")->capture_default_str();
  add_size_option(cmd, e.scale, "workload scale (tpcc-lite: warehouses)")->capture_default_str();
  cmd->add_option("--clients", e.clients, "simulated clients")->capture_default_str();
  cmd->add_option("--rate", e.rate,
                  "transactions per second in total, fixed-rate arrivals (0: closed loop); "
                  "under a rate the server keeps up with, a slower configuration shows in "
                  "--metric p99 rather than in TPS")
      ->capture_default_str();
  cmd->add_option("--duration", e.duration_s, "seconds measured per run")->capture_default_str();
  cmd->add_option("--warmup", e.warmup_s, "seconds of warm-up before each run")
      ->capture_default_str();
  cmd->add_option("--repeats", e.repeats, "runs of good and of bad (their levels and the noise)")
      ->capture_default_str();
  cmd->add_option("--max-repeats", e.max_repeats,
                  "runs of one configuration at most when it lands near the threshold")
      ->capture_default_str();
  cmd->add_option("--min-effect", a->min_effect,
                  "percent: bad must differ from good at least this much to bisect")
      ->capture_default_str();
  add_metric_option(cmd, a->metric,
                    "default tps. cpu_per_tx moves less than TPS with other load on a shared "
                    "machine (docs/bisect.md)");
  cmd->add_option("--direction", a->direction,
                  "slower: find the changes of bad that make it worse on the metric; faster: "
                  "the changes that make it better (an advisor's configuration against the "
                  "default)")
      ->check(CLI::IsMember({"slower", "faster"}))
      ->capture_default_str();
  cmd->add_flag("--isolate", e.isolate,
                "also name each change's part: its effect alone with an interval, the bad "
                "configuration without it, and a verdict (the attribution of `run --attribute`)");
  add_target_options(cmd, a->target);
  cmd->add_option("--json", a->json,
                  "also write the result as JSON to this file (-: to standard output, the table "
                  "to standard error)");
  cmd->add_option("--markdown", a->markdown,
                  "also write the result as Markdown to this file (-: standard output)");
  cmd->callback([&ctx, a] { bisect_command(ctx, *a); });
}

}  // namespace pgslow::cli
