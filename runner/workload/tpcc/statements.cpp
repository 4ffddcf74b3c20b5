#include "workload/tpcc/statements.h"

#include <fmt/format.h>

#include "common/errors.h"
#include "workload/tpcc/random.h"

namespace pgslow::workload::tpcc {

std::string cents(std::int64_t value) {
  return format_cents(value);
}

std::string int_array(const std::vector<int64_t>& values) {
  std::string s = "{";
  for (std::size_t i = 0; i < values.size(); ++i) {
    if (i > 0) s += ',';
    s += std::to_string(values[i]);
  }
  return s + "}";
}

std::string cents_array(const std::vector<int64_t>& values) {
  std::string s = "{";
  for (std::size_t i = 0; i < values.size(); ++i) {
    if (i > 0) s += ',';
    append_cents(s, values[i]);
  }
  return s + "}";
}

std::string text_array(const std::vector<std::string>& values) {
  std::string s = "{";
  for (std::size_t i = 0; i < values.size(); ++i) {
    if (i > 0) s += ',';
    s += '"';
    for (char c : values[i]) {
      if (c == '"' || c == '\\') s += '\\';
      s += c;
    }
    s += '"';
  }
  return s + "}";
}

std::int64_t parse_cents(std::string_view text) {
  bool negative = false;
  if (!text.empty() && text.front() == '-') {
    negative = true;
    text.remove_prefix(1);
  }
  std::int64_t whole = 0, frac = 0;
  int frac_digits = 0;
  bool in_frac = false;
  for (char c : text) {
    if (c == '.') {
      in_frac = true;
    } else if (c >= '0' && c <= '9') {
      if (!in_frac) {
        whole = whole * 10 + (c - '0');
      } else if (frac_digits < 2) {
        frac = frac * 10 + (c - '0');
        ++frac_digits;
      }
    }
  }
  if (frac_digits == 1) frac *= 10;
  const std::int64_t v = whole * 100 + frac;
  return negative ? -v : v;
}

std::string missing_row(std::string_view transaction, std::string_view row) {
  return fmt::format(
      "{}: the {} is missing: the data no longer holds what the load wrote (4.3.3.1); reload it "
      "(pgslow load --workload tpcc-lite --force) and look for what changed it",
      transaction, row);
}

Task<void> abandon(Session& s, const std::string& message) {
  // Named, not a temporary inside co_await: GCC 12 destroys such temporaries twice.
  static const std::string rollback = "ROLLBACK";
  co_await s.query(rollback);
  throw RuntimeError(message);
}

}  // namespace pgslow::workload::tpcc
