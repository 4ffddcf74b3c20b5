#include <gtest/gtest.h>

#include "driver/driver.h"

namespace pgslow::driver {
namespace {

TEST(Options, ThinkTimeUnderAFixedRateIsRefusedWithTheReason) {
  DriverOptions o;
  o.rate = 50;
  EXPECT_TRUE(validate(o, false).empty());
  const auto problems = validate(o, true);
  ASSERT_EQ(problems.size(), 1u);
  EXPECT_NE(problems[0].message.find("--think-time cannot be combined with --rate 50"),
            std::string::npos)
      << problems[0].message;
  EXPECT_NE(problems[0].message.find("waited only in the closed loop"), std::string::npos);
  o.rate = 0;  // the closed loop waits them
  EXPECT_TRUE(validate(o, true).empty());
}

TEST(Options, TheRampEndsWithinTheWarmup) {
  DriverOptions o;
  o.warmup_s = 30;
  o.ramp_s = 30;  // at the warm-up's end: every client runs in the measured window
  EXPECT_TRUE(validate(o).empty());
  o.ramp_s = 30.5;
  const auto problems = validate(o);
  ASSERT_EQ(problems.size(), 1u);
  EXPECT_NE(problems[0].message.find("--ramp 30.5 s ends after the warm-up of 30 s"),
            std::string::npos)
      << problems[0].message;
  o.ramp_s = -1;
  EXPECT_FALSE(validate(o).empty());
}

}  // namespace
}  // namespace pgslow::driver
