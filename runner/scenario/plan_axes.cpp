// The axes a stage's changes are known to move (plan.h own_axes).

#include <algorithm>

#include "scenario/plan.h"
#include "server/pooler.h"

namespace pgslow::scenario {

std::vector<std::string> own_axes(const PlannedStage& stage,
                                  const results::LoadSettings& baseline_load,
                                  const knobs::Catalog& catalog) {
  std::vector<std::string> out = {"tps"};
  auto add = [&](std::string_view axis) {
    if (std::find(out.begin(), out.end(), axis) == out.end()) out.emplace_back(axis);
  };
  bool through_pooler = stage.load.pooler == "pgbouncer";
  for (const auto& c : stage.changes) {
    if (c.apply_by == results::kApplyByPooler) {
      through_pooler = true;
      continue;
    }
    if (const knobs::Knob* k = catalog.find(c.name))
      for (const auto& axis : k->moves) add(axis);
  }
  const results::LoadSettings& load = stage.load;
  // A pool (PgBouncer's or the driver's) too small makes clients wait for a connection: the
  // pooler's wait, or the latency the driver's own pool adds.
  if (through_pooler && (load.pool_size != baseline_load.pool_size ||
                         load.pooler_settings != baseline_load.pooler_settings ||
                         load.pooler != baseline_load.pooler))
    add("pooler_wait_ms");
  if (load.clients != baseline_load.clients || load.pool_size != baseline_load.pool_size ||
      load.rate != baseline_load.rate || load.rate_percent != baseline_load.rate_percent ||
      load.pooler != baseline_load.pooler) {
    add("p95");
    add("p99");
  }
  // A connection per transaction forks a backend for each: the server's CPU.
  if (load.connect_per_transaction != baseline_load.connect_per_transaction) add("cpu_per_tx");
  // The axes' own order, so every format lists them alike.
  std::vector<std::string> ordered;
  for (std::string_view key : knobs::kAxisKeys)
    if (std::find(out.begin(), out.end(), key) != out.end()) ordered.emplace_back(key);
  return ordered;
}

}  // namespace pgslow::scenario
