#include "report/json.h"

#include <gtest/gtest.h>

#include <map>
#include <string>

#include "report/json_fields.h"
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

// A failed stage's kind of failure goes out as its name and comes back; a stage that ran has
// none, and a name the schema does not know is refused with the field.
TEST(Json, AStagesFailureRoundTripsByNameAndOnlyWhenItFailed) {
  results::Run run = testing::sample_run();
  run.stages[1].error = "stopped early: the configuration took 2.0 s to apply";
  run.stages[1].failure = results::StageFailure::kStoppedEarly;
  std::string json = to_json(run);
  EXPECT_NE(json.find("\"failure\": \"stopped early\""), std::string::npos);
  EXPECT_EQ(read_json(json, "x.json"), run);
  EXPECT_EQ(to_json(testing::sample_run()).find("\"failure\""), std::string::npos);

  const auto at = json.find("\"stopped early\"");
  json.replace(at, std::string("\"stopped early\"").size(), "\"crashed\"");
  try {
    read_json(json, "x.json");
    FAIL() << "an unknown failure was read";
  } catch (const ReadError& e) {
    EXPECT_NE(std::string(e.what()).find("failure crashed is not one of"), std::string::npos)
        << e.what();
  }
}

// A stage's pooler (a sweep of `pooler:`) is written where it was set, and nowhere else.
TEST(Json, AStagesPoolerIsWrittenOnlyWhereItWasSet) {
  results::Run run = testing::sample_run();
  const std::string without = to_json(run);
  EXPECT_EQ(without.find("\"pooler\": \"pgbouncer\""), std::string::npos);
  run.stages[1].load.pooler = "pgbouncer";
  const std::string json = to_json(run);
  EXPECT_NE(json.find("\"pooler\": \"pgbouncer\""), std::string::npos);
  EXPECT_EQ(read_json(json, "x.json").stages[1].load.pooler, "pgbouncer");
}

// Gives every field of the schema's lists a value of its own, none a default, so the round
// trip below covers each field of report.json without naming one.
template <typename T>
void fill(T& v, int& n) {
  using namespace json_schema;
  if constexpr (HasFields<T>) {
    std::apply(
        [&](const auto&... entry) {
          (
              [&](const auto& e) {
                if constexpr (requires { e.member; }) fill(v.*(e.member), n);
              }(entry),
              ...);
        },
        Fields<T>::list);
  } else if constexpr (std::is_same_v<T, bool>) {
    v = true;
  } else if constexpr (std::is_floating_point_v<T>) {
    v = ++n + 0.25;
  } else if constexpr (std::is_integral_v<T>) {
    v = static_cast<T>(++n);
  } else if constexpr (std::is_same_v<T, std::string>) {
    v = "text " + std::to_string(++n);
  } else if constexpr (IsOptional<T>::value) {
    fill(v.emplace(), n);
  } else if constexpr (IsVector<T>::value) {
    v.resize(2);
    for (auto& e : v) fill(e, n);
  } else if constexpr (IsMap<T>::value) {
    fill(v["key " + std::to_string(++n)], n);
  }
}

TEST(Json, EveryFieldOfTheSchemaRoundTrips) {
  report::Run run;
  int n = 0;
  fill(run, n);
  run.schema_version = kSchemaVersion;
  for (auto& ref : run.references) ref.after_stage = 1;
  EXPECT_GT(n, 200);  // the lists reach every nested struct
  const report::Run back = read_json(to_json(run), "filled.json");
  EXPECT_EQ(back, run);
  EXPECT_EQ(to_json(back), to_json(run));
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
