#pragma once
// The evidence keys: the names under which the runner reports what the server did during a
// stage, with what each means to a reader and how stages compare it. One catalog for the engine
// (a knob's `watch:` list may only name these, the evidence code reports exactly these, so
// "watch wal_fpi" in the catalog always points at a number in the report) and for every view
// (labels, scaling, families). Header-only, so the renderers read it without linking the engine;
// docs/evidence.md says where each value comes from.

#include <algorithm>
#include <array>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace pgslow::knobs {

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
inline constexpr std::array<EvidenceInfo, 51> kEvidenceCatalog = {{
    // shared buffers and the OS
    {"buffer_hit_ratio", "hit ratio", EvidenceScale::kRatio, false, "cache"},
    {"blocks_read", "blocks read", EvidenceScale::kPerTransaction, false, "cache"},
    {"blocks_hit", "blocks hit", EvidenceScale::kPerTransaction, false, "cache"},
    {"read_syscalls", "read syscalls", EvidenceScale::kPerTransaction, false, "os_io"},
    {"write_syscalls", "write syscalls", EvidenceScale::kPerTransaction, false, "os_io"},
    {"read_bytes", "disk reads", EvidenceScale::kPerTransaction, true, "os_io"},
    {"write_bytes", "disk writes", EvidenceScale::kPerTransaction, true, "os_io"},
    {"io_worker_reads", "I/O worker reads", EvidenceScale::kPerTransaction, false, "aio"},
    // the server's CPU time (/proc), split by kind of process, and its context switches
    {"server_cpu_ms", "server CPU ms", EvidenceScale::kPerTransaction, false, "cpu"},
    {"cpu_backends_ms", "CPU ms: backends", EvidenceScale::kPerTransaction, false, "cpu"},
    {"cpu_checkpointer_ms", "CPU ms: checkpointer", EvidenceScale::kPerTransaction, false, "cpu"},
    {"cpu_walwriter_ms", "CPU ms: walwriter", EvidenceScale::kPerTransaction, false, "cpu"},
    {"cpu_bgwriter_ms", "CPU ms: bgwriter", EvidenceScale::kPerTransaction, false, "cpu"},
    {"cpu_autovacuum_ms", "CPU ms: autovacuum", EvidenceScale::kPerTransaction, false, "cpu"},
    {"cpu_other_ms", "CPU ms: other", EvidenceScale::kPerTransaction, false, "cpu"},
    {"context_switches", "context switches", EvidenceScale::kPerTransaction, false, "cpu"},
    // checkpoints and the background writer (pg_stat_bgwriter; pg_stat_checkpointer in 17+)
    {"checkpoints_requested", "checkpoints requested", EvidenceScale::kPerMinute, false,
     "checkpoint"},
    {"checkpoints_timed", "checkpoints timed", EvidenceScale::kPerMinute, false, "checkpoint"},
    {"buffers_checkpoint", "buffers by checkpointer", EvidenceScale::kPerTransaction, false,
     "checkpoint"},
    {"buffers_bgwriter", "buffers by bgwriter", EvidenceScale::kPerTransaction, false, "bgwriter"},
    {"buffers_backend", "buffers by backends", EvidenceScale::kPerTransaction, false,
     "backend_writes"},
    {"buffers_backend_fsync", "backend fsyncs", EvidenceScale::kPerTransaction, false,
     "backend_writes"},
    {"maxwritten_clean", "bgwriter stops", EvidenceScale::kPerMinute, false, "bgwriter"},
    // WAL (pg_stat_wal, 14+)
    {"wal_bytes", "WAL", EvidenceScale::kPerTransaction, true, "wal"},
    {"wal_fpi", "full-page images", EvidenceScale::kPerTransaction, false, "wal"},
    {"wal_records", "WAL records", EvidenceScale::kPerTransaction, false, "wal"},
    {"wal_sync", "WAL syncs", EvidenceScale::kPerTransaction, false, "wal_io"},
    {"wal_write", "WAL writes", EvidenceScale::kPerTransaction, false, "wal_io"},
    {"wal_buffers_full", "WAL buffers full", EvidenceScale::kPerTransaction, false, "wal_io"},
    // autovacuum and tables (pg_stat_user_tables)
    {"autovacuum_runs", "autovacuum runs", EvidenceScale::kPerMinute, false, "vacuum"},
    {"autoanalyze_runs", "autoanalyze runs", EvidenceScale::kPerMinute, false, "vacuum"},
    {"dead_tuples", "dead tuples", EvidenceScale::kLevel, false, "vacuum"},
    // temporary files (pg_stat_database)
    {"temp_files", "temp files", EvidenceScale::kPerTransaction, false, "temp"},
    {"temp_bytes", "temp", EvidenceScale::kPerTransaction, true, "temp"},
    // access paths
    {"seq_scans", "seq scans", EvidenceScale::kPerTransaction, false, "scans"},
    {"index_scans", "index scans", EvidenceScale::kPerTransaction, false, "scans"},
    {"seq_tup_read", "rows seq-read", EvidenceScale::kPerTransaction, false, "scans"},
    {"idx_tup_fetch", "rows index-fetched", EvidenceScale::kPerTransaction, false, "scans"},
    // locks and transactions
    {"deadlocks", "deadlocks", EvidenceScale::kPerTransaction, false, "deadlocks"},
    {"rollbacks", "rollbacks", EvidenceScale::kPerTransaction, false, "rollbacks"},
    {"lock_waits", "lock-wait backend-s", EvidenceScale::kPerMinute, false, "locks"},
    // connections and logging
    {"connections_refused", "connections refused", EvidenceScale::kLevel, false, "connections"},
    {"log_bytes", "server log", EvidenceScale::kPerTransaction, true, "log"},
    // the client side (the driver)
    {"tps", "TPS", EvidenceScale::kDriver, false, "driver"},
    {"latency_p99", "p99 latency", EvidenceScale::kDriver, false, "driver"},
    {"schedule_lag", "schedule lag", EvidenceScale::kDriver, false, "driver"},
    {"pool_wait", "pool wait", EvidenceScale::kDriver, false, "driver"},
    // the pooler in the path (PgBouncer's SHOW STATS / SHOW POOLS, docs/pooler.md)
    {"pooler_wait_ms", "pooler wait ms", EvidenceScale::kPerTransaction, false, "pooler"},
    {"pooler_max_wait_ms", "pooler longest wait ms", EvidenceScale::kLevel, false, "pooler"},
    {"pooler_clients_waiting", "clients waiting in pooler", EvidenceScale::kLevel, false, "pooler"},
    {"pooler_servers", "pooler server connections", EvidenceScale::kLevel, false, "pooler_servers"},
}};

