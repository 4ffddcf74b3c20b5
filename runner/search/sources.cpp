#include "search/sources.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <array>
#include <cmath>
#include <filesystem>
#include <set>

#include "common/errors.h"
#include "common/process.h"
#include "common/safe_fs.h"
#include "common/strings.h"
#include "pg/connection.h"
#include "pg/error.h"
#include "server/pg_binaries.h"
#include "server/pg_versions.h"

namespace pgslow::search {
namespace {

namespace fs = std::filesystem;

// Settings that belong to one server and must never be carried to another, by kind (the
// reason names the kind). Prefix matches end in '*'.
struct NotCarried {
  std::string_view name;
  std::string_view why;
};
constexpr std::array<NotCarried, 26> kNotCarried{{
    {"data_directory", "a path of that server's own files"},
    {"config_file", "a path of that server's own files"},
    {"hba_file", "a path of that server's own files"},
    {"ident_file", "a path of that server's own files"},
    {"external_pid_file", "a path of that server's own files"},
    {"log_directory", "a path of that server's own files"},
    {"stats_temp_directory", "a path of that server's own files"},
    {"ssl_*", "a path of that server's own files (its certificates and keys)"},
    {"port", "how clients reach that server"},
    {"listen_addresses", "how clients reach that server"},
    {"unix_socket_*", "how clients reach that server"},
    {"bonjour*", "how clients reach that server"},
    {"krb_server_keyfile", "a path of that server's own files"},
    {"shared_preload_libraries", "what that server loads (its installed extensions)"},
    {"local_preload_libraries", "what that server loads (its installed extensions)"},
    {"session_preload_libraries", "what that server loads (its installed extensions)"},
    {"dynamic_library_path", "what that server loads (its installed extensions)"},
    {"archive_command", "a command that server runs (its archive)"},
    {"archive_library", "what that server loads (its archive)"},
    {"restore_command", "a command that server runs (its recovery)"},
    {"archive_cleanup_command", "a command that server runs (its recovery)"},
    {"recovery_end_command", "a command that server runs (its recovery)"},
    {"primary_conninfo", "that server's replication"},
    {"primary_slot_name", "that server's replication"},
    {"cluster_name", "that server's identity"},
    {"lc_*", "a locale of that server's installation"},
}};

// Sources an administrator sets (pg_settings.source); the rest (default, client, session,
// override: values the server or a connection chose) are not part of its configuration.
bool chosen_source(std::string_view source) {
  static const std::set<std::string, std::less<>> kChosen{
      "configuration file", "command line",        "global", "database", "user",
      "database user",      "environment variable"};
  return kChosen.count(source) != 0;
}

// pg_settings' type words for --describe-config's.
std::string vartype_of(std::string_view described) {
  const std::string t = to_lower(described);
  if (t == "boolean") return "bool";
  return t;  // integer, real, string, enum
}

bool numeric(const std::string& vartype) {
  return vartype == "integer" || vartype == "real";
}

// Whether two defaults are the same value: numbers numerically, booleans by meaning, enums
// ignoring case, strings exactly.
bool same_default(const DescribedSetting& a, const DescribedSetting& b) {
  if (numeric(a.vartype) && numeric(b.vartype)) {
    try {
      const double x = std::stod(a.value), y = std::stod(b.value);
      return x == y || std::fabs(x - y) <= 1e-9 * std::max(std::fabs(x), std::fabs(y));
    } catch (const std::exception&) {
      return a.value == b.value;
    }
  }
  if (a.vartype == "bool" || a.vartype == "enum") return iequals(trim(a.value), trim(b.value));
  return a.value == b.value;
}

// A fresh folder holding an empty postgresql.conf and postgresql.auto.conf, readable by the
// server's user, so `postgres -C` prints built-in defaults. Created by us under the system's
// temporary folder (mkdtemp: private, then opened to reading); removed by the destructor.
class EmptyConfig {
 public:
  EmptyConfig() {
    std::string path = (fs::temp_directory_path() / "pgslow-defaults-XXXXXX").string();
    if (::mkdtemp(path.data()) == nullptr)
      throw RuntimeError(fmt::format("cannot create a temporary folder in {}",
                                     fs::temp_directory_path().string()));
    dir_ = path;
    UniqueFd folder = open_folder(dir_);
    for (const char* name : {"postgresql.conf", "postgresql.auto.conf"}) {
      UniqueFd f = open_file_in(folder.get(), name, O_WRONLY | O_CREAT | O_EXCL, dir_ / name, 0644);
      if (!f) throw RuntimeError(fmt::format("cannot create {}", (dir_ / name).string()));
      ::fchmod(f.get(), 0644);
    }
    ::fchmod(folder.get(), 0755);
  }
  ~EmptyConfig() { remove_tree(dir_); }
  EmptyConfig(const EmptyConfig&) = delete;
  EmptyConfig& operator=(const EmptyConfig&) = delete;
  const fs::path& dir() const { return dir_; }

