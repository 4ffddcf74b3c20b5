#pragma once
// A connection pooler between the clients and the server (docs/pooler.md): what a scenario's
// `pooler:` block and `--pooler` say, and the pooler settings pgslow may set, as one table
// (name, kind, range, the first version that has it), so the scenario, the command line and the
// knobs validate a setting in one place.

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/errors.h"

namespace pgslow::server {

// One PgBouncer setting pgslow may set ([pgbouncer] section of pgbouncer.ini).
struct PoolerSettingSpec {
  std::string_view name;
  std::string_view kind;                 // "enum" or "integer"
  std::vector<std::string_view> values;  // enum: the accepted values
  long long min = 0;
  long long max = 0;
  std::string_view since;  // the first PgBouncer version that has it ("1.21"); empty: all
  std::string_view what;   // one line for errors and docs
  // What pgslow's PgBouncer runs with when nothing sets it: PgBouncer's own default, except
  // max_client_conn (room for the largest client sweep). A stage's change names it as the value
  // before, and a RELOAD that drops the setting writes it (an omitted line keeps the old value).
  std::string_view default_value;
  // PgBouncer applies it to the clients already connected on RELOAD (a pool's size, a server
  // connection's lifetime), so a switchback run can switch it between blocks (in transaction or
  // statement mode); false: only new clients or new server connections meet it (pool_mode: a
  // client in session mode keeps its server connection), or it disconnects clients
  // (query_wait_timeout), which a run's clients must not be.
  bool live = false;
};

// The table; a setting not in it is refused.
const std::vector<PoolerSettingSpec>& pooler_settings();
const PoolerSettingSpec* find_pooler_setting(std::string_view name);
// The value of `name` under `settings`: the one set, else the table's default_value.
std::string pooler_setting_value(const std::map<std::string, std::string>& settings,
                                 std::string_view name);

// How a stage writes a pooler setting, as a knob (scenario `load:` and sweeps, presets' `pooler:`):
// "pgbouncer.pool_mode" for "pool_mode".
inline constexpr std::string_view kPoolerKnobPrefix = "pgbouncer.";

// Why `value` is not acceptable for `name` on PgBouncer `version` ("1.18.0"; empty: any),
// with what would be accepted; nullopt when it is.
std::optional<std::string> check_pooler_setting(std::string_view name, std::string_view value,
                                                std::string_view version);

// Whether version a ("1.18.0") is at least b ("1.21").
bool version_at_least(std::string_view a, std::string_view b);

// The pooler in front of the server: pgslow's own PgBouncer (kind "pgbouncer", started and
// stopped by pgslow), or one the target already has (kind "external": its conninfo, nothing
// to manage).
struct PoolerSpec {
  std::string kind = "pgbouncer";
  std::map<std::string, std::string> settings;  // pool_mode, default_pool_size, ...
  std::string conninfo;                         // kind "external"
  SourceLocation where;  // the scenario's `pooler:` block, for errors; empty: --pooler
  bool managed() const { return kind == "pgbouncer"; }
  // "pgbouncer (transaction, default_pool_size 10)"
  std::string describe() const;
};

// The pooler a stage's clients go through, given the run's (`run`; nullopt: none) and the stage's
// load (docs/pooler.md): `path` "" keeps the run's, "driver" takes none (the driver's own pool),
// "pgbouncer" pgslow's own PgBouncer (in transaction mode unless the run's PgBouncer says
// otherwise) with default_pool_size = `pool_size` when above 0; then the stage's own PgBouncer
// `settings` over it. Settings without pgslow's PgBouncer on the path are an InputError.
std::optional<PoolerSpec> stage_pooler(const std::optional<PoolerSpec>& run, std::string_view path,
                                       int pool_size,
                                       const std::map<std::string, std::string>& settings);

// The driver's own pool for a stage's clients on `path` (stage_pooler's) with `pool_size`: none
// when the pool is pgslow's PgBouncer's (the driver then opens one connection per client).
inline int driver_pool_size(std::string_view path, int pool_size) {
  return path == "pgbouncer" && pool_size > 0 ? 0 : pool_size;
}

// A setting a stage gives pgslow's PgBouncer, against what its clients would meet without it.
struct PoolerSettingChange {
  std::string name;  // "pool_mode"
  std::string before, after;
};
// The settings `stage` sets that differ between `reference`'s PgBouncer settings and `met`
// (stage_pooler's), each value the one set or the table's default.
std::vector<PoolerSettingChange> pooler_setting_changes(
    const std::map<std::string, std::string>& reference,
    const std::map<std::string, std::string>& met, const std::vector<std::string>& names);

// `--pooler pgbouncer[:MODE][,name=value...]` or `--pooler 'host=... port=6432'`; throws
// InputError saying what is accepted.
PoolerSpec parse_pooler_option(const std::string& text);

}  // namespace pgslow::server
