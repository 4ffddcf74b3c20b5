#include "common/format.h"

#include <fmt/format.h>

#include <cmath>
#include <string>

namespace pgslow {

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

std::string format_count(std::uint64_t n) {
  return group_thousands(std::to_string(n));
}

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

std::string format_quantity(double value) {
  const double magnitude = std::fabs(value);
  if (!std::isfinite(value) || magnitude < 1e5) return format_number(value);
  // Below the next unit's 1.00 once rounded to three digits ("1.00M", never "1,000k").
  if (magnitude < 999.5e3) return format_number(value / 1e3) + "k";
  if (magnitude < 999.5e6) return format_number(value / 1e6) + "M";
  return format_number(value / 1e9) + "G";
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

std::string format_signed_percent(double ratio, int decimals) {
  if (!std::isfinite(ratio)) return "n/a";
  return fmt::format("{:+.{}f}%", (ratio - 1) * 100, decimals);
}

}  // namespace pgslow