inline const std::array<EvidenceInfo, kEvidenceCatalog.size()>& evidence_catalog() {
  return kEvidenceCatalog;
}

inline bool is_evidence_key(std::string_view key) {
  return std::any_of(kEvidenceCatalog.begin(), kEvidenceCatalog.end(),
                     [&](const EvidenceInfo& e) { return e.key == key; });
}

// The keys' names, for "did you mean" lists.
inline std::vector<std::string> evidence_key_names() {
  std::vector<std::string> out;
  for (const EvidenceInfo& e : kEvidenceCatalog) out.emplace_back(e.key);
  return out;
}

// The entry for `key`; unknown keys (a newer runner's) get a per-transaction entry named after
// the key, so they are still shown.
inline EvidenceInfo evidence_info(std::string_view key) {
  for (const EvidenceInfo& info : kEvidenceCatalog) {
    if (info.key == key) return info;
  }
  return {key, key, EvidenceScale::kPerTransaction, false, key};
}

// The keys of `values` in catalog order, unknown keys last in name order.
inline std::vector<std::string> ordered_keys(const std::map<std::string, double>& values) {
  std::vector<std::string> out;
  for (const EvidenceInfo& info : kEvidenceCatalog) {
    if (values.count(std::string(info.key)) != 0) out.emplace_back(info.key);
  }
  for (const auto& [key, value] : values) {
    if (std::find(out.begin(), out.end(), key) == out.end()) out.push_back(key);
  }
  return out;
}

// The axes a stage's effect is measured on, by key, in the order every format lists them
// (results/axes.h holds their table and checks it against this list): a knob's `moves:` may
// name only these.
inline constexpr std::array<std::string_view, 12> kAxisKeys = {
    "tps",        "cpu_per_tx",   "wal_bytes", "wal_fpi",        "blocks_read", "read_syscalls",
    "temp_bytes", "seq_tup_read", "log_bytes", "pooler_wait_ms", "p95",         "p99"};

}  // namespace pgslow::knobs
