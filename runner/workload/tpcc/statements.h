#pragma once
// The text forms of prepared statements' parameter values. Each transaction's file defines
// one small struct per statement beside its SQL, so that a call site names each value
// (`NoUpdateDistrict{.w_id = w, .d_id = d}`) instead of building a positional list by hand;
// a struct's params() returns the values in the order of the SQL's $1, $2, ...

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "pg/connection.h"
#include "workload/workload.h"

namespace pgslow::workload::tpcc {

using std::int64_t;

// Text forms of parameter values.
inline std::optional<std::string> param(std::int64_t v) {
  return std::to_string(v);
}
inline std::optional<std::string> param(std::string v) {
  return v;
}
std::string cents(std::int64_t cents);                           // 12.34
std::string int_array(const std::vector<int64_t>& values);       // {1,2,3}
std::string cents_array(const std::vector<int64_t>& cents);      // {1.00,2.50}
std::string text_array(const std::vector<std::string>& values);  // {"a","b"}

// Parses NUMERIC text ("12.34", "5", "-0.5") into cents; exact for two decimals.
std::int64_t parse_cents(std::string_view text);

// A row the spec says exists (the load wrote it, 4.3.3.1) that a statement did not find is a
// fault of the data, never work: "New-Order (warehouse 1, district 3): the STOCK row
// (warehouse 1, item 77) is missing: ...". `transaction` names the transaction and its inputs.
std::string missing_row(std::string_view transaction, std::string_view row);
// Rolls the transaction back, then throws RuntimeError(message): the run ends with it, and
// nothing of the transaction is committed or counted.
Task<void> abandon(Session& s, const std::string& message);

}  // namespace pgslow::workload::tpcc
