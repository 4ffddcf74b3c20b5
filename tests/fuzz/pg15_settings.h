#pragma once
// A slice of a real PostgreSQL 15 pg_settings (Debian 15, default initdb), for tests and the
// fuzz target that validate without a server.

#include <string>
#include <vector>

#include "common/strings.h"
#include "knobs/validate.h"

namespace pgslow::testing {

inline knobs::ServerSettings pg15_settings() {
  struct Row {
    const char *name, *setting, *unit, *vartype, *context, *min, *max, *enums;
  };
  static const Row rows[] = {
      {"archive_command", "(disabled)", "", "string", "sighup", "", "", ""},
      {"archive_library", "", "", "string", "sighup", "", "", ""},
      {"archive_mode", "off", "", "enum", "postmaster", "", "", "always,on,off"},
      {"autovacuum_max_workers", "3", "", "integer", "postmaster", "1", "262143", ""},
      {"autovacuum_naptime", "60", "s", "integer", "sighup", "1", "2147483", ""},
      {"block_size", "8192", "", "integer", "internal", "8192", "8192", ""},
      {"checkpoint_timeout", "300", "s", "integer", "sighup", "30", "86400", ""},
      {"cpu_index_tuple_cost", "0.005", "", "real", "user", "0", "1.79769e+308", ""},
      {"deadlock_timeout", "1000", "ms", "integer", "superuser", "1", "2147483647", ""},
      {"enable_seqscan", "on", "", "bool", "user", "", "", ""},
      {"jit", "on", "", "bool", "user", "", "", ""},
      {"log_connections", "off", "", "bool", "superuser-backend", "", "", ""},
      {"log_destination", "stderr", "", "string", "sighup", "", "", ""},
      {"log_line_prefix", "%m [%p] %q%a ", "", "string", "sighup", "", "", ""},
      {"log_min_duration_statement", "-1", "ms", "integer", "superuser", "-1", "2147483647", ""},
      {"logging_collector", "off", "", "bool", "postmaster", "", "", ""},
      {"maintenance_work_mem", "65536", "kB", "integer", "user", "1024", "2147483647", ""},
      {"max_connections", "100", "", "integer", "postmaster", "1", "262143", ""},
      {"max_wal_senders", "10", "", "integer", "postmaster", "0", "262143", ""},
      {"max_wal_size", "1024", "MB", "integer", "sighup", "2", "2147483647", ""},
      {"max_worker_processes", "8", "", "integer", "postmaster", "0", "262143", ""},
      {"min_wal_size", "80", "MB", "integer", "sighup", "2", "2147483647", ""},
      {"random_page_cost", "4", "", "real", "user", "0", "1.79769e+308", ""},
      {"shared_buffers", "16384", "8kB", "integer", "postmaster", "16", "1073741823", ""},
      {"superuser_reserved_connections", "3", "", "integer", "postmaster", "0", "262143", ""},
      {"synchronous_commit", "on", "", "enum", "user", "", "",
       "local,remote_write,remote_apply,on,off"},
      {"vacuum_cost_delay", "0", "ms", "real", "user", "0", "100", ""},
      {"wal_level", "replica", "", "enum", "postmaster", "", "", "minimal,replica,logical"},
      {"wal_segment_size", "16777216", "B", "integer", "internal", "1048576", "1073741824", ""},
      {"wal_sync_method", "fdatasync", "", "enum", "sighup", "", "",
       "fsync,fdatasync,open_sync,open_datasync"},
      {"wal_writer_delay", "200", "ms", "integer", "sighup", "1", "10000", ""},
      {"work_mem", "4096", "kB", "integer", "user", "64", "2147483647", ""},
  };
  knobs::ServerSettings s;
  s.version_num = 150014;
  s.major = 15;
  for (const auto& r : rows) {
    knobs::ServerSetting row;
    row.name = r.name;
    row.setting = r.setting;
    row.unit = r.unit;
    row.vartype = r.vartype;
    row.context = r.context;
    row.min_val = r.min;
    row.max_val = r.max;
    row.boot_val = r.setting;
    row.reset_val = r.setting;
    row.source = "default";
    if (*r.enums) row.enumvals = split(r.enums, ',');
    s.by_name[row.name] = row;
  }
  return s;
}

// A small catalog for the same tests: knobs absent on 15, and per-version minimums.
inline knobs::Catalog small_catalog() {
  knobs::Catalog c;
  const auto knob = [](std::string name, int since) {
    knobs::Knob k;
    k.name = std::move(name);
    k.category = "test";
    k.since = since;
    k.healthy = "1";
    k.slow = {"0"};
    k.why = "test";
    k.refs = "https://www.postgresql.org/docs/";
    return k;
  };
  auto shared_buffers = knob("shared_buffers", 9);
  shared_buffers.pitfalls = {"128kB (the minimum) fails under load: \"no unpinned buffers\"",
                             "Needs a restart."};
  c.add_knob(shared_buffers);
  auto mwm = knob("maintenance_work_mem", 9);
  mwm.min_by_version = {{15, "1MB"}, {17, "64kB"}};
  c.add_knob(mwm);
  c.add_knob(knob("summarize_wal", 17));
  c.add_knob(knob("io_method", 18));
  c.add_knob(knob("io_workers", 18));
  c.add_knob(knob("autovacuum_vacuum_max_threshold", 18));
  c.add_knob(knob("work_mem", 9));
  c.add_knob(knob("wal_level", 9));
  auto gone = knob("checkpoint_segments", 9);
  gone.until = 10;
  c.add_knob(gone);
  return c;
}

}  // namespace pgslow::testing
