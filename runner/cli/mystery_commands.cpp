// `pgslow mystery start|clues|guess|reveal`: a hidden degradation to diagnose
// (docs/workshop.md, "Mystery mode").

#include <fmt/format.h>
#include <unistd.h>

#include <iostream>
#include <random>

#include "apply/interrupt.h"
#include "apply/journal.h"
#include "apply/recovery.h"
#include "cli/commands.h"
#include "cli/options.h"
#include "cli/scenario_support.h"
#include "common/progress.h"
#include "common/strings.h"
#include "experiment/run.h"
#include "knobs/validate.h"
#include "pg/connection.h"
#include "report/registry.h"
#include "report/workshop.h"
#include "server/target.h"
#include "workshop/mystery.h"
#include "workshop/record.h"

namespace pgslow::cli {

namespace fs = std::filesystem;

namespace {

// A mystery's trial on the lab. Its stage marker names no knob: the dashboard is on the
// participants' screens.
results::StageResult measure_hidden(experiment::Lab& lab, const experiment::Trial& trial,
                                    Progress& progress) {
  progress.stage_started({trial.configuration.name, {}});
  return lab.measure(trial);
}

// The mystery's degradation, left applied until `mystery reveal` (or `pgslow restore`).
experiment::Configuration kept_mystery(std::vector<knobs::Setting> settings) {
  return {"mystery", std::move(settings), {}, std::nullopt};
}

struct StartArgs {
  int difficulty = 1;
  std::optional<std::uint64_t> seed;
  std::optional<double> duration, warmup;
};

workshop::MysteryState require_mystery(const Context& ctx) {
  std::optional<workshop::MysteryState> s = workshop::load_mystery(ctx.workdir);
  if (!s)
    throw InputError(
        fmt::format("no mystery in {}: `pgslow mystery start` hides one", ctx.workdir.string()));
  return *s;
}

void start(Context& ctx, const StartArgs& a, CLI::App* cmd, const DashboardArgs& dashboard) {
  before_command(ctx, "mystery start");
  if (workshop::load_mystery(ctx.workdir))
    throw InputError("a mystery is already applied: `pgslow mystery reveal` ends it first");
  if (apply::inspect_journal(ctx.workdir).journal)
    throw InputError(
        "the server carries a change by pgslow (`pgslow status`): `pgslow restore` it first");
  const std::uint64_t seed = a.seed.value_or(std::random_device{}());
  knobs::Catalog catalog = knobs::Catalog::load_default();
  workshop::MysteryAnswer answer = workshop::choose_mystery(a.difficulty, seed, catalog);
  scenario::Scenario sc = workshop::mystery_scenario(answer);
  sc.target.workdir = ctx.workdir;
  sc.target.pg_bin = ctx.pg_bin;
  sc.target.pg_version = ctx.pg_version;
  std::unique_ptr<server::ServerControl> server = server::open_target(sc.target);
  pg::Connection conn = pg::Connection::open(server->conninfo());
  scenario::Plan plan = scenario::make_plan(sc, catalog, knobs::ServerSettings::read(conn));
  conn.close();

  experiment::RunOptions options;
  options.target = sc.target;
  options.duration_s = a.duration;
  options.warmup_s = a.warmup;
  ConsoleProgress console;
  std::unique_ptr<workshop::Dashboard> board = open_dashboard(cmd, dashboard, "pgslow mystery");
  if (board) board->watch_server(server->conninfo(), server->data_dir());
  SilentProgress none;
  TeeProgress progress(console, board ? static_cast<Progress&>(*board) : none);
  progress.note(fmt::format(
      "pgslow mystery start: difficulty {}; measuring the server as found, then hiding a change",
      a.difficulty));

  workshop::MysteryState state;
  state.difficulty = a.difficulty;
  state.seed = seed;
  state.started_at = apply::utc_now_iso8601();
  state.answer = answer;
  state.measured.scenario = "mystery";
  state.measured.workload = sc.workload.name;
  state.measured.scale = sc.workload.scale;
  std::unique_ptr<experiment::LabSession> lab =
      experiment::open_scenario_lab(*server, catalog, ctx.workdir, sc, options, progress, true);
  const experiment::Timing timing = experiment::make_timing(sc, options);
  for (const scenario::PlannedStage& st : plan.stages) {
    results::StageResult r = measure_hidden(*lab, experiment::trial_of(st, timing), progress);
    if (!r.error.empty()) {
      lab->finish();
      throw RuntimeError(
          fmt::format("the {} stage could not be measured; configuration restored. Try another "
                      "--seed.",
                      st.is_baseline ? "baseline" : "mystery"));
    }
    state.measured.stages.push_back(std::move(r));
    apply::InterruptGuard::throw_if_interrupted();
  }
  lab->keep(kept_mystery(plan.stages.back().settings));
  workshop::save_mystery(ctx.workdir, state);
  const report::Effect e =
      report::measure_effect(state.measured.stages.back(), state.measured.stages.front());
  std::cout << fmt::format(
      "A mystery is applied to {}.\nThe same workload is now {}.\n\nWhat changed? `pgslow mystery "
      "clues` shows what a "
      "DBA looks at first;\n`pgslow mystery guess KNOB...` scores a guess; `pgslow mystery reveal` "
      "names it and "
      "restores.\n",
      server->describe(), report::describe_effect(e));
  linger(board.get(), dashboard);
}

struct FixArgs {
  std::vector<std::string> changes;  // KNOB=VALUE
  std::string name;
  bool allow_restart = false;
  std::optional<double> duration, warmup;
  std::string format = "console";
};

void fix(Context& ctx, const FixArgs& a) {
  report::check_format<report::FixResult>(a.format);
  before_command(ctx, "mystery fix");
  workshop::MysteryState state = require_mystery(ctx);
  const knobs::Catalog catalog = knobs::Catalog::load_default();
  const std::vector<knobs::Setting> proposed = parse_knob_assignments(a.changes, catalog);

  scenario::Scenario sc = workshop::mystery_scenario(state.answer);
  sc.target = managed_target(ctx);
  std::unique_ptr<server::ServerControl> server = server::open_target(sc.target);
  auto read_live = [&] {
    pg::Connection conn = pg::Connection::open(server->conninfo());
    return knobs::ServerSettings::read(conn);
  };
  // The names, values and verdicts do not depend on the mystery being applied right now.
  const knobs::ServerSettings live = read_live();
  const scenario::Plan plan = scenario::make_plan(sc, catalog, live);
  const std::vector<knobs::Setting> broken = plan.stages.back().settings;

  // A mystery that needed a restart itself has planned for them. Its stage's verdicts say so by
  // each knob's context (not needs_restart: against the server as it is now, with the mystery
  // applied, nothing differs).
  const auto& mystery_verdicts = plan.stages.back().verdicts;
  const bool mystery_restarts = std::any_of(
      mystery_verdicts.begin(), mystery_verdicts.end(),
      [](const knobs::SettingVerdict& v) { return v.verdict == knobs::Verdict::kRestart; });
  workshop::ScreenedFix screened =
      workshop::screen_fix(proposed, broken, catalog, live, a.allow_restart || mystery_restarts);
  const std::vector<knobs::Setting>& accepted = screened.accepted;
  report::FixResult result;
  result.refused = std::move(screened.refused);

  if (accepted.empty()) {
    for (const knobs::Setting& p : proposed)
      result.changes.push_back({p.name, p.value, {}, {}, false});
  } else {
    // The lab measures every configuration on top of the original: the kept mystery comes off
    // first and goes back on at the end (a kill in between leaves the original, as `recover`
    // would).
    if (apply::WorkdirJournal wj = apply::inspect_journal(ctx.workdir); wj.journal) {
      apply::InterruptGuard guard;
      apply::restore_from_journal(ctx.workdir, *wj.journal, sc.target);
    }
    experiment::RunOptions options;
    options.target = sc.target;
    options.duration_s = a.duration;
    options.warmup_s = a.warmup;
    ConsoleProgress progress;
    progress.note(fmt::format(
        "pgslow mystery fix: measuring the healthy and the broken server, then the fix{}",
        accepted.size() > 1 ? " and the fix without each of its changes" : ""));
    std::unique_ptr<experiment::LabSession> lab =
        experiment::open_scenario_lab(*server, catalog, ctx.workdir, sc, options, progress, true);
    const experiment::Trial mystery =
        experiment::trial_of(plan.stages.back(), experiment::make_timing(sc, options));
    auto measure = [&](const std::string& name, std::vector<knobs::Setting> settings) {
      experiment::Trial trial = mystery;
      trial.configuration.name = name;
      trial.configuration.settings = std::move(settings);
      results::StageResult r = measure_hidden(*lab, trial, progress);
      apply::InterruptGuard::throw_if_interrupted();
      if (!r.error.empty()) {
        lab->keep(kept_mystery(broken));
        throw RuntimeError(
            fmt::format("the {} stage could not be measured ({}); the mystery is applied again",
                        name, printable(r.error)));
      }
      return r;
    };
    const results::StageResult healthy = measure("healthy", {});
    const results::StageResult broken_run = measure("broken", broken);
    const results::StageResult fixed = measure("fix", knobs::overlay(broken, accepted));
    std::vector<results::StageResult> without;
    for (std::size_t i = 0; accepted.size() > 1 && i < accepted.size(); ++i) {
      std::vector<knobs::Setting> rest = accepted;
      rest.erase(rest.begin() + static_cast<std::ptrdiff_t>(i));
      without.push_back(
          measure(fmt::format("without change {}", i + 1), knobs::overlay(broken, rest)));
    }
    lab->keep(kept_mystery(broken));
    std::vector<std::string> refused = std::move(result.refused);
    result = workshop::score_fix(accepted, healthy, broken_run, fixed, without);
    result.refused = std::move(refused);
  }
  result.who = a.name;
  state.fixes.push_back(result);
  workshop::save_mystery(ctx.workdir, state);
  report::render(result, a.format, std::cout);
  if (a.format == "console") {
    std::cout << "\n";
    report::render(report::rank_fixes(state.fixes), "console", std::cout);
  }
}

void reveal(Context& ctx, const std::string& format, const std::string& record_dir) {
  report::check_format<report::MysteryReveal>(format);
  before_command(ctx, "mystery reveal");
  // The answer goes to stdout in its format; what the restore did is a note beside it, on
  // stderr unless the answer is the console's text (a JSON answer stays one document).
  std::ostream& note = format == "console" ? std::cout : std::cerr;
  std::optional<workshop::MysteryState> s = workshop::load_mystery(ctx.workdir);
  if (s) {
    const report::MysteryReveal answer = workshop::mystery_reveal(*s);
    report::render(answer, format, std::cout);
    if (!record_dir.empty()) {
      workshop::add_to_record(record_dir, [&](report::SessionRecord& r) {
        r.mysteries.push_back(
            {apply::utc_now_iso8601(), s->difficulty, answer, report::rank_fixes(s->fixes)});
      });
      note << fmt::format("Recorded in {}/record.md (.json)\n", record_dir);
    }
  } else {
    note << "no mystery file: the answer is lost (the start was interrupted); restoring anyway\n";
  }
  std::cout.flush();
  apply::WorkdirJournal wj = apply::inspect_journal(ctx.workdir);
  if (wj.journal) {
    apply::InterruptGuard guard;
    apply::restore_from_journal(ctx.workdir, *wj.journal, managed_target(ctx));
    note << fmt::format("restored {}: original configuration back and verified\n",
                        wj.journal->server.description);
  } else {
    note << "nothing to restore: no journal (the configuration is already the original)\n";
  }
  workshop::remove_mystery(ctx.workdir);
  apply::InterruptGuard::throw_if_interrupted();
}

}  // namespace

void add_mystery_commands(CLI::App& app, Context& ctx) {
  auto* group = app.add_subcommand("mystery", "hide a degradation for participants to diagnose");
  group->require_subcommand(1);
  {
    auto* cmd = group->add_subcommand("start", "measure the server, then hide a degradation in it");
    auto a = std::make_shared<StartArgs>();
    cmd->add_option("--difficulty", a->difficulty,
                    "1: one preset; 2: with harmless decoys; 3: two causes and decoys")
        ->check(CLI::Range(1, 3));
    cmd->add_option("--seed", a->seed, "the same seed hides the same answer (default: random)");
    cmd->add_option("--duration", a->duration, "seconds per measured run (default 15)");
    cmd->add_option("--warmup", a->warmup, "warm-up seconds (default 3)");
    auto dashboard = add_dashboard_options(cmd);
    cmd->callback([&ctx, a, cmd, dashboard] { start(ctx, *a, cmd, *dashboard); });
  }
  {
    auto* cmd = group->add_subcommand("clues",
                                      "what a DBA looks at first (names no setting of the answer)");
    auto format = std::make_shared<std::string>("console");
    cmd->add_option("--format,-f", *format, "console | md | json (default: console)");
    cmd->callback([&ctx, format] {
      report::check_format<report::MysteryClues>(*format);
      before_command(ctx, "mystery clues");
      std::cout << workshop::clues_text(require_mystery(ctx), knobs::Catalog::load_default(),
                                        *format);
    });
  }
  {
    auto* cmd = group->add_subcommand("guess", "score a guess: the knobs you think cause it");
    auto knobs_arg = std::make_shared<std::vector<std::string>>();
    cmd->add_option("knob", *knobs_arg, "knob names")->required();
    cmd->callback([&ctx, knobs_arg] {
      before_command(ctx, "mystery guess");
      workshop::MysteryState s = require_mystery(ctx);
      knobs::Catalog catalog = knobs::Catalog::load_default();
      for (const std::string& k : *knobs_arg) {
        if (catalog.find(k) == nullptr) {
          auto m = closest_match(k, catalog.knob_names());
          throw InputError(fmt::format("\"{}\" is not a knob pgslow knows{}", k,
                                       m ? fmt::format(" (did you mean {}?)", *m) : ""));
        }
      }
      workshop::GuessScore g = workshop::score_guess(s.answer, *knobs_arg);
      ++s.guesses;
      s.solved = s.solved || g.solved;
      workshop::save_mystery(ctx.workdir, s);
      std::cout << g.text << "\n";
      if (g.solved)
        std::cout << "`pgslow mystery reveal` shows the whole answer and restores the server.\n";
    });
  }
  {
    auto* cmd = group->add_subcommand(
        "fix",
        "measure a proposed fix against the broken and the healthy server, and score it by the "
        "share of the lost performance it recovers");
    auto a = std::make_shared<FixArgs>();
    cmd->add_option("change", a->changes, "KNOB=VALUE, one or more")->required();
    cmd->add_option("--name", a->name, "who proposes it (the scoreboard's column)");
    cmd->add_flag("--allow-restart", a->allow_restart,
                  "run a fix that needs a server restart when the mystery itself needed none");
    cmd->add_option("--duration", a->duration, "seconds per measured run (default 15)");
    cmd->add_option("--warmup", a->warmup, "warm-up seconds (default 3)");
    cmd->add_option("--format,-f", a->format, "console | md | json (default: console)");
    cmd->callback([&ctx, a] { fix(ctx, *a); });
  }
  {
    auto* cmd = group->add_subcommand("scoreboard", "the fixes proposed so far, ranked");
    auto format = std::make_shared<std::string>("console");
    cmd->add_option("--format,-f", *format, "console | md | json (default: console)");
    cmd->callback([&ctx, format] {
      report::check_format<report::FixScoreboard>(*format);
      before_command(ctx, "mystery scoreboard");
      report::render(report::rank_fixes(require_mystery(ctx).fixes), *format, std::cout);
    });
  }
  {
    auto* cmd = group->add_subcommand("reveal", "name the answer and restore the configuration");
    auto format = std::make_shared<std::string>("console");
    cmd->add_option("--format,-f", *format,
                    "console | md | json: the answer's format (default: console)");
    auto record = std::make_shared<std::string>();
    cmd->add_option("--record", *record,
                    "the instructor's record: add the answer and the fixes to DIR/record.json "
                    "and record.md");
    cmd->callback([&ctx, format, record] { reveal(ctx, *format, *record); });
  }
}

}  // namespace pgslow::cli
