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

// ---- cliff lessons: a guess of where a knob starts to hurt -----------------------------

search::CliffSpace work_mem_space() {
  search::CliffSpace s;
  s.knob = "work_mem";
  s.from = 65536;  // 64MB in kB
  s.to = 64;
  s.integer = true;
  s.unit = knobs::parse_base_unit("kB").value_or(knobs::BaseUnit{});
  return s;
}

// A search down from 64MB that found 4MB safe and 2MB harmful (and 64kB harmful too).
results::CliffResult work_mem_cliff(bool with_cliff = true) {
  results::CliffResult c;
  c.knob = "work_mem";
  c.from = "64MB";
  c.to = "64kB";
  c.to_value = 64;
  c.baseline.value = "64MB";
  c.baseline.base_value = 65536;
  auto point = [](std::string value, double v, results::CliffVerdict verdict) {
    results::CliffPoint p;
    p.value = std::move(value);
    p.base_value = v;
    p.verdict = verdict;
    return p;
  };
  using V = results::CliffVerdict;
  if (with_cliff) {
    c.points = {point("64kB", 64, V::kHarmful), point("2MB", 2048, V::kHarmful),
                point("4MB", 4096, V::kSafe)};
    c.first_harmful = 1;
    c.last_safe = 2;
  } else {
    c.points = {point("64kB", 64, V::kSafe)};
    c.last_safe = 0;
  }
  return c;
}

TEST(CliffGuess, ReadsAValueOfTheKnobInItsUnits) {
  const search::CliffSpace s = work_mem_space();
  EXPECT_EQ(parse_cliff_guess("3MB", s), 3072);
  EXPECT_EQ(parse_cliff_guess(" 512kB ", s), 512);
  EXPECT_EQ(parse_cliff_guess("1024", s), 1024);  // a bare number is in kB, as in postgresql.conf
  EXPECT_FALSE(parse_cliff_guess("lots", s));
  EXPECT_FALSE(parse_cliff_guess("", s));
  EXPECT_FALSE(parse_cliff_guess("-4MB", s));
  search::CliffSpace memory = s;
  memory.knob = "server.memory";
  EXPECT_EQ(parse_cliff_guess("160MB", memory), 160 * 1024);
  EXPECT_FALSE(parse_cliff_guess("160", memory));  // the machine's memory needs a unit
}

// Between the last safe and the first harmful value: right. Elsewhere: the factor to the
// nearer of the two, on the log scale, and which side.
TEST(CliffGuess, IsScoredByItsDistanceFromTheCliffOnTheLogScale) {
  const search::CliffSpace s = work_mem_space();
  const results::CliffResult c = work_mem_cliff();
  CliffGuessScore in = score_cliff_guess(3072, c, s);
  EXPECT_EQ(in.off_by, 1);
  EXPECT_EQ(in.verdict, "right: between 4MB (safe) and 2MB (harmful)");
  EXPECT_EQ(score_cliff_guess(2048, c, s).off_by, 1);  // the ends count as inside
  CliffGuessScore high = score_cliff_guess(16384, c, s);
  EXPECT_DOUBLE_EQ(high.off_by, 4);
  EXPECT_EQ(high.verdict, "4.0x above the cliff");
  CliffGuessScore low = score_cliff_guess(256, c, s);
  EXPECT_DOUBLE_EQ(low.off_by, 8);
  EXPECT_EQ(low.verdict, "8.0x below the cliff");
  // As far above as below is as far off: the log scale is symmetric.
  EXPECT_DOUBLE_EQ(score_cliff_guess(4096 * 3, c, s).off_by,
                   score_cliff_guess(2048 / 3.0, c, s).off_by);
}

TEST(CliffGuess, WithoutACliffInTheRangeAGuessInsideItIsOffByAtLeastItsFactorToTheFarEnd) {
  const search::CliffSpace s = work_mem_space();
  const results::CliffResult c = work_mem_cliff(false);
  CliffGuessScore inside = score_cliff_guess(1024, c, s);
  EXPECT_DOUBLE_EQ(inside.off_by, 16);
  EXPECT_EQ(inside.verdict, "at least 16.0x above the cliff: safe all the way to 64kB");
  CliffGuessScore beyond = score_cliff_guess(32, c, s);
  EXPECT_EQ(beyond.off_by, 1);
  EXPECT_EQ(beyond.verdict, "right: no cliff in the range, safe to 64kB");
}

}  // namespace
}  // namespace pgslow::workshop
