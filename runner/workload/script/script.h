#pragma once
// pgbench-compatible script files (pgbench -f FILE@WEIGHT): SQL commands ended by ';',
// `\set NAME EXPRESSION` and `\sleep N [us|ms|s]`, `:name` variables in the SQL. One run
// of a script is one transaction of the `script` workload. Parsed and checked completely
// before anything runs: every problem names file:line:column.

#include <cstdint>
#include <filesystem>
#include <limits>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/errors.h"
#include "workload/script/expr.h"

namespace pgslow::workload::script {

// One command of a script.
struct Command {
  enum class Kind { kSql, kSet, kSleep };
  Kind kind = Kind::kSql;
  int line = 0;           // where it starts in its file
  std::string statement;  // kSql: its prepared statement's name, "file:line" (load_scripts)
  // kSql: the text between the variables, and each variable occurrence's slot, in order:
  // segments[0] :v0 segments[1] :v1 ... (segments.size() == slots.size() + 1).
  std::vector<std::string> segments;
  std::vector<int> slots;
  // kSet: the variable's slot and its expression.
  int target = 0;
  Expr expr;
  // kSleep: a constant, or a variable's value (slot >= 0), in microseconds per unit.
  std::int64_t sleep_value = 0;
  int sleep_slot = -1;
  std::int64_t sleep_unit_us = 1'000'000;

  // The SQL with $1, $2 ... in place of the variables (extended and prepared protocol).
  std::string parameterised_sql() const;
};

// The longest \sleep: its microseconds fit in a signed 64-bit integer (about 292,000 years).
constexpr std::int64_t kMaxSleepUs = std::numeric_limits<std::int64_t>::max();

// `value` units of `unit_us` microseconds each, or nothing when that is negative or more than
// kMaxSleepUs.
std::optional<std::int64_t> sleep_us(std::int64_t value, std::int64_t unit_us);

struct Script {
  std::string name;  // the file's stem ("heavy"); the transaction type of the reports
  std::string file;  // as the user named it, for errors
  int weight = 1;
  std::vector<Command> commands;
};

// The variables every script may use: pgbench's predefined ones first, then those of \set,
// one slot per name across all scripts (a client's variables live as long as the client).
struct Variables {
  static constexpr int kScale = 0, kClientId = 1, kDefaultSeed = 2, kRandomSeed = 3;
  std::vector<std::string> names{"scale", "client_id", "default_seed", "random_seed"};
  std::optional<int> find(std::string_view name) const;
  int add(std::string_view name);
};

struct ScriptSet {
  std::vector<Script> scripts;
  Variables variables;
};

// "path@weight" (weight 1 when absent), as pgbench -f; a relative path is taken relative to
// `base_dir`. Returns nothing and appends a problem on a bad weight.
struct ScriptSpec {
  std::filesystem::path path;
  std::string text;  // as given
  int weight = 1;
};
std::optional<ScriptSpec> parse_script_spec(std::string_view text,
                                            const std::filesystem::path& base_dir,
                                            std::vector<ConfigError>& problems);

// Parses one script's text into `set` (its variables join `set.variables`); problems name
// `file`:line:column.
void parse_script(std::string_view text, const std::string& file, const std::string& name,
                  int weight, ScriptSet& set, std::vector<ConfigError>& problems);

// Reads and parses every script; problems for unreadable or bad files, an empty list, or a
// total weight of zero.
ScriptSet load_scripts(const std::vector<ScriptSpec>& specs, std::vector<ConfigError>& problems);

}  // namespace pgslow::workload::script
