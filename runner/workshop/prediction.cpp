#include "workshop/prediction.h"

#include <fmt/format.h>

#include <cmath>
#include <regex>

#include "common/strings.h"
#include "results/stats.h"

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

}  // namespace pgslow::workshop
