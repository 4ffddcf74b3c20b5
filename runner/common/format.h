#pragma once
// Numbers with their units for a reader: the one set of formatting helpers, shared by the
// engine's messages, the results' own texts and every renderer, so a figure reads the same in
// a progress line, the console, Markdown, CSV and HTML.

#include <cstdint>
#include <string>

namespace pgslow {

// A count with thousands separators: 1273320 -> "1,273,320".
std::string format_count(std::uint64_t n);

// A number with about `digits` significant digits and thousands separators:
// 7082.4 -> "7,082", 98.04 -> "98.0", 0.8712 -> "0.871", 0.016 -> "0.0160".
std::string format_number(double value, int digits = 3);
// A per-transaction count that may run to millions, short enough for a table cell: as
// format_number below 100,000, then 927319 -> "927k", 1006117 -> "1.01M", 3.2e9 -> "3.20G".
std::string format_quantity(double value);
// "99.9%" from 0.999: one decimal; two from 99.95% so 99.99% does not read as 100.0%.
std::string format_percent(double fraction);
// Latency in microseconds as "812 µs", "12.3 ms", "4.56 s".
std::string format_latency_us(double micros);
// Bytes as "512 B", "1.5 kB", "412 MB", "12.3 GB" (powers of 1024, SI-looking units as psql).
std::string format_size(double bytes);
// A duration in seconds: "45 s", "2 min 5 s", "1 h 3 min".
std::string format_seconds(double seconds);
// A ratio as a signed change: 0.82 -> "-18.0%", 1.45 -> "+45.0%" (decimals 0: "+45%").
std::string format_signed_percent(double ratio, int decimals = 1);

}  // namespace pgslow
