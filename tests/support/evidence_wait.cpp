#include "evidence_wait.h"

namespace pgslow::testing {

std::map<std::string, double> delta_once_moved(pg::Connection& conn,
                                               const evidence::SnapshotOptions& options,
                                               const evidence::Snapshot& before,
                                               const std::string& key) {
  const auto has_moved = [&](const std::map<std::string, double>& d) {
    const auto it = d.find(key);
    return it != d.end() && it->second >= 1;
  };
  auto moved = evidence::delta(before, evidence::take_snapshot(conn, options));
  for (int i = 0; i < 500 && !has_moved(moved); ++i) {
    conn.exec("SELECT pg_sleep(0.01)");
    moved = evidence::delta(before, evidence::take_snapshot(conn, options));
  }
  return moved;
}

}  // namespace pgslow::testing
