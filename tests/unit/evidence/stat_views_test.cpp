// The statistics views as tables (evidence::stat_views): each major reads every key once, from
// the view that has it in that major, and the SELECT is generated from the table.

#include <gtest/gtest.h>

#include <map>
#include <string>

#include "evidence/evidence.h"
#include "knobs/evidence_keys.h"

namespace pgslow::evidence {
namespace {

// key -> source, for the views and columns `major` has.
std::map<std::string, std::string> sources(int major) {
  std::map<std::string, std::string> out;
  for (const StatView& v : stat_views()) {
    if (!in_version(major, v.since, v.until)) continue;
    for (const StatColumn& c : v.columns) {
      if (!in_version(major, c.since, c.until)) continue;
      EXPECT_TRUE(out.emplace(c.key, v.source).second)
          << c.key << " is read twice on PostgreSQL " << major;
    }
  }
  return out;
}

TEST(StatViews, EachMajorReadsEveryKeyOnceFromTheViewThatHasIt) {
  for (int major = 15; major <= 18; ++major) {
    const auto s = sources(major);
    // The same 26 keys on every supported major, wherever they moved.
    EXPECT_EQ(s.size(), 26u) << major;
    for (const char* key : {"blocks_read", "temp_bytes", "rollbacks", "dead_tuples",
                            "buffers_backend_fsync", "wal_fpi", "wal_write", "wal_sync"})
      EXPECT_EQ(s.count(key), 1u) << key << " on " << major;
    EXPECT_EQ(s.at("checkpoints_timed"), major <= 16 ? "pg_stat_bgwriter" : "pg_stat_checkpointer");
    EXPECT_EQ(s.at("buffers_backend"), major <= 16 ? "pg_stat_bgwriter" : "pg_stat_io");
    EXPECT_EQ(s.at("buffers_bgwriter"), "pg_stat_bgwriter");
    EXPECT_EQ(s.at("wal_sync"), major <= 17 ? "pg_stat_wal" : "pg_stat_io wal");
    EXPECT_EQ(s.at("seq_scans"), "pg_stat_user_tables");
  }
}

TEST(StatViews, KeysAreTheCatalogsAndBytesAreBytes) {
  for (const StatView& v : stat_views()) {
    for (const StatColumn& c : v.columns) {
      EXPECT_TRUE(knobs::is_evidence_key(c.key)) << c.key;
      EXPECT_EQ(std::string(c.unit) == "bytes", knobs::evidence_info(c.key).bytes) << c.key;
    }
  }
}

const StatView& view(std::string_view source) {
  for (const StatView& v : stat_views())
    if (v.source == source) return v;
  throw std::runtime_error("no view " + std::string(source));
}

TEST(StatViews, TheSelectIsGeneratedFromTheTable) {
  EXPECT_EQ(stat_select(view("pg_stat_wal"), 17),
            "SELECT wal_records AS wal_records, wal_fpi AS wal_fpi, wal_bytes AS wal_bytes, "
            "wal_buffers_full AS wal_buffers_full, wal_write AS wal_write, wal_sync AS wal_sync, "
            "stats_reset::text AS stats_reset FROM pg_stat_wal");
  // 18 moved wal_write and wal_sync to pg_stat_io.
  EXPECT_EQ(stat_select(view("pg_stat_wal"), 18),
            "SELECT wal_records AS wal_records, wal_fpi AS wal_fpi, wal_bytes AS wal_bytes, "
            "wal_buffers_full AS wal_buffers_full, stats_reset::text AS stats_reset FROM "
            "pg_stat_wal");
  EXPECT_EQ(stat_select(view("pg_stat_checkpointer"), 16), std::nullopt);
  EXPECT_EQ(stat_select(view("pg_stat_io wal"), 17), std::nullopt);
  // A view without its own reset time reads no stats_reset column.
  const auto tables = stat_select(view("pg_stat_user_tables"), 15);
  ASSERT_TRUE(tables.has_value());
  EXPECT_EQ(tables->find("stats_reset"), std::string::npos) << *tables;
  EXPECT_NE(tables->find("coalesce(sum(n_dead_tup), 0) AS dead_tuples"), std::string::npos);
}

}  // namespace
}  // namespace pgslow::evidence
