#pragma once
// Statistics and number formatting for the report: free functions, trivial to test
// (Google Benchmark's shape). Every renderer formats numbers through these, so a figure reads
// the same in the console, Markdown, CSV and HTML.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace pgslow::report {

// Empty input gives 0 for every function (a stage that failed has no repeats).
double median(std::vector<double> values);
double min_of(const std::vector<double>& values);
double max_of(const std::vector<double>& values);
double mean(const std::vector<double>& values);
double stddev(const std::vector<double>& values);  // sample standard deviation (n - 1)
// (max - min) / median: the run-to-run spread of repeats, 0 for fewer than two values.
double relative_spread(const std::vector<double>& values);

// A number with about `digits` significant digits and thousands separators:
// 7082.4 -> "7,082", 98.04 -> "98.0", 0.8712 -> "0.871", 0.016 -> "0.0160".
std::string format_number(double value, int digits = 3);
// "99.9%" from 0.999: one decimal; two from 99.95% so 99.99% does not read as 100.0%.
std::string format_percent(double fraction);
// Latency in microseconds as "812 µs", "12.3 ms", "4.56 s".
std::string format_latency_us(double micros);
// Bytes as "512 B", "1.5 kB", "412 MB", "12.3 GB" (powers of 1024, SI-looking units as psql).
std::string format_size(double bytes);
// A duration in seconds: "45 s", "2 min 5 s", "1 h 3 min".
std::string format_seconds(double seconds);

// The change of `ratio` = new / reference, worded for a reader:
//   1.04 -> "+4.0%", 0.149 -> "-85.1% (6.7x slower)", 0.002 -> "500x slower",
//   2.5 -> "2.5x faster". Non-finite or negative ratios give "n/a".
std::string format_change(double ratio);

}  // namespace pgslow::report
