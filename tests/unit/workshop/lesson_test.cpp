// Lesson files: every shipped lesson parses and its questions are well formed; problems in a
// lesson name file:line:col; answers files are checked against the lesson's questions.

#include "workshop/lesson.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "common/paths.h"

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
    EXPECT_TRUE(fs::exists(l.scenario)) << l.scenario;
    EXPECT_GE(l.minutes, 10) << e.path();
    EXPECT_LE(l.minutes, 15) << e.path();
    EXPECT_FALSE(l.predict.empty());
    EXPECT_TRUE(l.predict.front().is_effect())
        << "the first question is the effect (the page asks it)";
  }
  // cache, cache on a machine smaller than its data, checkpoints, WAL/commit, autovacuum,
  // planner, hot rows, connections, fixed rate.
  EXPECT_EQ(count, 9);
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

}  // namespace
}  // namespace pgslow::workshop
