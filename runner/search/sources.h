#pragma once
// Where --good and --bad can come from besides presets and files (configuration.h):
//
// - a live server (`--bad-from CONNINFO`): its settings that are not at their built-in
//   default, read from pg_settings (the sources an administrator sets: configuration files,
//   ALTER SYSTEM, the command line, per database or role), without the settings pgslow must
//   not carry to another server (its files, how clients reach it: carried_setting_problem);
// - a PostgreSQL major version (`--good-version 16 --bad-version 18`): the built-in defaults
//   that differ between two majors, read from each version's own `postgres` program, applied
//   to the one server under test where it has the setting.
//
// Each left-out setting is named with its reason (search::Excluded): never dropped silently.

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "knobs/validate.h"
#include "search/configuration.h"
#include "search/result.h"

namespace pgslow::search {

// A configuration from a source, with what the source left out and why.
struct Sourced {
  Configuration configuration;
  std::vector<Excluded> left_out;
};

// Why pgslow must not carry `name` from one server to another (a path of that server's own
// files, how clients reach it, what it loads or runs, its identity); empty when it may.
std::string carried_setting_problem(std::string_view name);

// The non-default settings of `server` (as read from its pg_settings) as a configuration named
// `label`; settings whose source is the default, the client, the session or the server's own
// override are not settings someone chose.
Sourced non_default_settings(const knobs::ServerSettings& server, const std::string& label);
// Connects to `conninfo` (libpq, the environment and .pgpass for secrets), reads pg_settings:
// non_default_settings. The label names the server without its password.
Sourced configuration_from_server(const std::string& conninfo);

// One row of `postgres --describe-config`: name, context, group, type, then the type's fields.
struct DescribedSetting {
  std::string name;     // lower case
  std::string context;  // "postmaster", "sighup", "user", "internal", ...
  std::string vartype;  // "bool", "integer", "real", "string", "enum" (pg_settings' words)
  std::string value;    // the built-in default, in the base unit (-C's for numbers: see .cpp)
  bool known = true;    // false: the value could not be read (not compared)
};

// Parses the text of `postgres --describe-config` (tab-separated, one setting per line).
// Malformed lines are skipped. Values of strings and enums are their built-in defaults; those
// of booleans and numbers are NOT (the program prints them before initialising them), and are
// filled in by read_version_defaults.
std::map<std::string, DescribedSetting> parse_describe_config(std::string_view text);

// One major version's settings: its postgres program's --describe-config, run as the server's
// user (server::server_os_user) when root. InputError saying how to install the version when
// it is not installed.
std::map<std::string, DescribedSetting> describe_version(int major);

// describe_version, with the built-in value of each boolean and number among `names` from
// `postgres -C name` on an empty configuration (the others are left without a value).
std::map<std::string, DescribedSetting> read_version_defaults(
    int major, const std::vector<std::string>& names);

// One default that differs between the two versions.
struct DefaultChange {
  std::string name;
  std::string good_value;  // the good version's default, in the base unit
  std::string bad_value;
  std::string context;  // the bad version's
};

struct DefaultsComparison {
  std::vector<DefaultChange> differing;  // applied to the target (good as good, bad as bad)
  std::vector<Excluded> not_comparable;  // in one version only, or not applicable: why
  Sourced good;
  Sourced bad;
};

// Compares two versions' defaults value by value in their base units (numbers numerically,
// booleans and enums by meaning). A setting both have and that differs becomes a candidate when
// the target server has it and pgslow may carry it; the others are named with the reason.
DefaultsComparison compare_defaults(int good_major,
                                    const std::map<std::string, DescribedSetting>& good,
                                    int bad_major,
                                    const std::map<std::string, DescribedSetting>& bad,
                                    const knobs::ServerSettings& target);

}  // namespace pgslow::search
