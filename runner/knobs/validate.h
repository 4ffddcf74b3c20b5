#pragma once
// Checks a set of settings against the live server's pg_settings before anything changes:
// each setting gets a verdict (reload, restart, skipped on this version, error) and every
// problem is reported with the file:line:col it came from and what would be accepted.

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "common/errors.h"
#include "knobs/catalog.h"
#include "knobs/value.h"

namespace pgslow::pg {
class Connection;
}

namespace pgslow::knobs {

// One row of pg_settings.
struct ServerSetting {
  std::string name, setting, unit, vartype, context, min_val, max_val, boot_val, reset_val, source;
  std::vector<std::string> enumvals;
  bool pending_restart = false;
};

// The live server's parameters and version.
struct ServerSettings {
  int version_num = 0;                           // server_version_num, e.g. 150018
  int major = 0;                                 // e.g. 15
  std::map<std::string, ServerSetting> by_name;  // lower-case name -> setting

  static ServerSettings read(pg::Connection& conn);
  // Case-insensitive, as PostgreSQL treats parameter names.
  const ServerSetting* find(std::string_view name) const;
  std::vector<std::string> names() const;
};

enum class Verdict { kReload, kRestart, kSkipped, kError };
std::string_view verdict_name(Verdict v);  // "reload", "restart", "skipped", "error"

struct SettingVerdict {
  Setting setting;
  Verdict verdict = Verdict::kError;
  // skipped: "needs PostgreSQL 17"; reload: "new sessions only (reconnect)" for backend
  // parameters; error: the first error's text.
  std::string reason;
  // What pg_settings.setting shows once applied, in the server's base unit
  // (shared_buffers = 8MB -> "1024"), for read-back verification.
  std::string expected_setting;
  // True for reload parameters that only new sessions see (context backend,
  // superuser-backend): the driver must reconnect after applying.
  bool needs_reconnect = false;
  std::vector<ConfigError> problems;  // errors and warnings, with location and hint
};

// Validates each setting, then the cross-parameter rules PostgreSQL enforces at start over
// the resulting configuration (the server's current values overlaid with these).
std::vector<SettingVerdict> validate(const std::vector<Setting>& settings, const Catalog& catalog,
                                     const ServerSettings& server);

// Every problem of every verdict, in order (for InputError / `pgslow check`).
std::vector<ConfigError> all_problems(const std::vector<SettingVerdict>& verdicts);

// Whether the server's current value is what the verdict expected (read back after apply):
// numbers compared numerically (1e300 vs 1e+300), booleans by meaning, enums ignoring case,
// lists (log_destination) item by item.
bool effective_value_matches(const ServerSetting& now, const SettingVerdict& v);

// Offline checks when no server is at hand: names known to the catalog, values safe to send.
std::vector<ConfigError> check_offline(const std::vector<Setting>& settings,
                                       const Catalog& catalog);

}  // namespace pgslow::knobs
