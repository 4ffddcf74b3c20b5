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

// What a lesson shows and reads: its progress on the terminal and, when asked for, on the
// dashboard (which watches the server); the room's answers from a file, the terminal or the
// page.
class LessonScreens {
 public:
  LessonScreens(CLI::App* cmd, const DashboardArgs& dashboard, const LessonArgs& a,
                const workshop::Lesson& lesson, const server::ServerControl& server,
                std::optional<std::vector<workshop::Participant>> answers)
      : board_(open_dashboard(cmd, dashboard, "pgslow lesson " + lesson.name)),
        progress_(console_, board_ ? static_cast<Progress&>(*board_) : none_),
        io_{std::cout, answers ? nullptr : &std::cin, std::move(answers)} {
    if (board_) board_->watch_server(server.conninfo(), server.data_dir());
    io_.dashboard = board_.get();
    io_.wait_for_room = a.wait_predictions;
    io_.room_timeout = std::chrono::seconds(static_cast<long>(a.wait_timeout));
  }
  Progress& progress() { return progress_; }
  workshop::LessonIo& io() { return io_; }
  workshop::Dashboard* board() { return board_.get(); }

 private:
  ConsoleProgress console_;
  SilentProgress none_;
  std::unique_ptr<workshop::Dashboard> board_;
  TeeProgress progress_;
  workshop::LessonIo io_;
};

// --record DIR: the lesson added to the instructor's record, and a line that says so.
void record(const std::string& dir, report::RecordedLesson lesson) {
  const report::SessionRecord record = workshop::add_to_record(
      dir, [&](report::SessionRecord& r) { r.lessons.push_back(std::move(lesson)); });
  std::cout << fmt::format("Recorded in {}/record.md (.json): {} lesson{}, {} myster{}\n", dir,
                           record.lessons.size(), record.lessons.size() == 1 ? "" : "s",
                           record.mysteries.size(), record.mysteries.size() == 1 ? "y" : "ies");
}

fs::path out_dir(const LessonArgs& a, const workshop::Lesson& lesson) {
  return experiment::results_folder(a.out, "lesson-" + lesson.name);
}

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
  const knobs::Catalog catalog = knobs::Catalog::load_default();
  if (auto problems = workshop::check_lesson(lesson, nullptr, catalog); has_errors(problems))
    throw InputError(std::move(problems));
  const workshop::CliffLesson& c = *lesson.cliff;
  TargetOptions machine;
  machine.memory = c.memory;
  machine.cpus = c.cpus;
  machine.cpuset = c.cpuset;
  experiment::CliffExperiment experiment = workshop::cliff_experiment(lesson);
  if (a.duration) experiment.duration_s = *a.duration;
  if (a.warmup) experiment.warmup_s = *a.warmup;
  if (a.repeats) experiment.options.search.repeats = *a.repeats;
  experiment.target = target_spec(ctx, machine);
  experiment.workdir = ctx.workdir;
  std::unique_ptr<server::ServerControl> server = server::open_target(*experiment.target);
  pg::Connection conn = pg::Connection::open(server->conninfo());
  const knobs::ServerSettings live = knobs::ServerSettings::read(conn);
  conn.close();
  workshop::CliffLessonSetup setup{lesson, std::move(experiment), *server, catalog, live};

  LessonScreens screens(cmd, dashboard, a, lesson, *server, std::move(answers));
  const report::CliffReveal reveal =
      workshop::run_cliff_lesson(setup, screens.io(), screens.progress());
  const fs::path dir = out_dir(a, lesson);
  report::write_reveal(reveal, dir);
  std::cout << fmt::format("Results: {}/reveal.md (.json)\n", dir.string());
  if (!a.record.empty())
    record(a.record, report::record_cliff_lesson(reveal, lesson.title, apply::utc_now_iso8601()));
  linger(screens.board(), dashboard);
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
    out_dir(*a, lesson);  // a results folder root may not write into: refused before measuring
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

    experiment::RunOptions options = experiment::run_options_for(p);
    options.duration_s = a->duration;
    options.warmup_s = a->warmup;
    options.repeats = a->repeats;
    workshop::LessonSetup setup{lesson, p.plan, *p.server, p.catalog, live, ctx.workdir, options};

    LessonScreens screens(cmd, *dashboard, *a, lesson, *p.server, std::move(answers));
    report::Reveal reveal;
    results::Run run = workshop::run_lesson(setup, screens.io(), screens.progress(), reveal);
    const fs::path dir = out_dir(*a, lesson);
    report::write_results(run, dir);
    report::write_reveal(reveal, dir);
    std::cout << fmt::format("Results: {}/report.md (.json .csv .html), reveal.md (.json)\n",
                             dir.string());
    if (!a->room.empty()) {
      try {
        workshop::send_to_room(a->room, workshop::room_result(a->name, reveal, run));
      } catch (const RuntimeError& e) {
        throw RuntimeError(
            fmt::format("{} (the lesson's results are in {})", e.what(), dir.string()));
      }
      std::cout << fmt::format(
          "Sent to the room at {}: the effect, this machine's summary and "
          "its envelope\n",
          a->room);
    }
    if (!a->record.empty())
      record(a->record, report::record_lesson(reveal, lesson.title, apply::utc_now_iso8601()));
    linger(screens.board(), *dashboard);
  });
}

}  // namespace pgslow::cli
