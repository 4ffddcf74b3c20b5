// `pgslow lesson [LESSON]`: walks a workshop lesson (docs/workshop.md).

#include <fmt/format.h>

#include <iostream>

#include "apply/interrupt.h"
#include "apply/journal.h"
#include "cli/commands.h"
#include "cli/scenario_support.h"
#include "cli/target_options.h"
#include "common/errors.h"
#include "common/progress.h"
#include "pg/connection.h"
#include "report/registry.h"
#include "server/target.h"
#include "workshop/lesson.h"
#include "workshop/lesson_run.h"
#include "workshop/record.h"
#include "workshop/room.h"

namespace pgslow::cli {

namespace fs = std::filesystem;

namespace {

report::LessonList list_lessons() {
  report::LessonList list;
  for (const std::string& name : workshop::lesson_names()) {
    workshop::Lesson l = workshop::load_lesson(workshop::resolve_lesson(name));
    list.lessons.push_back({name, l.minutes, l.title});
  }
  return list;
}

struct LessonArgs {
  std::string lesson;
  std::string answers;
  std::string out;
  int wait_predictions = 0;
  double wait_timeout = 600;
  std::optional<double> duration, warmup;
  std::optional<int> repeats;
  std::string format = "console";
  std::string record;
  std::string room;
  std::string name;
};

// A cliff lesson: the search its `cliff:` names, on the managed cluster in the machine it asks
// for (docs/workshop.md "Cliff lessons").
void cliff_lesson(Context& ctx, const workshop::Lesson& lesson, const LessonArgs& a,
                  std::optional<std::vector<workshop::Participant>> answers, CLI::App* cmd,
                  const DashboardArgs& dashboard) {
  if (!a.room.empty())
    throw InputError(fmt::format(
        "--room: lesson {} is a cliff lesson; a laptop sends the effect of a stage, and a cliff "
        "lesson has none (its guesses are scored on the instructor's run)",
        lesson.name));
  if (auto problems = workshop::check_lesson(lesson, nullptr, knobs::Catalog::load_default());
      has_errors(problems))
    throw InputError(std::move(problems));
  const workshop::CliffLesson& c = *lesson.cliff;
  TargetOptions machine;
  machine.memory = c.memory;
  machine.cpus = c.cpus;
  machine.cpuset = c.cpuset;
  stage::CliffExperiment experiment = workshop::cliff_experiment(lesson);
  if (a.duration) experiment.duration_s = *a.duration;
  if (a.warmup) experiment.warmup_s = *a.warmup;
  if (a.repeats) experiment.options.search.repeats = *a.repeats;
  experiment.target = target_spec(ctx, machine);
  experiment.workdir = ctx.workdir;
  std::unique_ptr<server::ServerControl> server = server::open_target(*experiment.target);
  const knobs::Catalog catalog = knobs::Catalog::load_default();
  pg::Connection conn = pg::Connection::open(server->conninfo());
  const knobs::ServerSettings live = knobs::ServerSettings::read(conn);
  conn.close();
  workshop::CliffLessonSetup setup{lesson, std::move(experiment), *server, catalog, live};

  ConsoleProgress console;
  std::unique_ptr<workshop::Dashboard> board =
      open_dashboard(cmd, dashboard, "pgslow lesson " + lesson.name);
  if (board) board->watch_server(server->conninfo());
  SilentProgress none;
  TeeProgress progress(console, board ? static_cast<Progress&>(*board) : none);
  workshop::LessonIo io{std::cout, answers ? nullptr : &std::cin, answers};
  io.dashboard = board.get();
  io.wait_for_room = a.wait_predictions;
  io.room_timeout = std::chrono::seconds(static_cast<long>(a.wait_timeout));
  const report::CliffReveal reveal = workshop::run_cliff_lesson(setup, io, progress);
  const fs::path out_dir =
      a.out.empty() ? stage::default_out_dir("lesson-" + lesson.name) : fs::path(a.out);
  report::write_reveal(reveal, out_dir);
  std::cout << fmt::format("Results: {}/reveal.md (.json)\n", out_dir.string());
  if (!a.record.empty()) {
    const report::SessionRecord record =
        workshop::add_to_record(a.record, [&](report::SessionRecord& r) {
          r.lessons.push_back(
              report::record_cliff_lesson(reveal, lesson.title, apply::utc_now_iso8601()));
        });
    std::cout << fmt::format("Recorded in {}/record.md (.json): {} lesson{}, {} myster{}\n",
                             a.record, record.lessons.size(), record.lessons.size() == 1 ? "" : "s",
                             record.mysteries.size(), record.mysteries.size() == 1 ? "y" : "ies");
  }
  linger(board.get(), dashboard);
}

}  // namespace

void add_lesson_commands(CLI::App& app, Context& ctx) {
  auto* cmd = app.add_subcommand("lesson",
                                 "walk a workshop lesson: explain, predict, run, reveal, diagnose");
  auto a = std::make_shared<LessonArgs>();
  cmd->add_option("lesson", a->lesson, "lesson file or name (without it: the list)");
  cmd->add_option("--answers", a->answers,
                  "the participants' predictions from a file (scripted lesson)");
  cmd->add_option("--out", a->out, "results folder (default results/lesson-<name>-<time>)");
  cmd->add_option("--wait-predictions", a->wait_predictions,
                  "with --dashboard: wait until this many predictions came in from the page");
  cmd->add_option("--wait-timeout", a->wait_timeout,
                  "seconds to wait for them at most (default 600)");
  cmd->add_option("--duration", a->duration,
                  "seconds per measured run (overrides the lesson's scenario)");
  cmd->add_option("--warmup", a->warmup, "warm-up seconds (overrides the lesson's scenario)");
  cmd->add_option("--repeats", a->repeats,
                  "measured runs per stage (overrides the lesson's scenario)");
  cmd->add_option("--room", a->room,
                  "send this laptop's result to the instructor's dashboard (http://HOST:PORT)");
  cmd->add_option("--name", a->name, "your name on the room's page (with --room)");
  cmd->add_option("--record", a->record,
                  "the instructor's record: add this lesson to DIR/record.json and record.md");
  cmd->add_option("--format,-f", a->format,
                  "without a lesson: the list as console | md | json (default: console)");
  auto dashboard = add_dashboard_options(cmd);
  cmd->callback([&ctx, a, cmd, dashboard] {
    if (a->lesson.empty()) {
      report::render(list_lessons(), a->format, std::cout);
      return;
    }
    if (a->format != "console") {
      throw InputError(
          "--format applies to the list of lessons; a lesson prints its reveal and writes "
          "reveal.md and reveal.json in its results folder (--out)");
    }
    if (!a->room.empty() && a->name.empty())
      throw InputError("--room needs --name: the name the room's page shows for this laptop");
    if (!a->room.empty()) workshop::check_room(a->room);  // before anything is measured
    before_command(ctx, "lesson");
    const workshop::Lesson lesson = workshop::load_lesson(workshop::resolve_lesson(a->lesson));
    std::optional<std::vector<workshop::Participant>> answers;
    if (!a->answers.empty()) answers = workshop::load_answers(a->answers, lesson);
    if (lesson.cliff) {
      cliff_lesson(ctx, lesson, *a, std::move(answers), cmd, *dashboard);
      return;
    }
    if (!fs::exists(lesson.scenario)) {
      ConfigError e;
      e.where = lesson.scenario_where;
      e.message = fmt::format("scenario: no such file {}", lesson.scenario.string());
      throw InputError(std::vector<ConfigError>{e});
    }
    Prepared p = prepare(ctx, lesson.scenario.string(), TargetOptions{});
    if (auto problems = workshop::check_lesson(lesson, &p.plan, p.catalog); has_errors(problems))
      throw InputError(std::move(problems));
    pg::Connection conn = pg::Connection::open(p.server->conninfo());
    const knobs::ServerSettings live = knobs::ServerSettings::read(conn);
    conn.close();

    stage::RunOptions options = stage::run_options_for(p);
    options.duration_s = a->duration;
    options.warmup_s = a->warmup;
    options.repeats = a->repeats;
    workshop::LessonSetup setup{lesson, p.plan, *p.server, p.catalog, live, ctx.workdir, options};

    ConsoleProgress console;
    std::unique_ptr<workshop::Dashboard> board =
        open_dashboard(cmd, *dashboard, "pgslow lesson " + lesson.name);
    if (board) board->watch_server(p.server->conninfo());
    SilentProgress none;
    TeeProgress progress(console, board ? static_cast<Progress&>(*board) : none);
    workshop::LessonIo io{std::cout, answers ? nullptr : &std::cin, answers};
    io.dashboard = board.get();
    io.wait_for_room = a->wait_predictions;
    io.room_timeout = std::chrono::seconds(static_cast<long>(a->wait_timeout));
    report::Reveal reveal;
    results::Run run = workshop::run_lesson(setup, io, progress, reveal);
    const fs::path out_dir =
        a->out.empty() ? stage::default_out_dir("lesson-" + lesson.name) : fs::path(a->out);
    report::write_results(run, out_dir);
    report::write_reveal(reveal, out_dir);
    std::cout << fmt::format("Results: {}/report.md (.json .csv .html), reveal.md (.json)\n",
                             out_dir.string());
    if (!a->room.empty()) {
      try {
        workshop::send_to_room(a->room, workshop::room_result(a->name, reveal, run));
      } catch (const RuntimeError& e) {
        throw RuntimeError(
            fmt::format("{} (the lesson's results are in {})", e.what(), out_dir.string()));
      }
      std::cout << fmt::format(
          "Sent to the room at {}: the effect, this machine's summary and "
          "its envelope\n",
          a->room);
    }
    if (!a->record.empty()) {
      const report::SessionRecord record =
          workshop::add_to_record(a->record, [&](report::SessionRecord& r) {
            r.lessons.push_back(
                report::record_lesson(reveal, lesson.title, apply::utc_now_iso8601()));
          });
      std::cout << fmt::format("Recorded in {}/record.md (.json): {} lesson{}, {} myster{}\n",
                               a->record, record.lessons.size(),
                               record.lessons.size() == 1 ? "" : "s", record.mysteries.size(),
                               record.mysteries.size() == 1 ? "y" : "ies");
    }
    linger(board.get(), *dashboard);
  });
}

}  // namespace pgslow::cli
