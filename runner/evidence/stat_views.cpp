#include <optional>
#include <string>
#include <vector>

#include "evidence/evidence.h"
#include "evidence/evidence_sources.h"

// The statistics views pgslow reads, per major version, and the SELECT each becomes.

namespace pgslow::evidence {

const std::vector<StatView>& stat_views() {
  // Every figure read from PostgreSQL's statistics views, per view and per major version
  // (docs/evidence.md). A key that moved (17: checkpoints to pg_stat_checkpointer, the
  // backends' writes to pg_stat_io; 18: WAL writes and syncs to pg_stat_io) has one row per
  // place, each with its versions.
  static const std::vector<StatView> views = {
      {.source = kDatabase,
       .from = "pg_stat_database WHERE datname = $1",
       .reset = "stats_reset::text",
       .database_param = true,
       .columns = {{.key = "blocks_read", .sql = "blks_read", .unit = "blocks"},
                   {.key = "blocks_hit", .sql = "blks_hit", .unit = "blocks"},
                   {.key = "temp_files", .sql = "temp_files", .unit = "files"},
                   {.key = "temp_bytes", .sql = "temp_bytes", .unit = "bytes"},
                   {.key = "deadlocks", .sql = "deadlocks", .unit = "deadlocks"},
                   {.key = "rollbacks", .sql = "xact_rollback", .unit = "transactions"}}},
      // Summed over the stage's database: the workload's tables are the user tables of the
      // clone. Its epoch is the database's (pg_stat_reset() resets both).
      {.source = kTables,
       .from = "pg_stat_user_tables",
       .reset = nullptr,
       .current_database_only = true,
       .columns =
           {{.key = "seq_scans", .sql = "coalesce(sum(seq_scan), 0)", .unit = "scans"},
            {.key = "index_scans", .sql = "coalesce(sum(idx_scan), 0)", .unit = "scans"},
            {.key = "seq_tup_read", .sql = "coalesce(sum(seq_tup_read), 0)", .unit = "rows"},
            {.key = "idx_tup_fetch", .sql = "coalesce(sum(idx_tup_fetch), 0)", .unit = "rows"},
            {.key = "autovacuum_runs", .sql = "coalesce(sum(autovacuum_count), 0)", .unit = "runs"},
            {.key = "autoanalyze_runs",
             .sql = "coalesce(sum(autoanalyze_count), 0)",
             .unit = "runs"},
            {.key = "dead_tuples", .sql = "coalesce(sum(n_dead_tup), 0)", .unit = "rows"}}},
      {.source = kBgwriter,
       .from = "pg_stat_bgwriter",
       .reset = "stats_reset::text",
       .columns =
           {{.key = "checkpoints_timed",
             .sql = "checkpoints_timed",
             .unit = "checkpoints",
             .until = 16},
            {.key = "checkpoints_requested",
             .sql = "checkpoints_req",
             .unit = "checkpoints",
             .until = 16},
            {.key = "buffers_checkpoint",
             .sql = "buffers_checkpoint",
             .unit = "buffers",
             .until = 16},
            {.key = "buffers_bgwriter", .sql = "buffers_clean", .unit = "buffers"},
            {.key = "maxwritten_clean", .sql = "maxwritten_clean", .unit = "stops"},
            {.key = "buffers_backend", .sql = "buffers_backend", .unit = "buffers", .until = 16},
            {.key = "buffers_backend_fsync",
             .sql = "buffers_backend_fsync",
             .unit = "fsyncs",
             .until = 16}}},
      {.source = kCheckpointer,
       .from = "pg_stat_checkpointer",
       .reset = "stats_reset::text",
       .since = 17,
       .columns = {{.key = "checkpoints_timed", .sql = "num_timed", .unit = "checkpoints"},
                   {.key = "checkpoints_requested", .sql = "num_requested", .unit = "checkpoints"},
                   {.key = "buffers_checkpoint", .sql = "buffers_written", .unit = "buffers"}}},
      // The backends' relation writes, per backend type in 17+.
      {.source = kIo,
       .from = "pg_stat_io WHERE object = 'relation' AND backend_type NOT IN ('checkpointer', "
               "'background writer')",
       .reset = "max(stats_reset)::text",
       .since = 17,
       .columns = {{.key = "buffers_backend", .sql = "coalesce(sum(writes), 0)", .unit = "buffers"},
                   {.key = "buffers_backend_fsync",
                    .sql = "coalesce(sum(fsyncs), 0)",
                    .unit = "fsyncs"}}},
      {.source = kWal,
       .from = "pg_stat_wal",
       .reset = "stats_reset::text",
       .since = 14,
       .columns = {{.key = "wal_records", .sql = "wal_records", .unit = "records"},
                   {.key = "wal_fpi", .sql = "wal_fpi", .unit = "pages"},
                   {.key = "wal_bytes", .sql = "wal_bytes", .unit = "bytes"},
                   {.key = "wal_buffers_full", .sql = "wal_buffers_full", .unit = "times"},
                   {.key = "wal_write", .sql = "wal_write", .unit = "writes", .until = 17},
                   {.key = "wal_sync", .sql = "wal_sync", .unit = "syncs", .until = 17}}},
      {.source = kIoWal,
       .from = "pg_stat_io WHERE object = 'wal'",
       .reset = "max(stats_reset)::text",
       .since = 18,
       .columns = {{.key = "wal_write", .sql = "coalesce(sum(writes), 0)", .unit = "writes"},
                   {.key = "wal_sync", .sql = "coalesce(sum(fsyncs), 0)", .unit = "syncs"}}},
  };
  return views;
}

bool in_version(int major, int since, int until) {
  return (since == 0 || major >= since) && (until == 0 || major <= until);
}

std::optional<std::string> stat_select(const StatView& view, int major) {
  if (!in_version(major, view.since, view.until)) return std::nullopt;
  std::string select;
  for (const StatColumn& c : view.columns) {
    if (!in_version(major, c.since, c.until)) continue;
    select += (select.empty() ? "SELECT " : ", ") + std::string(c.sql) + " AS " + c.key;
  }
  if (select.empty()) return std::nullopt;
  if (view.reset) select += std::string(", ") + view.reset + " AS stats_reset";
  return select + " FROM " + view.from;
}

}  // namespace pgslow::evidence
