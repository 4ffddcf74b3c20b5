#include "workshop/prediction.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <regex>

#include "common/strings.h"
#include "knobs/value.h"
#include "results/stats.h"
#include "server/envelope.h"

namespace pgslow::workshop {

using Direction = EffectPrediction::Direction;

EffectPrediction parse_effect_prediction(const std::string& text) {
  EffectPrediction p;
  const std::string t = to_lower(text);
  const bool slower = t.find("slow") != std::string::npos || t.find("fall") != std::string::npos ||
                      t.find("drop") != std::string::npos || t.find("worse") != std::string::npos ||
                      t.find("less") != std::string::npos;
  const bool faster = t.find("fast") != std::string::npos || t.find("rise") != std::string::npos ||
                      t.find("better") != std::string::npos || t.find("more") != std::string::npos;
  const bool same =
      t.find("same") != std::string::npos || t.find("no change") != std::string::npos ||
      t.find("flat") != std::string::npos || t.find("unchanged") != std::string::npos ||
      t.find("nothing") != std::string::npos;
  std::smatch m;
  if (std::regex_search(t, m, std::regex(R"(([0-9]+(?:\.[0-9]+)?)\s*x)"))) {
    p.factor = std::stod(m[1]);
  } else if (std::regex_search(t, m, std::regex(R"(([+-]?)\s*([0-9]+(?:\.[0-9]+)?)\s*%)"))) {
    const double pct = std::stod(m[2]) / 100;
    const bool minus = m[1] == "-" || (m[1] != "+" && slower);
    if (minus) {
      p.direction = Direction::kSlower;
      if (pct < 1) p.factor = 1 / (1 - pct);
    } else {
      p.direction = Direction::kFaster;
      p.factor = 1 + pct;
    }
  }
  if (p.direction == Direction::kUnknown) {
    if (same && !slower && !faster) {
      p.direction = Direction::kSame;
    } else if (slower && !faster) {
      p.direction = Direction::kSlower;
    } else if (faster && !slower) {
      p.direction = Direction::kFaster;
    }
  }
  if (p.factor && *p.factor < 1 && *p.factor > 0) p.factor = 1 / *p.factor;
  return p;
}

double predicted_ratio(const EffectPrediction& p) {
  if (p.direction == Direction::kSame) return 1;
  if (!p.factor || *p.factor <= 0) return 0;
  if (p.direction == Direction::kSlower) return 1 / *p.factor;
  if (p.direction == Direction::kFaster) return *p.factor;
  return 0;
}

std::string score_effect_prediction(const EffectPrediction& p, const report::Effect& e) {
  if (!e.known) return "not measured";
  if (p.direction == Direction::kUnknown)
    return "no direction to compare (say slower, faster or same)";
  const Direction measured = e.verdict == results::Verdict::kSlower   ? Direction::kSlower
                             : e.verdict == results::Verdict::kFaster ? Direction::kFaster
                                                                      : Direction::kSame;
  const std::string what = report::describe_ratio(e.ratio);
  if (measured == Direction::kSame && p.direction != Direction::kSame) {
    return fmt::format("not confirmed: the measurement is {}", report::describe_effect(e));
  }
  if (p.direction != measured) {
    return fmt::format("wrong direction: measured {}{}", what,
                       measured == Direction::kSame ? " (within noise)" : "");
  }
  if (measured == Direction::kSame || !p.factor)
    return fmt::format("right direction: measured {}", what);
  const double actual = e.ratio > 0 ? (e.ratio < 1 ? 1 / e.ratio : e.ratio) : INFINITY;
  const double off = std::max(*p.factor / actual, actual / *p.factor);
  if (off <= 2) {
    return fmt::format("right: {}x is within 2x of the measured {}x", format_number(*p.factor, 2),
                       format_number(actual, 2));
  }
  return fmt::format("right direction, size off by {}x: measured {}", format_number(off, 2), what);
}

std::optional<std::size_t> match_choice(const std::string& answer,
                                        const std::vector<std::string>& choices) {
  const std::string a = to_lower(trim(answer));
  if (a.empty()) return std::nullopt;
  if (a.size() == 1 && a[0] >= 'a' && a[0] < static_cast<char>('a' + choices.size()))
    return static_cast<std::size_t>(a[0] - 'a');
  if (std::all_of(a.begin(), a.end(), [](char c) { return c >= '0' && c <= '9'; })) {
    const std::size_t n = std::stoul(a);
    if (n >= 1 && n <= choices.size()) return n - 1;
  }
  for (std::size_t i = 0; i < choices.size(); ++i) {
    if (iequals(a, trim(choices[i]))) return i;
  }
  return std::nullopt;
}

std::optional<double> parse_cliff_guess(const std::string& text, const search::CliffSpace& space) {
  const std::string t = trim(text);
  if (t.empty()) return std::nullopt;
  std::optional<double> v;
  if (space.knob == "server.memory") {
    std::string why;
    if (auto bytes = server::parse_envelope_memory(t, &why)) v = static_cast<double>(*bytes) / 1024;
  } else {
    // A bare number is in the knob's base unit, as in postgresql.conf.
    const knobs::ParsedValue p = knobs::parse_value(
        t, space.integer ? knobs::VarType::kInteger : knobs::VarType::kReal, space.unit);
    if (!p.error) v = p.number;
  }
  if (!v || !std::isfinite(*v) || *v <= 0) return std::nullopt;
  return v;
}

CliffGuessScore score_cliff_guess(double guess, const results::CliffResult& c,
                                  const search::CliffSpace& space) {
  const bool down = c.to_value < c.baseline.base_value;
  auto text = [&](double v) { return search::cliff_value_text(space, v); };
  // "above" and "below" in value terms, whichever way the search went.
  auto side = [&](double factor, bool higher) {
    return fmt::format("{:.1f}x {} the cliff", factor, higher ? "above" : "below");
  };
  if (!c.first_harmful) {
    // No cliff down (or up) to the far end: it lies beyond it, if anywhere.
    const bool beyond = down ? guess <= c.to_value : guess >= c.to_value;
    if (beyond) return {1, fmt::format("right: no cliff in the range, safe to {}", c.to)};
    const double f = std::max(guess, c.to_value) / std::min(guess, c.to_value);
    return {f, fmt::format("at least {}: safe all the way to {}", side(f, down), c.to)};
  }
  const double safe = c.last_safe ? c.points[*c.last_safe].base_value : c.baseline.base_value;
  const double harmful = c.points[*c.first_harmful].base_value;
  const double lo = std::min(safe, harmful);
  const double hi = std::max(safe, harmful);
  if (guess >= lo && guess <= hi)
    return {1, fmt::format("right: between {} (safe) and {} (harmful)", text(safe), text(harmful))};
  const bool higher = guess > hi;
  const double f = higher ? guess / hi : lo / guess;
  return {f, side(f, higher)};
}

}  // namespace pgslow::workshop
