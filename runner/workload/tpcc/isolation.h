#pragma once
// The isolation level of TPC-C-lite's transactions (clause 3.4): the option and each BEGIN.

#include <map>
#include <optional>
#include <string>
#include <string_view>

namespace pgslow::workload::tpcc {

// The isolation level of the read-write transactions (workload option `isolation`, clause 3.4).
enum class Isolation { kReadCommitted, kRepeatableRead, kSerializable };

// Parses "read-committed", "repeatable-read" or "serializable"; nullopt otherwise.
std::optional<Isolation> parse_isolation(std::string_view text);
// The option `isolation` of a workload's options: read-committed when absent (or invalid:
// validate() refuses that before a run).
Isolation isolation_option(const std::map<std::string, std::string>& options);

// What a transaction does, for its BEGIN: the read-write ones; Stock-Level, read-only; and
// Order-Status, read-only in one snapshot (2.6 and 3.4).
enum class Access { kReadWrite, kReadOnly, kReadOnlyOneSnapshot };

// The BEGIN a transaction runs with. Read-only transactions say so (READ ONLY), so that under
// SERIALIZABLE they are DEFERRABLE: no SSI tracking and no serialization failure, which clause
// 3.4 does not ask of them. kReadOnlyOneSnapshot raises READ COMMITTED to REPEATABLE READ.
std::string begin_sql(Isolation level, Access access = Access::kReadWrite);

}  // namespace pgslow::workload::tpcc
