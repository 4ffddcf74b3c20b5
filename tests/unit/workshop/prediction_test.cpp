// Predictions in participants' words, read and scored against a measured effect.

#include "workshop/prediction.h"

#include <gtest/gtest.h>

namespace pgslow::workshop {
namespace {

using D = EffectPrediction::Direction;

TEST(Prediction, ReadsDirectionAndFactor) {
  auto p = parse_effect_prediction("slower, about 3x");
  EXPECT_EQ(p.direction, D::kSlower);
  ASSERT_TRUE(p.factor);
  EXPECT_DOUBLE_EQ(*p.factor, 3);
  p = parse_effect_prediction("2.5x faster");
  EXPECT_EQ(p.direction, D::kFaster);
  EXPECT_DOUBLE_EQ(*p.factor, 2.5);
  p = parse_effect_prediction("-50%");
  EXPECT_EQ(p.direction, D::kSlower);
  EXPECT_DOUBLE_EQ(*p.factor, 2);
  p = parse_effect_prediction("+20%");
  EXPECT_EQ(p.direction, D::kFaster);
  EXPECT_DOUBLE_EQ(*p.factor, 1.2);
  EXPECT_EQ(parse_effect_prediction("no change").direction, D::kSame);
  EXPECT_EQ(parse_effect_prediction("it depends").direction, D::kUnknown);
}

report::Effect effect(double ratio, double low, double high) {
  report::Effect e;
  e.known = true;
  e.ratio = ratio;
  e.interval.ratio = ratio;
  e.interval.low = low;
  e.interval.high = high;
  e.interval.known = true;
  e.verdict = results::verdict_of(e.interval);
  return e;
}

TEST(Prediction, ScoresAgainstTheMeasurement) {
  const report::Effect slower4 = effect(0.25, 0.2, 0.3);
  EXPECT_EQ(score_effect_prediction(parse_effect_prediction("slower, about 3x"), slower4)
                .rfind("right:", 0),
            0u);
  EXPECT_NE(
      score_effect_prediction(parse_effect_prediction("slower, 20x"), slower4).find("off by 5.0x"),
      std::string::npos);
  EXPECT_EQ(score_effect_prediction(parse_effect_prediction("faster"), slower4)
                .rfind("wrong direction", 0),
            0u);
  const report::Effect noise = effect(1.03, 0.9, 1.15);
  EXPECT_EQ(score_effect_prediction(parse_effect_prediction("no change"), noise).rfind("right", 0),
            0u);
  EXPECT_EQ(score_effect_prediction(parse_effect_prediction("slower, 2x"), noise)
                .rfind("not confirmed", 0),
            0u);
}

TEST(Prediction, MatchesChoicesByLetterNumberOrText) {
  const std::vector<std::string> c = {"hit ratio", "checkpoints", "lock waits"};
  EXPECT_EQ(match_choice("b", c), 1u);
  EXPECT_EQ(match_choice("3", c), 2u);
  EXPECT_EQ(match_choice(" Hit Ratio ", c), 0u);
  EXPECT_FALSE(match_choice("d", c));
  EXPECT_FALSE(match_choice("", c));
}

}  // namespace
}  // namespace pgslow::workshop
