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
#include "knobs/catalog.h"
#include "knobs/validate.h"
#include "report/workshop.h"
#include "results/model.h"
#include "scenario/plan.h"
#include "server/server_control.h"
#include "stage/run.h"
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
  stage::RunOptions run_options;
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

}  // namespace pgslow::workshop
