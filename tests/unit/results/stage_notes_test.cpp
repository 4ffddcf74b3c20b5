// The notes a stage carries about how it was measured (results/stage_notes.h), worded from the
// facts the lab gathered.

#include "results/stage_notes.h"

#include <gtest/gtest.h>

namespace pgslow::results {
namespace {

Measurement run(double duration_s, double client_cpu_s, int clients) {
  Measurement m;
  m.duration_s = duration_s;
  m.client_cpu_s = client_cpu_s;
  m.clients_connected = clients;
  return m;
}

// Client threads busy 95% of the time in one run: the figure may measure the driver. At 50%
// they had room, and a run without a CPU reading says nothing.
TEST(StageNotes, TheDriverIsNamedOnlyWhenItsThreadsWereNearlyAlwaysBusy) {
  const auto busy = driver_bound_note({run(10, 2 * 10 * 0.5, 8), run(10, 2 * 10 * 0.95, 8)}, 2);
  ASSERT_TRUE(busy);
  EXPECT_NE(busy->find("busy 95% of the time"), std::string::npos) << *busy;
  EXPECT_FALSE(driver_bound_note({run(10, 2 * 10 * 0.5, 8)}, 2));
  EXPECT_FALSE(driver_bound_note({run(10, 0, 8)}, 2));
  // One client keeps one thread busy at most: 9.5 s of its 10 s is 95%.
  EXPECT_TRUE(driver_bound_note({run(10, 9.5, 1)}, 2));
}

TEST(StageNotes, ADisturbanceNamesTheWorstRunAndHowManyOfTheStagesRuns) {
  EXPECT_EQ(disturbance_note({0.24, 0.23, 0.01, 2, 3}),
            "the machine was disturbed: work other than the server and pgslow's clients used up "
            "to 24% of its CPU during 2 of 3 runs of this stage (other programs 23%, pgslow's "
            "dashboard and evidence 1%); its figures may be slower than the configuration alone "
            "explains");
  EXPECT_NE(disturbance_note({0.2, 0.2, 0, 1, 1}).find("during 1 of 1 run of this stage"),
            std::string::npos);
}

}  // namespace
}  // namespace pgslow::results
