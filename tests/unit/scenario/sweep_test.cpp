#include "scenario/sweep.h"

#include <gtest/gtest.h>

namespace pgslow::scenario {
namespace {

std::string all(const std::vector<ConfigError>& problems) {
  std::string out;
  for (const auto& p : problems) out += p.str() + "\n";
  return out;
}

TEST(Sweep, OneDimensionExpandsIntoOneStagePerValueWithTheFixedLoad) {
  std::vector<ConfigError> problems;
  Scenario s = parse_scenario(R"(
workload: select-only
sweep:
  pool_size: [1, 5, 150]
  load: {clients: 200}
)",
                              "s.yaml", problems);
  ASSERT_TRUE(problems.empty()) << all(problems);
  ASSERT_EQ(s.sweep.dimensions, std::vector<std::string>{"pool_size"});
  ASSERT_EQ(s.stages.size(), 3u);
  EXPECT_EQ(s.stages[0].name, "pool_size 1");
  EXPECT_EQ(s.stages[2].name, "pool_size 150");
  for (const auto& st : s.stages) {
    EXPECT_TRUE(st.sweep_point);
    EXPECT_EQ(st.load.clients, 200);
  }
  EXPECT_EQ(s.stages[1].load.pool_size, 5);
}

TEST(Sweep, TwoDimensionsAndRelativeRatesThenTheStagesList) {
  std::vector<ConfigError> problems;
  Scenario s = parse_scenario(R"(
workload: select-only
sweep:
  rate: [25%, 75%]
  clients: [8, 256]
stages:
  - name: fix
    load: {rate: 1000}
)",
                              "s.yaml", problems);
  ASSERT_TRUE(problems.empty()) << all(problems);
  ASSERT_EQ(s.stages.size(), 5u);
  EXPECT_EQ(s.stages[0].name, "rate 25%, clients 8");
  EXPECT_EQ(s.stages[1].name, "rate 75%, clients 8");
  EXPECT_EQ(s.stages[3].name, "rate 75%, clients 256");
  EXPECT_EQ(s.stages[3].load.rate_percent, 75);
  EXPECT_FALSE(s.stages[3].load.rate);
  EXPECT_EQ(s.stages[3].load.clients, 256);
  EXPECT_EQ(s.stages[4].name, "fix");
  EXPECT_FALSE(s.stages[4].sweep_point);
  EXPECT_EQ(s.stages[4].load.rate, 1000);
}

TEST(Sweep, BadValuesNameFileLineAndReason) {
  std::vector<ConfigError> problems;
  parse_scenario("workload: select-only\nsweep:\n  clients: [1, -3]\n  rate: [fast]\n", "s.yaml",
                 problems);
  const std::string text = all(problems);
  EXPECT_NE(text.find("s.yaml:3"), std::string::npos) << text;
  EXPECT_NE(text.find("sweep.clients"), std::string::npos) << text;
  EXPECT_NE(text.find("s.yaml:4"), std::string::npos) << text;
  EXPECT_NE(text.find("not a rate"), std::string::npos) << text;
}

TEST(Sweep, ThreeDimensionsOrNoneAreRefused) {
  std::vector<ConfigError> problems;
  parse_scenario(
      "workload: select-only\nsweep:\n  clients: [1]\n  pool_size: [1]\n  workers: [1]\n", "s.yaml",
      problems);
  EXPECT_NE(all(problems).find("3 dimensions"), std::string::npos) << all(problems);
  problems.clear();
  parse_scenario("workload: select-only\nsweep:\n  load: {clients: 3}\n", "s.yaml", problems);
  EXPECT_NE(all(problems).find("varies nothing"), std::string::npos) << all(problems);
}

}  // namespace
}  // namespace pgslow::scenario
