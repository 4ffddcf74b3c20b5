#include "report/evidence_info.h"

#include <algorithm>

namespace pgslow::report {

const std::vector<EvidenceInfo>& evidence_catalog() {
  using S = EvidenceScale;
  static const std::vector<EvidenceInfo> catalog = {
      {"buffer_hit_ratio", "hit ratio", S::kRatio, false, "cache"},
      {"blocks_read", "blocks read", S::kPerTransaction, false, "cache"},
      {"blocks_hit", "blocks hit", S::kPerTransaction, false, "cache"},
      {"read_syscalls", "read syscalls", S::kPerTransaction, false, "os_io"},
      {"write_syscalls", "write syscalls", S::kPerTransaction, false, "os_io"},
      {"read_bytes", "disk reads", S::kPerTransaction, true, "os_io"},
      {"write_bytes", "disk writes", S::kPerTransaction, true, "os_io"},
      {"io_worker_reads", "I/O worker reads", S::kPerTransaction, false, "aio"},
      {"server_cpu_ms", "server CPU ms", S::kPerTransaction, false, "cpu"},
      {"cpu_backends_ms", "CPU ms: backends", S::kPerTransaction, false, "cpu"},
      {"cpu_checkpointer_ms", "CPU ms: checkpointer", S::kPerTransaction, false, "cpu"},
      {"cpu_walwriter_ms", "CPU ms: walwriter", S::kPerTransaction, false, "cpu"},
      {"cpu_bgwriter_ms", "CPU ms: bgwriter", S::kPerTransaction, false, "cpu"},
      {"cpu_autovacuum_ms", "CPU ms: autovacuum", S::kPerTransaction, false, "cpu"},
      {"cpu_other_ms", "CPU ms: other", S::kPerTransaction, false, "cpu"},
      {"context_switches", "context switches", S::kPerTransaction, false, "cpu"},
      {"checkpoints_requested", "checkpoints requested", S::kPerMinute, false, "checkpoint"},
      {"checkpoints_timed", "checkpoints timed", S::kPerMinute, false, "checkpoint"},
      {"buffers_checkpoint", "buffers by checkpointer", S::kPerTransaction, false, "checkpoint"},
      {"buffers_bgwriter", "buffers by bgwriter", S::kPerTransaction, false, "bgwriter"},
      {"buffers_backend", "buffers by backends", S::kPerTransaction, false, "backend_writes"},
      {"buffers_backend_fsync", "backend fsyncs", S::kPerTransaction, false, "backend_writes"},
      {"maxwritten_clean", "bgwriter stops", S::kPerMinute, false, "bgwriter"},
      {"wal_bytes", "WAL", S::kPerTransaction, true, "wal"},
      {"wal_fpi", "full-page images", S::kPerTransaction, false, "wal"},
      {"wal_records", "WAL records", S::kPerTransaction, false, "wal"},
      {"wal_sync", "WAL syncs", S::kPerTransaction, false, "wal_io"},
      {"wal_write", "WAL writes", S::kPerTransaction, false, "wal_io"},
      {"wal_buffers_full", "WAL buffers full", S::kPerTransaction, false, "wal_io"},
      {"autovacuum_runs", "autovacuum runs", S::kPerMinute, false, "vacuum"},
      {"autoanalyze_runs", "autoanalyze runs", S::kPerMinute, false, "vacuum"},
      {"dead_tuples", "dead tuples", S::kLevel, false, "vacuum"},
      {"temp_files", "temp files", S::kPerTransaction, false, "temp"},
      {"temp_bytes", "temp", S::kPerTransaction, true, "temp"},
      {"seq_scans", "seq scans", S::kPerTransaction, false, "scans"},
      {"index_scans", "index scans", S::kPerTransaction, false, "scans"},
      {"seq_tup_read", "rows seq-read", S::kPerTransaction, false, "scans"},
      {"idx_tup_fetch", "rows index-fetched", S::kPerTransaction, false, "scans"},
      {"deadlocks", "deadlocks", S::kPerTransaction, false, "deadlocks"},
      {"rollbacks", "rollbacks", S::kPerTransaction, false, "rollbacks"},
      {"lock_waits", "lock-wait backend-s", S::kPerMinute, false, "locks"},
      {"connections_refused", "connections refused", S::kLevel, false, "connections"},
      {"log_bytes", "server log", S::kPerTransaction, true, "log"},
      {"tps", "TPS", S::kDriver, false, "driver"},
      {"latency_p99", "p99 latency", S::kDriver, false, "driver"},
      {"schedule_lag", "schedule lag", S::kDriver, false, "driver"},
      {"pool_wait", "pool wait", S::kDriver, false, "driver"},
  };
  return catalog;
}

EvidenceInfo evidence_info(std::string_view key) {
  for (const auto& info : evidence_catalog()) {
    if (info.key == key) return info;
  }
  return {key, key, EvidenceScale::kPerTransaction, false, key};
}

std::vector<std::string> ordered_keys(const std::map<std::string, double>& values) {
  std::vector<std::string> out;
  for (const auto& info : evidence_catalog()) {
    if (values.count(std::string(info.key)) != 0) out.emplace_back(info.key);
  }
  for (const auto& [key, value] : values) {
    if (std::find(out.begin(), out.end(), key) == out.end()) out.push_back(key);
  }
  return out;
}

}  // namespace pgslow::report
