#pragma once
// The sources of a snapshot's counters, shared by the reader (evidence.cpp) and the table of
// statistics views (stat_views.cpp): counters of one source restart together, and its epoch
// guards the subtraction.

namespace pgslow::evidence {

inline constexpr const char* kDatabase = "pg_stat_database";
inline constexpr const char* kTables = "pg_stat_user_tables";
inline constexpr const char* kBgwriter = "pg_stat_bgwriter";
inline constexpr const char* kCheckpointer = "pg_stat_checkpointer";
inline constexpr const char* kIo = "pg_stat_io";
inline constexpr const char* kWal = "pg_stat_wal";
inline constexpr const char* kIoWal = "pg_stat_io wal";
inline constexpr const char* kProc = "/proc";
inline constexpr const char* kLog = "log";
inline constexpr const char* kSampler = "lock sampler";

}  // namespace pgslow::evidence
