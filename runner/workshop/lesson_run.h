#pragma once
// Walks a lesson's five steps (docs/workshop.md): Explain, Predict, Run, Reveal, Diagnose.
// Interactive on a terminal (`in` set), or scripted from an answers file; a dashboard, when
// given, shows each step and collects the room's predictions.

#include <chrono>
#include <filesystem>
#include <iosfwd>
#include <optional>
#include <vector>

#include "common/progress.h"
#include "experiment/cliff_experiment.h"
#include "experiment/run.h"
#include "knobs/catalog.h"
#include "knobs/validate.h"
#include "report/workshop.h"
#include "results/model.h"
#include "scenario/plan.h"
#include "server/server_control.h"
#include "workshop/dashboard.h"
#include "workshop/lesson.h"

namespace pgslow::workshop {

struct LessonSetup {
  const Lesson& lesson;
  const scenario::Plan& plan;
  server::ServerControl& server;
  const knobs::Catalog& catalog;
  const knobs::ServerSettings& live;  // the server's values, for Explain
  std::filesystem::path workdir;
  experiment::RunOptions run_options;
};

struct LessonIo {
  std::ostream& out;
  std::istream* in = nullptr;                       // a terminal; nullptr when scripted
  std::optional<std::vector<Participant>> answers;  // --answers
  Dashboard* dashboard = nullptr;                   // set after construction
  int wait_for_room = 0;  // with a dashboard: wait until this many predictions came in
  std::chrono::seconds room_timeout{600};
};

// Runs the lesson; returns the measured run (for the results folder) and fills `reveal`.
results::Run run_lesson(const LessonSetup& setup, LessonIo& io, Progress& progress,
                        report::Reveal& reveal);

// A cliff lesson (Lesson::cliff): the search as the lesson's `cliff:` gives it, on its server.
struct CliffLessonSetup {
  const Lesson& lesson;
  experiment::CliffExperiment
      experiment;  // cliff_experiment(lesson, ...) with the command's options
  server::ServerControl& server;
  const knobs::Catalog& catalog;
  const knobs::ServerSettings& live;
};

// The experiment a cliff lesson's `cliff:` describes: its knob, range, fixed settings and the
// evidence its reveal and diagnose questions name (kept at each point).
experiment::CliffExperiment cliff_experiment(const Lesson& lesson);

// Explain, Predict (the value where it starts to hurt), Run (the cliff search live: each
// point on the dashboard's curve beside the room's guesses), Reveal (each guess scored by its
// distance on the log scale; the evidence and waits at the knee), Diagnose. The search
// restores the configuration however it ends.
report::CliffReveal run_cliff_lesson(CliffLessonSetup& setup, LessonIo& io, Progress& progress);

}  // namespace pgslow::workshop
