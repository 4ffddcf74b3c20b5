#pragma once
// A lesson file (docs/workshop.md, "Lesson files"): the five steps of a workshop lesson around
// one scenario. Parsing checks the file's shape (every problem with file:line:col);
// check_lesson() checks it against the scenario's plan and the knob catalog, like a scenario
// is checked before anything runs.

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "common/errors.h"
#include "experiment/cliff_experiment.h"
#include "knobs/catalog.h"
#include "scenario/plan.h"

namespace pgslow::workshop {

// A prediction question: an effect in words ("slower, about 3x"), a choice of causes, or, in a
// cliff lesson, the value where the knob starts to hurt ("160MB").
struct PredictQuestion {
  std::string id;
  std::string ask;
  std::vector<std::string> choices;   // empty: an effect question
  std::optional<std::size_t> answer;  // the right choice (index), when the lesson has one
  SourceLocation where;
  bool is_effect() const { return choices.empty(); }
};

// A cliff lesson (docs/workshop.md "Cliff lessons"): the room predicts the value at which a knob
// starts to hurt, and the lesson runs the cliff search live (`pgslow cliff`, docs/cliff.md)
// on the workload and the machine its `cliff:` names. Its questions without choices ask for
// that value.
struct CliffLesson {
  // The knob, the range, the fixed settings, the workload and the runs, as `pgslow cliff` takes
  // them (scripts resolved against the lesson's folder). Durations default to 4 s runs after
  // 2 s of warm-up.
  experiment::CliffExperiment search;
  std::string memory;  // the server's envelope, as --memory/--cpus/--cpuset take it
  std::string cpus;
  std::string cpuset;
  SourceLocation where;
};

// A diagnose question, answered from the named evidence of the measured stages.
struct DiagnoseQuestion {
  std::string ask;
  std::vector<std::string> evidence;  // evidence keys whose values are shown with the question
  std::string answer;                 // shown after the participants answered
  SourceLocation where;
};

struct Lesson {
  std::filesystem::path file;
  std::string name;
  std::string title;
  int minutes = 0;                   // planned length on 2 cores, discussion included
  std::optional<CliffLesson> cliff;  // set: a cliff lesson (no scenario, no compare)
  std::filesystem::path scenario;    // resolved against the lesson's folder
  SourceLocation scenario_where;
  std::string stage;                   // the stage whose effect is revealed
  std::string reference = "baseline";  // ... against this one
  SourceLocation compare_where;
  std::vector<std::string> knobs;  // Explain: these knobs' catalog text, live values
  SourceLocation knobs_where;
  std::string explain;
  std::vector<PredictQuestion> predict;
  std::vector<std::string> reveal_evidence;  // evidence keys shown in the reveal
  SourceLocation reveal_where;
  bool show_latency = true;  // mean latency and Little's law in the reveal
  std::string gap;           // why predictions usually miss
  std::vector<DiagnoseQuestion> diagnose;
};

// Throws InputError carrying every problem, each with file:line:col.
Lesson load_lesson(const std::filesystem::path& path);
// The same from text; problems are appended, never thrown.
Lesson parse_lesson(std::string_view text, const std::string& file,
                    std::vector<ConfigError>& problems);

// Against the plan of its scenario (nullptr for a cliff lesson) and the catalog: the compared
// stages exist, the knobs, a cliff's fixed settings and the evidence keys are known. Problems
// point at the lesson file.
std::vector<ConfigError> check_lesson(const Lesson& lesson, const scenario::Plan* plan,
                                      const knobs::Catalog& catalog);

// What participants answered, from an answers file (--answers) or typed at the terminal.
struct Participant {
  std::string name;
  std::map<std::string, std::string> answers;  // question id -> answer
};
// answers.yaml: `participants: [{name: Ann, answers: {tps: "slower, about 3x", cause: b}}]`.
// Throws InputError with file:line:col. Answers to questions the lesson lacks are errors.
std::vector<Participant> load_answers(const std::filesystem::path& path, const Lesson& lesson);

// The lesson files in data_root()/scenarios/workshop/lessons, by name.
std::vector<std::string> lesson_names();
// A lesson argument: a file when it is a path (names_a_file, common/paths.h: "./cache", "my.yaml"),
// else a name of the library ("cache"), never a file of the current folder.
std::filesystem::path resolve_lesson(const std::string& arg);

}  // namespace pgslow::workshop
