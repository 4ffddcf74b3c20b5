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

}  // namespace
}  // namespace pgslow::driver
