#pragma once
// Statistics that reach the server's counters after the command that caused them has returned.

#include <map>
#include <string>

#include "evidence/evidence.h"
#include "pg/connection.h"

namespace pgslow::testing {

// The evidence moved since `before`, taken once `key` has moved at least once (polled every
// 10 ms for at most 5 s; after that the caller's assertion says what did not move). The
// checkpointer, for one, counts a CHECKPOINT in its statistics only after it has told the
// waiting backend that the checkpoint is done.
std::map<std::string, double> delta_once_moved(pg::Connection& conn,
                                               const evidence::SnapshotOptions& options,
                                               const evidence::Snapshot& before,
                                               const std::string& key);

}  // namespace pgslow::testing
