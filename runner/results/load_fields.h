#pragma once
// The driver's load (LoadSettings) field by field: the one list of its members, the name each
// goes by wherever it is written (report.json, the CSV, bench's option) and the words a reader
// is told it in. A new load setting is its member in LoadSettings and one row here (a
// scenario reads it through its dimension row in scenario/sweep.cpp, the driver through
// experiment/trial.cpp); the compiler refuses a member without a row (load_fields.cpp).

#include <algorithm>
#include <map>
#include <string>
#include <tuple>

#include "results/model.h"

namespace pgslow::results {

template <typename T>
struct LoadField {
  const char* name;  // as report.json and the CSV write it, and as a scenario's `load:` does
  T LoadSettings::*member;
  // bench's option ("--clients,-c") and its help; nullptr: not an option of bench (set by
  // another of its options, or by scenarios only).
  const char* option = nullptr;
  const char* help = nullptr;
  // Its place among the load's columns of the CSV (report/csv.cpp), from 1; 0: not a column.
  // The CSV is read by position, so its order is its own and a new setting takes the next.
  int csv_column = 0;
  // Whether report.json holds it (nullptr: always).
  bool (*written)(const LoadSettings&) = nullptr;
};

// In report.json's order (docs/report-schema.md).
inline constexpr auto kLoadFields = std::tuple{
    LoadField<int>{"clients", &LoadSettings::clients, "--clients,-c",
                   "simulated clients (default: 10 per warehouse for tpcc-lite, else 1)"},
    LoadField<int>{"pool_size", &LoadSettings::pool_size, "--pool-size",
                   "clients share this many connections (0: one per client)", 1},
    LoadField<bool>{"connect_per_transaction", &LoadSettings::connect_per_transaction,
                    "--connect-per-transaction,-C",
                    "open a new connection for every transaction (pgbench -C)", 3},
    LoadField<double>{"rate", &LoadSettings::rate, "--rate,-R",
                      "fixed rate in transactions per second (Poisson arrivals); 0: closed loop",
                      2},
    LoadField<int>{"workers", &LoadSettings::workers},
    LoadField<double>{"rate_percent", &LoadSettings::rate_percent},
    // Written only when set: a report of a run without pooler sweeps carries no empty word.
    LoadField<std::string>{"pooler", &LoadSettings::pooler, nullptr, nullptr, 0,
                           [](const LoadSettings& l) { return !l.pooler.empty(); }},
    LoadField<std::map<std::string, std::string>>{
        "pooler_settings", &LoadSettings::pooler_settings, nullptr, nullptr, 0,
        [](const LoadSettings& l) { return !l.pooler_settings.empty(); }},
};

// How many of the CSV's columns are the load's.
inline constexpr int kLoadCsvColumns = std::apply(
    [](const auto&... row) {
      return std::max({0, row.csv_column...});
    },
    kLoadFields);

// Calls `f` with each row of kLoadFields, in order.
template <typename F>
void for_each_load_field(F&& f) {
  std::apply([&](const auto&... row) { (f(row), ...); }, kLoadFields);
}

// The load in words: "8 clients, PgBouncer pool of 4, a new connection per transaction, ...".
std::string describe_load(const LoadSettings& load);

// "pool of 4", "PgBouncer pool of 4"; "" without a pool.
std::string describe_pool(const LoadSettings& load);

// Whether the clients share a pool (the driver's or PgBouncer's).
bool pooled(const LoadSettings& load);

// Whether the clients share the driver's own pool (its pool wait applies): a pool through
// PgBouncer is PgBouncer's (docs/pooler.md), whose wait is the pooler's evidence.
bool driver_pooled(const LoadSettings& load);

// Server connections the load holds open: its pool, else one per client.
int server_connections(const LoadSettings& load);

}  // namespace pgslow::results
