// The isolation level of TPC-C-lite's transactions (clause 3.4, workload option `isolation`).

#include "workload/tpcc/isolation.h"

namespace pgslow::workload::tpcc {

std::optional<Isolation> parse_isolation(std::string_view text) {
  if (text == "read-committed") return Isolation::kReadCommitted;
  if (text == "repeatable-read") return Isolation::kRepeatableRead;
  if (text == "serializable") return Isolation::kSerializable;
  return std::nullopt;
}

Isolation isolation_option(const std::map<std::string, std::string>& options) {
  const auto it = options.find("isolation");
  if (it == options.end()) return Isolation::kReadCommitted;
  return parse_isolation(it->second).value_or(Isolation::kReadCommitted);
}

std::string begin_sql(Isolation level, Access access) {
  const bool read_only = access != Access::kReadWrite;
  switch (level) {
    case Isolation::kReadCommitted:
      if (access == Access::kReadOnlyOneSnapshot)
        return "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY";
      return read_only ? "BEGIN ISOLATION LEVEL READ COMMITTED READ ONLY"
                       : "BEGIN ISOLATION LEVEL READ COMMITTED";
    case Isolation::kRepeatableRead:
      return read_only ? "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY"
                       : "BEGIN ISOLATION LEVEL REPEATABLE READ";
    case Isolation::kSerializable:
      return read_only ? "BEGIN ISOLATION LEVEL SERIALIZABLE READ ONLY DEFERRABLE"
                       : "BEGIN ISOLATION LEVEL SERIALIZABLE";
  }
  return "BEGIN";
}

}  // namespace pgslow::workload::tpcc
