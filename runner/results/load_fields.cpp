#include "results/load_fields.h"

#include <fmt/format.h>

#include <cstddef>

namespace pgslow::results {

namespace {

// Stands in for any member when counting an aggregate's members by brace-initialising it.
struct AnyMember {
  template <typename T>
  operator T() const;  // NOLINT(google-explicit-constructor): only ever unevaluated
};

template <typename T, typename... Members>
constexpr std::size_t member_count() {
  if constexpr (requires { T{Members{}..., AnyMember{}}; })
    return member_count<T, Members..., AnyMember>();
  else
    return sizeof...(Members);
}

static_assert(member_count<LoadSettings>() == std::tuple_size_v<decltype(kLoadFields)>,
              "every member of LoadSettings needs its row in kLoadFields");

// The CSV's load columns are 1..kLoadCsvColumns, each one row's.
static_assert(std::apply([](const auto&... row) { return ((row.csv_column > 0 ? 1 : 0) + ...); },
                         kLoadFields) == kLoadCsvColumns,
              "two rows of kLoadFields share a CSV column, or a column is missing");

}  // namespace

bool pooled(const LoadSettings& load) {
  return load.pool_size > 0;
}

bool driver_pooled(const LoadSettings& load) {
  return pooled(load) && load.pooler != "pgbouncer";
}

int server_connections(const LoadSettings& load) {
  return pooled(load) ? load.pool_size : load.clients;
}

std::string describe_pool(const LoadSettings& load) {
  if (!pooled(load)) return "";
  return fmt::format("{}pool of {}", load.pooler == "pgbouncer" ? "PgBouncer " : "",
                     load.pool_size);
}

std::string describe_load(const LoadSettings& load) {
  std::string text = fmt::format("{} clients", load.clients);
  if (pooled(load)) text += ", " + describe_pool(load);
  if (load.connect_per_transaction) text += ", a new connection per transaction";
  if (load.rate > 0) text += fmt::format(", {:g} tx/s fixed rate", load.rate);
  if (load.rate_percent > 0)
    text += fmt::format(", fixed rate {:g}% of the baseline's TPS", load.rate_percent);
  if (load.workers > 0) text += fmt::format(", {} driver threads", load.workers);
  for (const auto& [name, value] : load.pooler_settings)
    text += fmt::format(", PgBouncer {} {}", name, value);
  return text;
}

}  // namespace pgslow::results
