#include "report/stats.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <numeric>

namespace pgslow::report {

double median(std::vector<double> values) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  const std::size_t n = values.size();
  return n % 2 == 1 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2;
}

double min_of(const std::vector<double>& values) {
  return values.empty() ? 0 : *std::min_element(values.begin(), values.end());
}

double max_of(const std::vector<double>& values) {
  return values.empty() ? 0 : *std::max_element(values.begin(), values.end());
}

double mean(const std::vector<double>& values) {
  if (values.empty()) return 0;
  return std::accumulate(values.begin(), values.end(), 0.0) / static_cast<double>(values.size());
}

double stddev(const std::vector<double>& values) {
  if (values.size() < 2) return 0;
  const double m = mean(values);
  double sum = 0;
  for (double v : values) sum += (v - m) * (v - m);
  return std::sqrt(sum / static_cast<double>(values.size() - 1));
}

double relative_spread(const std::vector<double>& values) {
  if (values.size() < 2) return 0;
  const double med = median(values);
  if (med <= 0) return 0;
  return (max_of(values) - min_of(values)) / med;
}

namespace {

// Inserts thousands separators into the integer part of a plain decimal string.
std::string group_thousands(const std::string& plain) {
  std::size_t start = plain[0] == '-' ? 1 : 0;
  std::size_t end = plain.find('.');
  if (end == std::string::npos) end = plain.size();
  std::string out = plain.substr(0, start);
  const std::string digits = plain.substr(start, end - start);
  for (std::size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return out + plain.substr(end);
}

}  // namespace

std::string format_number(double value, int digits) {
  if (!std::isfinite(value)) return "n/a";
  if (value == 0) return "0";
  const double magnitude = std::floor(std::log10(std::fabs(value)));
  int decimals = std::max(0, digits - 1 - static_cast<int>(magnitude));
  // Rounding may carry into a new digit (99.96 -> "100.0"); one decimal fewer then.
  std::string plain = fmt::format("{:.{}f}", value, decimals);
  if (decimals > 0) {
    const double rounded = std::fabs(std::stod(plain));
    if (rounded >= std::pow(10.0, magnitude + 1))
      plain = fmt::format("{:.{}f}", value, decimals - 1);
  }
  return group_thousands(plain);
}

std::string format_percent(double fraction) {
  if (!std::isfinite(fraction)) return "n/a";
  const double pct = fraction * 100;
  if (pct >= 99.95 && pct < 100) return fmt::format("{:.2f}%", pct);
  return fmt::format("{:.1f}%", pct);
}

std::string format_latency_us(double micros) {
  if (!std::isfinite(micros)) return "n/a";
  if (micros < 1000) return fmt::format("{:.0f} µs", micros);
  if (micros < 1e6) return format_number(micros / 1e3) + " ms";
  return format_number(micros / 1e6) + " s";
}

std::string format_size(double bytes) {
  if (!std::isfinite(bytes)) return "n/a";
  static const char* const units[] = {"B", "kB", "MB", "GB", "TB"};
  int unit = 0;
  double v = bytes;
  while (std::fabs(v) >= 1024 && unit < 4) {
    v /= 1024;
    ++unit;
  }
  if (unit == 0) return fmt::format("{:.0f} B", v);
  return format_number(v) + " " + units[unit];
}

std::string format_seconds(double seconds) {
  if (!std::isfinite(seconds) || seconds < 0) return "n/a";
  if (seconds < 10) return format_number(seconds, 2) + " s";
  const auto total = static_cast<long long>(std::llround(seconds));
  if (total < 60) return fmt::format("{} s", total);
  if (total < 3600) {
    return total % 60 == 0 ? fmt::format("{} min", total / 60)
                           : fmt::format("{} min {} s", total / 60, total % 60);
  }
  return fmt::format("{} h {} min", total / 3600, (total % 3600) / 60);
}

std::string format_change(double ratio) {
  if (!std::isfinite(ratio) || ratio < 0) return "n/a";
  if (ratio == 0) return "-100% (nothing completed)";
  if (ratio >= 2) return format_number(ratio, 2) + "x faster";
  if (ratio >= 1) return fmt::format("+{:.1f}%", (ratio - 1) * 100);
  const std::string pct = fmt::format("-{:.1f}%", (1 - ratio) * 100);
  if (ratio > 0.5) return pct;
  const std::string slower = format_number(1 / ratio, 2) + "x slower";
  // Below a tenth the percentage reads "-99.9%" for 1,000x and 100,000x alike: ratio only.
  if (ratio < 0.1) return slower;
  return pct + " (" + slower + ")";
}

}  // namespace pgslow::report
