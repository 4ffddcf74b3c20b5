#pragma once
// What each evidence key means to a reader and how it is compared across stages: one table
// shared by every renderer (docs/evidence.md describes where each value comes from).

#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace pgslow::results {

// How a key's value is normalised before stages are compared, so stages of different lengths
// and different throughput compare fairly.
enum class EvidenceScale {
  kRatio,           // a fraction over the window (buffer_hit_ratio): compared as is
  kPerTransaction,  // work proportional to the transactions done: divided by transactions
  kPerMinute,       // background activity driven by the clock (checkpoints): per minute
  kLevel,           // a level at the end of the window (dead_tuples): compared as is
  kDriver,          // measured by the driver (tps, latency): shown elsewhere, never "moved"
};

struct EvidenceInfo {
  std::string_view key;
  std::string_view label;  // "hit ratio", "read syscalls"
  EvidenceScale scale;
  bool bytes;  // format as a size
  // Keys that tell one story (the hit ratio and blocks read): a stage's summary names at
  // most one per family (the family's first key unless another moved twice as far), so two
  // figures say two things.
  std::string_view family;
};

// Every known key, in the order reports list them.
const std::vector<EvidenceInfo>& evidence_catalog();
// The entry for `key`; unknown keys (a newer runner's) get a per-transaction entry named after
// the key, so they are still shown.
EvidenceInfo evidence_info(std::string_view key);
// The keys of `values` in catalog order, unknown keys last in name order.
std::vector<std::string> ordered_keys(const std::map<std::string, double>& values);

}  // namespace pgslow::results
