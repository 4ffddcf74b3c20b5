#include "server/pooler.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <charconv>

#include "common/errors.h"
#include "common/strings.h"

namespace pgslow::server {

const std::vector<PoolerSettingSpec>& pooler_settings() {
  // Ranges: what PgBouncer accepts, cut to what a 2-core lab can use without exhausting the
  // server's max_connections or the file descriptors (docs/pooler.md).
  static const std::vector<PoolerSettingSpec> table = {
      {"pool_mode",
       "enum",
       {"session", "transaction", "statement"},
       0,
       0,
       "",
       "when a server connection goes back to the pool",
       "session"},
      {"default_pool_size",
       "integer",
       {},
       1,
       10000,
       "",
       "server connections per database/user",
       "20",
       true},
      {"min_pool_size", "integer", {}, 0, 10000, "", "server connections kept open", "0", true},
      {"reserve_pool_size",
       "integer",
       {},
       0,
       10000,
       "",
       "extra server connections for clients that waited reserve_pool_timeout",
       "0",
       true},
      {"reserve_pool_timeout",
       "integer",
       {},
       0,
       3600,
       "",
       "seconds before the reserve is used",
       "5",
       true},
      {"max_client_conn", "integer", {}, 1, 100000, "", "client connections accepted", "1000"},
      {"max_db_connections",
       "integer",
       {},
       0,
       100000,
       "",
       "server connections per database",
       "0",
       true},
      {"server_idle_timeout",
       "integer",
       {},
       0,
       86400,
       "",
       "seconds an idle server connection is kept",
       "600",
       true},
      {"server_lifetime",
       "integer",
       {},
       0,
       86400,
       "",
       "seconds a server connection lives (0: used once, then closed)",
       "3600",
       true},
      {"query_wait_timeout",
       "integer",
       {},
       0,
       86400,
       "",
       "seconds a client may wait for a server connection",
       "120"},
      {"max_prepared_statements",
       "integer",
       {},
       0,
       100000,
       "1.21",
       "protocol-level prepared statements tracked per client in transaction mode",
       "0"},
  };
  return table;
}

const PoolerSettingSpec* find_pooler_setting(std::string_view name) {
  for (const auto& s : pooler_settings()) {
    if (s.name == name) return &s;
  }
  return nullptr;
}

std::string pooler_setting_value(const std::map<std::string, std::string>& settings,
                                 std::string_view name) {
  if (auto it = settings.find(std::string(name)); it != settings.end()) return it->second;
  const PoolerSettingSpec* spec = find_pooler_setting(name);
  return spec != nullptr ? std::string(spec->default_value) : std::string();
}

namespace {

std::vector<int> version_parts(std::string_view v) {
  std::vector<int> parts;
  for (const std::string& p : split(std::string(v), '.')) {
    int n = 0;
    auto [ptr, ec] = std::from_chars(p.data(), p.data() + p.size(), n);
    if (ec != std::errc()) break;
    parts.push_back(n);
  }
  return parts;
}

}  // namespace

bool version_at_least(std::string_view a, std::string_view b) {
  return version_parts(a) >= version_parts(b);
}

std::optional<std::string> check_pooler_setting(std::string_view name, std::string_view value,
                                                std::string_view version) {
  const PoolerSettingSpec* spec = find_pooler_setting(name);
  if (spec == nullptr) {
    std::vector<std::string_view> names;
    for (const auto& s : pooler_settings()) names.push_back(s.name);
    return fmt::format("unknown pooler setting `{}` (pgslow sets: {})", name,
                       fmt::join(names, ", "));
  }
  if (!spec->since.empty() && !version.empty() && !version_at_least(version, spec->since)) {
    return fmt::format(
        "`{}` needs PgBouncer {} or later; this machine has PgBouncer {}, which does not have "
        "it: leave it out, or install a newer PgBouncer",
        name, spec->since, version);
  }
  if (spec->kind == "enum") {
    if (std::find(spec->values.begin(), spec->values.end(), value) != spec->values.end())
      return std::nullopt;
    return fmt::format("`{}: {}` is not one of {}", name, value, fmt::join(spec->values, ", "));
  }
  long long n = 0;
  auto [ptr, ec] = std::from_chars(value.data(), value.data() + value.size(), n);
  if (ec != std::errc() || ptr != value.data() + value.size()) {
    return fmt::format("`{}: {}` is not a whole number", name, value);
  }
  if (n < spec->min || n > spec->max) {
    return fmt::format("`{}: {}` is outside {}..{}", name, value, spec->min, spec->max);
  }
  return std::nullopt;
}

std::string PoolerSpec::describe() const {
  if (!managed()) return "an external pooler";
  std::string out = "pgbouncer";
  std::vector<std::string> parts;
  if (auto it = settings.find("pool_mode"); it != settings.end()) parts.push_back(it->second);
  for (const auto& [name, value] : settings) {
    if (name != "pool_mode") parts.push_back(fmt::format("{} {}", name, value));
  }
  if (!parts.empty()) out += fmt::format(" ({})", fmt::join(parts, ", "));
  return out;
}

std::optional<PoolerSpec> stage_pooler(const std::optional<PoolerSpec>& run, std::string_view path,
                                       int pool_size,
                                       const std::map<std::string, std::string>& settings) {
  std::optional<PoolerSpec> use = run;
  if (path == "driver") use.reset();
  if (path == "pgbouncer") {
    if (!use || !use->managed()) {
      use = PoolerSpec{};
      use->settings["pool_mode"] = "transaction";
    }
    // The pool size is PgBouncer's then: the driver opens one connection per client to it.
    if (pool_size > 0) use->settings["default_pool_size"] = std::to_string(pool_size);
  }
  if (settings.empty()) return use;
  if (!use || !use->managed()) {
    std::vector<std::string> given;
    for (const auto& [name, value] : settings) given.push_back(name + " " + value);
    throw InputError(fmt::format(
        "the stage sets PgBouncer settings ({}), but its clients do not go through pgslow's own "
        "PgBouncer: give the scenario `pooler: {{kind: pgbouncer}}` or the stage `load: "
        "{{pooler: pgbouncer}}` (docs/pooler.md)",
        fmt::join(given, ", ")));
  }
  for (const auto& [name, value] : settings) use->settings[name] = value;
  return use;
}

std::vector<PoolerSettingChange> pooler_setting_changes(
    const std::map<std::string, std::string>& reference,
    const std::map<std::string, std::string>& met, const std::vector<std::string>& names) {
  std::vector<PoolerSettingChange> out;
  for (const auto& name : names) {
    PoolerSettingChange c{name, pooler_setting_value(reference, name),
                          pooler_setting_value(met, name)};
    if (c.before != c.after) out.push_back(std::move(c));
  }
  return out;
}

PoolerSpec parse_pooler_option(const std::string& text) {
  PoolerSpec spec;
  const std::string usage =
      "--pooler takes `pgbouncer`, `pgbouncer:MODE` (session, transaction or statement), "
      "optionally followed by `,name=value` settings (pgbouncer:transaction,default_pool_size=10), "
      "or the conninfo of a pooler the target already has ('host=/run/pgbouncer port=6432')";
  if (!text.starts_with("pgbouncer")) {
    if (text.find('=') == std::string::npos) {
      throw InputError(fmt::format("--pooler {}: not understood. {}", text, usage));
    }
    spec.kind = "external";
    spec.conninfo = text;
    return spec;
  }
  std::vector<std::string> parts = split(text, ',');
  const std::string head = parts.front();
  if (head != "pgbouncer") {
    if (!head.starts_with("pgbouncer:")) {
      throw InputError(fmt::format("--pooler {}: not understood. {}", text, usage));
    }
    spec.settings["pool_mode"] = head.substr(std::string("pgbouncer:").size());
  }
  for (std::size_t i = 1; i < parts.size(); ++i) {
    auto eq = parts[i].find('=');
    if (eq == std::string::npos) {
      throw InputError(
          fmt::format("--pooler {}: `{}` is not name=value. {}", text, parts[i], usage));
    }
    spec.settings[trim(parts[i].substr(0, eq))] = trim(parts[i].substr(eq + 1));
  }
  std::vector<std::string> problems;
  for (const auto& [name, value] : spec.settings) {
    if (auto why = check_pooler_setting(name, value, "")) problems.push_back(*why);
  }
  if (!problems.empty()) {
    throw InputError(fmt::format("--pooler {}: {}", text, fmt::join(problems, "; ")));
  }
  return spec;
}

}  // namespace pgslow::server
