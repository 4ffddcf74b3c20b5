#include "report/json.h"

#include <gtest/gtest.h>

#include <map>

#include "tests/unit/report/sample_run.h"

namespace pgslow::report {
namespace {

TEST(Json, RoundTripIsExact) {
  const results::Run run = testing::sample_run();
  const results::Run back = read_json(to_json(run), "sample.json");
  EXPECT_EQ(back, run);
  EXPECT_EQ(to_json(back), to_json(run));
}

// A sweep point's values go out and come back; a report written before them reads them from
// the point's name.
TEST(Json, SweepValuesRoundTripAndOlderReportsReadThemFromTheName) {
  results::Run run = testing::sample_run();
  run.sweep = {"shared_buffers", "clients"};
  run.stages[1].sweep_point = true;
  run.stages[1].sweep_values = {{"shared_buffers", "32MB"}, {"clients", "8"}};
  const std::string json = to_json(run);
  EXPECT_NE(json.find("\"sweep_values\""), std::string::npos);
  EXPECT_EQ(read_json(json, "x.json"), run);

  run.stages[1].sweep_values.clear();
  run.stages[1].name = "rate 75%, clients 256";
  const results::Run old = read_json(to_json(run), "old.json");
  EXPECT_EQ(old.stages[1].sweep_values,
            (std::map<std::string, std::string>{{"rate", "75%"}, {"clients", "256"}}));
}

TEST(Json, NonFiniteEvidenceIsDroppedNotWrittenAsGarbage) {
  results::Run run = testing::sample_run();
  run.stages[0].evidence["buffer_hit_ratio"] = NAN;
  const results::Run back = read_json(to_json(run), "x.json");
  EXPECT_EQ(back.stages[0].evidence.count("buffer_hit_ratio"), 0u);
}

void expect_error(const std::string& text, const std::string& fragment) {
  try {
    read_json(text, "run.json");
    FAIL() << "no error for " << text;
  } catch (const ReadError& e) {
    EXPECT_NE(std::string(e.what()).find(fragment), std::string::npos) << e.what();
  }
}

TEST(Json, ErrorsNameTheFileAndTheField) {
  expect_error("{", "run.json: not valid JSON");
  expect_error("[]", "run.json: (top level): expected an object");
  expect_error(R"({"schema": "other"})", "not a pgslow report");
  expect_error(R"({"schema": "pgslow-report", "schema_version": 99})",
               "schema_version 99 is not supported");
  expect_error(R"({"schema": "pgslow-report", "schema_version": 1,
                  "stages": [{"name": "a", "repeats": [{"tps": "fast"}]}]})",
               "run.json: stages[0].repeats[0].tps: expected a number");
  expect_error(R"({"schema": "pgslow-report", "schema_version": 1,
                  "stages": [{"repeats": [{"committed": -3}]}]})",
               "stages[0].repeats[0].committed: expected a count >= 0");
  expect_error(R"({"schema": "pgslow-report", "schema_version": 1, "stages": {}})",
               "stages: expected an array");
}

TEST(Json, MissingFieldsKeepDefaults) {
  const results::Run run = read_json(R"({"schema": "pgslow-report", "schema_version": 1,
                                "stages": [{"name": "baseline"}]})",
                                     "min.json");
  ASSERT_EQ(run.stages.size(), 1u);
  EXPECT_EQ(run.stages[0].name, "baseline");
  EXPECT_TRUE(run.stages[0].repeats.empty());
}

}  // namespace
}  // namespace pgslow::report
