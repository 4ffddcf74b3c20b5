#pragma once
// A participant's prediction in their own words ("slower, about 3x", "-50%", "no change"),
// read into a direction and a factor, and scored against the measured effect.

#include <optional>
#include <string>
#include <vector>

#include "report/workshop.h"

namespace pgslow::workshop {

struct EffectPrediction {
  enum class Direction { kUnknown, kSlower, kFaster, kSame } direction = Direction::kUnknown;
  std::optional<double> factor;  // >= 1: "3x" slower or faster
};

// "slower, about 3x" -> slower 3; "2x faster"; "-50%" -> slower 2; "+20%" -> faster 1.2;
// "same", "no change", "flat" -> same. Unreadable text gives kUnknown.
EffectPrediction parse_effect_prediction(const std::string& text);

// The prediction as a throughput ratio (slower 3x: 1/3, faster 2x: 2, same: 1); 0 when it
// names no factor ("slower") or no direction.
double predicted_ratio(const EffectPrediction& p);

// "right: slower, and 3x is within 2x of the measured 4.1x", "wrong direction: ...".
std::string score_effect_prediction(const EffectPrediction& p, const report::Effect& measured);

// A multiple-choice answer: the choice by its letter ("b"), its number ("2") or its text.
// nullopt when it matches no choice.
std::optional<std::size_t> match_choice(const std::string& answer,
                                        const std::vector<std::string>& choices);

}  // namespace pgslow::workshop
