// Lesson files: every shipped lesson parses and its questions are well formed; problems in a
// lesson name file:line:col; answers files are checked against the lesson's questions.

#include "workshop/lesson.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "common/paths.h"
#include "scenario/library.h"

namespace pgslow::workshop {
namespace {

namespace fs = std::filesystem;

std::string all(const std::vector<ConfigError>& problems) {
  std::string out;
  for (const auto& p : problems) out += p.str() + "\n";
  return out;
}

TEST(LessonLibrary, EveryLessonParsesAndNamesAScenarioThatExists) {
  const fs::path dir = fs::path(PGSLOW_SOURCE_DIR) / "scenarios/workshop/lessons";
  int count = 0;
  for (const auto& e : fs::directory_iterator(dir)) {
    if (e.path().extension() != ".yaml") continue;
    ++count;
    std::vector<ConfigError> problems;
    Lesson l = parse_lesson(read_file(e.path()), e.path().string(), problems);
    EXPECT_FALSE(has_errors(problems)) << all(problems);
    if (l.cliff) {
      // A cliff lesson: its scripts exist (resolved against the lesson's folder).
      for (const std::string& script : l.cliff->search.scripts)
        EXPECT_TRUE(fs::exists(script)) << script;
    } else {
      EXPECT_TRUE(fs::exists(l.scenario)) << l.scenario;
    }
    EXPECT_GE(l.minutes, 10) << e.path();
    EXPECT_LE(l.minutes, 15) << e.path();
    EXPECT_FALSE(l.predict.empty());
    EXPECT_TRUE(l.predict.front().is_effect())
        << "the first question is the effect (the page asks it)";
  }
  // cache, cache on a machine smaller than its data, checkpoints, WAL/commit, autovacuum,
  // planner, hot rows, connections, fixed rate; the cliffs of the machine's memory and work_mem.
  EXPECT_EQ(count, 11);
}

TEST(LessonFile, ACliffLessonNamesItsSearchAndNoScenario) {
  std::vector<ConfigError> problems;
  Lesson l = parse_lesson(
      "lesson: x\n"
      "title: X\n"
      "cliff:\n"
      "  knob: Work_Mem\n"
      "  from: 64MB\n"
      "  to: 64kB\n"
      "  settings: {jit: off}\n"
      "  workload: {scripts: [s.sql@2], clients: 2}\n"
      "  measure: {duration: 3s, repeats: 4}\n"
      "predict:\n"
      "  - id: knee\n"
      "    ask: where?\n",
      "dir/l.yaml", problems);
  ASSERT_FALSE(has_errors(problems)) << all(problems);
  ASSERT_TRUE(l.cliff);
  const experiment::CliffExperiment& e = l.cliff->search;
  EXPECT_EQ(e.options.knob, "work_mem");
  EXPECT_EQ(e.scripts, std::vector<std::string>{"dir/s.sql@2"});
  EXPECT_EQ(e.duration_s, 3);
  EXPECT_EQ(e.warmup_s, 2);  // the default
  EXPECT_EQ(e.options.search.repeats, 4);
  ASSERT_EQ(e.options.settings.size(), 1u);
  EXPECT_EQ(e.options.settings[0].where.line, 7);

  problems.clear();
  parse_lesson(
      "lesson: x\ntitle: X\nscenario: quick\ncliff: {knob: work_mem, from: 4MB, to: 1MB, "
      "resolution: 1, measure: {repeats: 2}}\npredict: [{id: k, ask: where}]\n",
      "l.yaml", problems);
  const std::string text = all(problems);
  EXPECT_NE(text.find("l.yaml:3:11: error: a cliff lesson has no scenario"), std::string::npos)
      << text;
  EXPECT_NE(text.find("cliff.resolution must be above 1"), std::string::npos) << text;
  EXPECT_NE(text.find("cliff.measure.repeats must be at least 3"), std::string::npos) << text;

  // Checked against the catalog: a fixed setting pgslow does not know, at its line.
  problems.clear();
  Lesson typo = parse_lesson(
      "lesson: x\ntitle: X\ncliff:\n  knob: work_mem\n  from: 4MB\n  to: 1MB\n"
      "  settings: {jti: off}\npredict: [{id: k, ask: where}]\n",
      "l.yaml", problems);
  ASSERT_FALSE(has_errors(problems)) << all(problems);
  const std::string checked = all(check_lesson(typo, nullptr, knobs::Catalog::load_default()));
  EXPECT_NE(checked.find("l.yaml:7:14: error: cliff.settings: \"jti\" is not in the knob catalog"),
            std::string::npos)
      << checked;
  EXPECT_NE(checked.find("did you mean jit?"), std::string::npos) << checked;
}

TEST(LessonFile, ProblemsNameFileLineAndColumn) {
  std::vector<ConfigError> problems;
  parse_lesson(
      "lesson: x\n"
      "title: X\n"
      "scenario: s.yaml\n"
      "compare: {stage: a}\n"
      "predict:\n"
      "  - id: tps\n"
      "    ask: how?\n"
      "  - id: cause\n"
      "    ask: which?\n"
      "    choices: [one, two]\n"
      "    answer: three\n"
      "colour: red\n",
      "l.yaml", problems);
  const std::string text = all(problems);
  EXPECT_NE(text.find("l.yaml:11:13"), std::string::npos) << text;
  EXPECT_NE(text.find("not one of the choices"), std::string::npos) << text;
  EXPECT_NE(text.find("l.yaml:12:1"), std::string::npos) << text;
}

TEST(LessonFile, NeedsACompareAndAQuestion) {
  std::vector<ConfigError> problems;
  parse_lesson("lesson: x\ntitle: X\nscenario: s.yaml\n", "l.yaml", problems);
  const std::string text = all(problems);
  EXPECT_NE(text.find("compare"), std::string::npos) << text;
  EXPECT_NE(text.find("predict"), std::string::npos) << text;
}

// A lesson's scenario is a file beside it or a scenario of the library by name, found as `run`
// finds it; a misspelt name is an error at its line with the same "did you mean".
TEST(LessonFile, TheScenarioIsAFileOrALibraryName) {
  std::vector<ConfigError> problems;
  Lesson l = parse_lesson("lesson: x\ntitle: X\nscenario: quick\n", "l.yaml", problems);
  EXPECT_EQ(l.scenario, data_root() / "scenarios" / "quick.yaml");
  problems.clear();
  parse_lesson("lesson: x\ntitle: X\nscenario: quik\n", "l.yaml", problems);
  const std::string text = all(problems);
  EXPECT_NE(text.find("l.yaml:3:11"), std::string::npos) << text;
  EXPECT_NE(text.find("did you mean 'quick'?"), std::string::npos) << text;
}

TEST(AnswersFile, AnswersToUnknownQuestionsAreErrors) {
  std::vector<ConfigError> problems;
  Lesson l = parse_lesson(
      "lesson: x\ntitle: X\nscenario: quick\ncompare: {stage: a}\npredict:\n  - id: tps\n    ask: "
      "how?\n",
      "l.yaml", problems);
  ASSERT_FALSE(has_errors(problems)) << all(problems);
  const fs::path f =
      fs::temp_directory_path() / ("pgslow-answers-" + std::to_string(::getpid()) + ".yaml");
  std::ofstream(f) << "participants:\n  - name: Ann\n    answers: {tps: slower, speed: fast}\n";
  try {
    load_answers(f, l);
    ADD_FAILURE() << "no error";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find(":3:"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("no question \"speed\""), std::string::npos) << e.what();
  }
  std::ofstream(f) << "participants:\n  - name: Ann\n    answers: {tps: slower}\n";
  auto people = load_answers(f, l);
  ASSERT_EQ(people.size(), 1u);
  EXPECT_EQ(people[0].answers.at("tps"), "slower");
  fs::remove(f);
}

// Issue #36: a bare name is only ever the library's. A `quick` or `cache` in the current folder
// (anyone's, when that folder is /tmp) is never read; a path (a '/', or .yaml) still is.
TEST(LessonFile, ABareNameNeverReadsTheCurrentFolder) {
  const fs::path here = fs::current_path();
  const fs::path dir =
      fs::temp_directory_path() / ("pgslow-bare-names-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  for (const char* name : {"quick", "cache", "mine.yaml"}) std::ofstream(dir / name) << "x: 1\n";
  fs::current_path(dir);
  EXPECT_EQ(scenario::resolve_scenario("quick"), data_root() / "scenarios" / "quick.yaml");
  EXPECT_EQ(resolve_lesson("cache").parent_path(),
            data_root() / "scenarios" / "workshop" / "lessons");
  EXPECT_EQ(scenario::resolve_scenario("./quick"), fs::path("./quick"));
  EXPECT_EQ(scenario::resolve_scenario("mine.yaml"), fs::path("mine.yaml"));
  EXPECT_EQ(resolve_lesson("./cache"), fs::path("./cache"));
  EXPECT_TRUE(names_a_file("a/b"));
  EXPECT_TRUE(names_a_file("b.yml"));
  EXPECT_TRUE(names_a_file("postgresql.conf"));
  EXPECT_FALSE(names_a_file("quick"));
  EXPECT_FALSE(names_a_file("settings"));
  fs::current_path(here);
  fs::remove_all(dir);
}

}  // namespace
}  // namespace pgslow::workshop
