// Golden-file tests: every renderer of the registry on its sample result, byte for byte.
// Regenerate after an intended change with PGSLOW_UPDATE_GOLDEN=1 and review the diff.

#include "tests/unit/report/golden.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <stdexcept>

#include "common/errors.h"
#include "report/registry.h"
#include "tests/unit/report/sample_results.h"

namespace pgslow::report {
namespace {

// Every pair the registry has, result type by format: <sample>.<extension>.
template <typename Result>
void check_every_format(const std::string& sample, const Result& result) {
  ASSERT_FALSE(renderers<Result>().empty());
  for (const auto& r : renderers<Result>()) {
    SCOPED_TRACE(sample + " as " + std::string(r.format));
    check_golden(sample + "." + std::string(r.extension), rendered(result, r.format));
  }
}

// The console fits the terminal ($COLUMNS): the goldens are made at 100 columns.
class HundredColumns : public ::testing::Environment {
 public:
  void SetUp() override { ::setenv("COLUMNS", "100", 1); }
};
const auto* const hundred_columns = ::testing::AddGlobalTestEnvironment(new HundredColumns);

TEST(Golden, Run) {
  check_every_format("sample", testing::sample_run());
}

// --detail: under each stage, every axis, the evidence, waits, warnings, the audit and the
// attribution.
TEST(Golden, RunInDetail) {
  std::ostringstream out;
  render_console(testing::sample_run(), out, {true, 100});
  check_golden("sample_detail.txt", out.str());
}

TEST(Golden, Comparison) {
  const report::Run other = testing::sample_run_on_17();
  check_every_format("compare",
                     RunComparison{testing::sample_run(), other, "pg15.json", "pg17.json"});
}

// The same scenario on two versions, side by side.
TEST(Golden, Versions) {
  check_every_format("versions", testing::sample_versions());
}

TEST(Golden, Cliff) {
  check_every_format("cliff", testing::sample_cliff());
}

TEST(Golden, Bisect) {
  check_every_format("bisect", testing::sample_bisect());
}

TEST(Golden, Plan) {
  check_every_format("plan", testing::sample_plan());
}

TEST(Golden, Bench) {
  check_every_format("bench", testing::sample_bench());
}

TEST(Golden, KnobList) {
  check_every_format("knob_list", testing::sample_knob_list());
}

TEST(Golden, CheckData) {
  check_every_format("check_data", testing::sample_check_data());
}

TEST(Golden, KnobDetail) {
  check_every_format("knob_detail", testing::sample_knob_detail());
}

TEST(Golden, PresetList) {
  check_every_format("preset_list", testing::sample_preset_list());
}

TEST(Golden, PresetDetail) {
  check_every_format("preset_detail", testing::sample_preset_detail());
}

TEST(Golden, LessonReveal) {
  check_every_format("reveal", testing::sample_reveal());
}

TEST(Golden, CliffLessonReveal) {
  check_every_format("cliff_reveal", testing::sample_cliff_reveal());
}

TEST(Golden, LessonList) {
  check_every_format("lesson_list", testing::sample_lesson_list());
}

TEST(Golden, MysteryClues) {
  check_every_format("clues", testing::sample_clues());
}

TEST(Golden, MysteryReveal) {
  check_every_format("mystery_reveal", testing::sample_mystery_reveal());
}

TEST(Golden, MysteryFix) {
  check_every_format("fix", testing::sample_fix());
}

TEST(Golden, MysteryScoreboard) {
  check_every_format("scoreboard", testing::sample_scoreboard());
}

TEST(Golden, SessionRecord) {
  check_every_format("record", testing::sample_record());
}

// The room's calibration: the median factor between prediction and measurement, on the log
// scale, over the predictions that name a factor (here 1.2x and 6x off: 3.6x).
TEST(Record, CalibrationIsTheMedianFactorOffOverQuantifiedPredictions) {
  const SessionRecord r = testing::sample_record();
  ASSERT_EQ(r.lessons.size(), 2u);
  EXPECT_EQ(calibration(r.lessons[0]).predictions, 2u);
  EXPECT_NEAR(calibration(r.lessons[0]).factor, (0.6 / 0.5 + 0.6 / 0.1) / 2, 1e-9);
  // A cliff lesson's: the guesses' distances from the cliff (1x and 4x), not an effect's.
  EXPECT_EQ(calibration(r.lessons[1]).predictions, 2u);
  EXPECT_NEAR(calibration(r.lessons[1]).factor, 2.5, 1e-9);
  EXPECT_EQ(r.lessons[1].effect.ratio, 0.82);  // the first harmful value's
}

// A session's record grows over several commands: what was written reads back the same.
TEST(Record, ReadBackSaysTheSame) {
  const SessionRecord r = testing::sample_record();
  const SessionRecord back = record_from_json(record_to_json(r), "record.json");
  EXPECT_EQ(rendered(back, "json"), rendered(r, "json"));
  EXPECT_EQ(rendered(back, "md"), rendered(r, "md"));
}

// Every line of the console's table within `width` columns; the number of lines.
std::size_t expect_fits(const std::string& text, std::size_t width) {
  std::istringstream in(text);
  std::string line;
  std::size_t lines = 0;
  while (std::getline(in, line)) {
    ++lines;
    std::size_t columns = 0;
    for (unsigned char c : line) columns += (c & 0xC0) != 0x80 ? 1 : 0;
    EXPECT_LE(columns, width) << line;
  }
  return lines;
}

TEST(Console, FitsOneHundredColumns) {
  expect_fits(rendered(testing::sample_run(), "console"), 100);
}

// COLUMNS=80 (or a terminal that wide): every line fits, each stage still on one line.
TEST(Console, FitsEightyColumnsWhenTheTerminalIsThatWide) {
  ::setenv("COLUMNS", "80", 1);
  const std::string text = rendered(testing::sample_run(), "console");
  ::setenv("COLUMNS", "100", 1);
  expect_fits(text, 80);
  for (const auto& stage : testing::sample_run().stages) {
    std::size_t rows = 0;
    std::istringstream in(text);
    std::string line;
    while (std::getline(in, line)) rows += line.rfind(stage.name + " ", 0) == 0 ? 1 : 0;
    EXPECT_EQ(rows, 1u) << stage.name << " is not one line:\n" << text;
  }
}

// The cause column never cuts a knob's name: whole names, "a +1" or "N knobs"; a load-side
// stage names what its `load:` changed, as a knob.
TEST(Console, TheCauseColumnKeepsWholeNamesAndNamesLoadChanges) {
  report::Run run = testing::sample_run();
  run.stages[1].changes.clear();
  run.stages[1].load.pool_size = 1;
  run.stages[1].load.pooler = "pgbouncer";
  run.stages[1].attribution.reset();
  for (const char* columns : {"80", "100", "160"}) {
    ::setenv("COLUMNS", columns, 1);
    const std::string text = rendered(run, "console");
    std::istringstream in(text);
    std::string line;
    while (std::getline(in, line)) {
      if (line.rfind(run.stages[1].name + " ", 0) == 0) {
        EXPECT_NE(line.find("pool_size"), std::string::npos) << columns << ": " << line;
      }
      if (line.rfind("planner ", 0) == 0) {
        EXPECT_TRUE(line.find("random_page_cost") != std::string::npos ||
                    line.find("2 knobs") != std::string::npos)
            << columns << ": " << line;
      }
      EXPECT_EQ(line.find("_…"), std::string::npos) << columns << ": " << line;
    }
  }
  ::setenv("COLUMNS", "100", 1);
}

// The table at a glance: a header, one line per stage, its footnotes; far fewer lines than the
// detail.
TEST(Console, OneLinePerStageAndTheDetailOnRequest) {
  const report::Run run = testing::sample_run();
  std::ostringstream compact;
  std::ostringstream detail;
  render_console(run, compact, {false, 100});
  render_console(run, detail, {true, 100});
  const std::size_t compact_lines = expect_fits(compact.str(), 100);
  EXPECT_LE(compact_lines, run.stages.size() + 16);
  EXPECT_GT(expect_fits(detail.str(), 100), compact_lines + run.stages.size());
  EXPECT_NE(compact.str().find("--detail"), std::string::npos);
  EXPECT_NE(detail.str().find("axes "), std::string::npos);
}

TEST(Registry, AnUnknownFormatNamesTheResultsFormats) {
  EXPECT_EQ(find_renderer<report::Run>("pdf"), nullptr);
  EXPECT_NE(find_renderer<report::Run>("markdown"), nullptr);
  try {
    rendered(testing::sample_bench(), "md");
    FAIL() << "bench has no Markdown";
  } catch (const pgslow::InputError& e) {
    EXPECT_NE(std::string(e.what()).find("--format md: unknown format (one of: console, json)"),
              std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace pgslow::report
