#pragma once
// A participant's prediction in their own words ("slower, about 3x", "-50%", "no change"),
// read into a direction and a factor, and scored against the measured effect.

#include <optional>
#include <string>
#include <vector>

#include "report/workshop.h"
#include "search/cliff_search.h"

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

// A guess of the value where a cliff begins, as a person writes it ("160MB", "1.5", "4MB"), in
// the search's base unit (kB for memory); nullopt when it is not a value of the searched knob
// or lies outside a log scale (zero or less).
std::optional<double> parse_cliff_guess(const std::string& text, const search::CliffSpace& space);

// How far a guess of the cliff's beginning is from where the search found it, on the log scale.
// The cliff lies between the last safe value and the first harmful one: a guess there is right
// (off_by 1); otherwise off_by is the factor to the nearer of the two, and the verdict says
// which side ("2.0x above the cliff"). Without a cliff in the range, a guess at or beyond the
// far end is right and one inside is off by at least its factor to the far end.
struct CliffGuessScore {
  double off_by = 0;
  std::string verdict;
};
CliffGuessScore score_cliff_guess(double guess, const results::CliffResult& cliff,
                                  const search::CliffSpace& space);

// A multiple-choice answer: the choice by its letter ("b"), its number ("2") or its text.
// nullopt when it matches no choice.
std::optional<std::size_t> match_choice(const std::string& answer,
                                        const std::vector<std::string>& choices);

}  // namespace pgslow::workshop
