#pragma once
// The evidence keys: the names under which the runner reports what the server did during a
// stage. A knob's `watch:` list may only name these, and the evidence code reports exactly
// these, so "watch wal_fpi" in the catalog always points at a number in the report.

#include <algorithm>
#include <array>
#include <string_view>

namespace pgslow::knobs {

inline constexpr std::array<std::string_view, 47> kEvidenceKeys = {
    // shared buffers and the OS
    "buffer_hit_ratio", "blocks_read", "blocks_hit", "read_syscalls", "write_syscalls",
    "read_bytes", "write_bytes", "io_worker_reads",
    // the server's CPU time (/proc), split by kind of process, and its context switches
    "server_cpu_ms", "cpu_backends_ms", "cpu_checkpointer_ms", "cpu_walwriter_ms",
    "cpu_bgwriter_ms", "cpu_autovacuum_ms", "cpu_other_ms", "context_switches",
    // checkpoints and the background writer (pg_stat_bgwriter; pg_stat_checkpointer in 17+)
    "checkpoints_timed", "checkpoints_requested", "buffers_checkpoint", "buffers_bgwriter",
    "buffers_backend", "buffers_backend_fsync", "maxwritten_clean",
    // WAL (pg_stat_wal, 14+)
    "wal_records", "wal_bytes", "wal_fpi", "wal_sync", "wal_write", "wal_buffers_full",
    // autovacuum and tables (pg_stat_user_tables)
    "autovacuum_runs", "autoanalyze_runs", "dead_tuples",
    // temporary files (pg_stat_database)
    "temp_files", "temp_bytes",
    // access paths
    "seq_scans", "index_scans", "seq_tup_read", "idx_tup_fetch",
    // locks and transactions
    "deadlocks", "rollbacks", "lock_waits",
    // connections and logging
    "connections_refused", "log_bytes",
    // the client side (the driver)
    "tps", "latency_p99", "schedule_lag", "pool_wait"};

inline bool is_evidence_key(std::string_view key) {
  return std::find(kEvidenceKeys.begin(), kEvidenceKeys.end(), key) != kEvidenceKeys.end();
}

}  // namespace pgslow::knobs
