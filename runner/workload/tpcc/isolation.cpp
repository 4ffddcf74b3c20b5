// The isolation level of TPC-C-lite's transactions (clause 3.4, workload option `isolation`).

#include "workload/tpcc/transactions.h"

namespace pgslow::workload::tpcc {

std::optional<Isolation> parse_isolation(std::string_view text) {
  if (text == "read-committed") return Isolation::kReadCommitted;
  if (text == "repeatable-read") return Isolation::kRepeatableRead;
  if (text == "serializable") return Isolation::kSerializable;
  return std::nullopt;
}

std::string begin_sql(Isolation level, bool one_snapshot) {
  switch (level) {
    case Isolation::kReadCommitted:
      return one_snapshot ? "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY"
                          : "BEGIN ISOLATION LEVEL READ COMMITTED";
    case Isolation::kRepeatableRead:
      return one_snapshot ? "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY"
                          : "BEGIN ISOLATION LEVEL REPEATABLE READ";
    case Isolation::kSerializable:
      return one_snapshot ? "BEGIN ISOLATION LEVEL SERIALIZABLE READ ONLY"
                          : "BEGIN ISOLATION LEVEL SERIALIZABLE";
  }
  return "BEGIN";
}

}  // namespace pgslow::workload::tpcc
