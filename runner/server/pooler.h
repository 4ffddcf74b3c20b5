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
};

// The table; a setting not in it is refused.
const std::vector<PoolerSettingSpec>& pooler_settings();
const PoolerSettingSpec* find_pooler_setting(std::string_view name);

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

// `--pooler pgbouncer[:MODE][,name=value...]` or `--pooler 'host=... port=6432'`; throws
// InputError saying what is accepted.
PoolerSpec parse_pooler_option(const std::string& text);

}  // namespace pgslow::server