 private:
  fs::path dir_;
};

}  // namespace

std::string carried_setting_problem(std::string_view name) {
  const std::string n = to_lower(name);
  for (const auto& nc : kNotCarried) {
    const bool prefix = nc.name.ends_with('*');
    const std::string_view stem = prefix ? nc.name.substr(0, nc.name.size() - 1) : nc.name;
    if (prefix ? n.starts_with(stem) : n == stem) return std::string(nc.why);
  }
  return "";
}

Sourced non_default_settings(const knobs::ServerSettings& server, const std::string& label) {
  Sourced out;
  out.configuration.label = label;
  for (const auto& [name, s] : server.by_name) {
    if (!chosen_source(s.source)) continue;
    knobs::Setting setting{name, s.setting, {label, 0, 0}};
    // pg_settings shows numbers in the base unit; keep the unit so the value reads as set.
    if (!s.unit.empty() && numeric(s.vartype)) {
      if (auto unit = knobs::parse_base_unit(s.unit);
          unit && unit->kind != knobs::BaseUnit::Kind::kNone) {
        try {
          setting.value = knobs::format_with_unit(std::stod(s.setting), *unit);
        } catch (const std::exception&) {
        }
      }
    }
    if (const std::string why = carried_setting_problem(name); !why.empty()) {
      out.left_out.push_back({setting, "not carried to another server: " + why, false});
    } else if (s.context == "internal") {
      out.left_out.push_back({setting, "fixed when that server was built or created", false});
    } else {
      out.configuration.settings.push_back(std::move(setting));
    }
  }
  return out;
}

Sourced configuration_from_server(const std::string& conninfo) {
  const std::string label = "server " + pg::redact_conninfo(conninfo);
  knobs::ServerSettings settings;
  try {
    pg::Connection conn = pg::Connection::open(conninfo);
    settings = knobs::ServerSettings::read(conn);
  } catch (const RuntimeError& e) {
    throw InputError(
        fmt::format("--good-from/--bad-from {}: cannot read its settings: {} "
                    "(give a conninfo libpq accepts: \"host=... dbname=...\")",
                    pg::redact_conninfo(conninfo), e.what()));
  }
  return non_default_settings(settings, label);
}

std::map<std::string, DescribedSetting> parse_describe_config(std::string_view text) {
  std::map<std::string, DescribedSetting> out;
  for (const std::string& line : split(text, '\n')) {
    // name, context, group, type, then (integer, real) value, min, max or (bool, string, enum)
    // value and two empty fields, then the descriptions.
    const std::vector<std::string> f = split(line, '\t');
    if (f.size() < 5 || f[0].empty()) continue;
    const std::string type = vartype_of(f[3]);
    if (type != "bool" && type != "integer" && type != "real" && type != "string" && type != "enum")
      continue;
    DescribedSetting s{to_lower(f[0]), f[1], type, f[4], true};
    out[s.name] = std::move(s);
  }
  return out;
}

std::map<std::string, DescribedSetting> describe_version(int major) {
  const std::string postgres = (server::pg_bin_for_version(major) / "postgres").string();
  ProcessOptions o;
  o.run_as = server::server_os_user();
  o.timeout = std::chrono::seconds(30);
  ProcessResult described = run_process({postgres, "--describe-config"}, o);
  if (!described.ok())
    throw RuntimeError(fmt::format("{} --describe-config failed ({}): {}", postgres,
                                   described.describe_status(), last_lines(described.output, 5)));
  return parse_describe_config(described.output);
}

std::map<std::string, DescribedSetting> read_version_defaults(
    int major, const std::vector<std::string>& names) {
  std::map<std::string, DescribedSetting> out = describe_version(major);
  const std::string postgres = (server::pg_bin_for_version(major) / "postgres").string();
  ProcessOptions o;
  o.run_as = server::server_os_user();
  // --describe-config prints a boolean's and a number's value before the settings are
  // initialised (0 and FALSE: PostgreSQL's help_config.c prints reset_val), so those come from
  // `postgres -C name` on an empty configuration, which prints the built-in value in the base
  // unit. Strings and enums print their boot value there already.
  const std::set<std::string> wanted(names.begin(), names.end());
  EmptyConfig empty;
  o.timeout = std::chrono::seconds(10);
  for (auto& [name, s] : out) {
    if (s.vartype != "bool" && !numeric(s.vartype)) continue;
    s.value.clear();  // --describe-config's is not the default (above)
    s.known = false;
    if (wanted.count(name) == 0) continue;
    if (s.context == "internal") continue;  // compiled in; never applied
    ProcessResult r = run_process(
        {postgres, "-D", empty.dir().string(), "-c", "log_min_messages=fatal", "-C", name}, o);
    if (!r.ok()) continue;  // unknown: not compared
    s.value = trim(r.output);
    s.known = true;
  }
  return out;
}

DefaultsComparison compare_defaults(int good_major,
                                    const std::map<std::string, DescribedSetting>& good,
                                    int bad_major,
                                    const std::map<std::string, DescribedSetting>& bad,
                                    const knobs::ServerSettings& target) {
  DefaultsComparison c;
  c.good.configuration.label = fmt::format("PostgreSQL {} defaults", good_major);
  c.bad.configuration.label = fmt::format("PostgreSQL {} defaults", bad_major);
  const std::string where_good = fmt::format("PostgreSQL {}", good_major);
  const std::string where_bad = fmt::format("PostgreSQL {}", bad_major);
  auto not_comparable = [&](const std::string& name, const std::string& value,
                            const std::string& from, const std::string& why) {
    c.not_comparable.push_back({{name, value, {from, 0, 0}}, "not comparable: " + why, false});
  };
  for (const auto& [name, g] : good) {
    auto b = bad.find(name);
    if (b == bad.end()) {
      not_comparable(
          name, g.value, where_good,
          fmt::format("only in PostgreSQL {} (removed or renamed in {})", good_major, bad_major));
      continue;
    }
    if (!g.known || !b->second.known) continue;  // not read: nothing to compare
    if (same_default(g, b->second)) continue;
    DefaultChange change{name, g.value, b->second.value, b->second.context};
    std::string why;
    if (g.context == "internal" || b->second.context == "internal")
      why = "fixed when PostgreSQL is built or a cluster is created (context internal)";
    else if (g.vartype != b->second.vartype)
      why = fmt::format("its type changed ({} in {}, {} in {})", g.vartype, good_major,
                        b->second.vartype, bad_major);
    else if (const std::string carried = carried_setting_problem(name); !carried.empty())
      why = "pgslow does not change it on the server under test: " + carried;
    else if (target.find(name) == nullptr)
      why = fmt::format("the server under test (PostgreSQL {}) does not have it", target.major);
    if (!why.empty()) {
      not_comparable(name, fmt::format("{} -> {}", g.value, b->second.value), where_bad, why);
      continue;
    }
    c.differing.push_back(change);
    c.good.configuration.settings.push_back({name, g.value, {where_good, 0, 0}});
    c.bad.configuration.settings.push_back({name, b->second.value, {where_bad, 0, 0}});
  }
  for (const auto& [name, b] : bad)
    if (good.count(name) == 0)
      not_comparable(name, b.value, where_bad,
                     fmt::format("new in PostgreSQL {} (absent from {})", bad_major, good_major));
  return c;
}

}  // namespace pgslow::search
