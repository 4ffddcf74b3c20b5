#pragma once
// Each target kind (managed, pgctl, command) in one place: the fields it takes (in a scenario's
// `target:`, on the command line, in the journal), its validation, how it opens, what the
// journal records to reopen it from another process, and whether a journal's record names the
// server a user gave. apply/, scenario/ and cli/ go through this table and never switch on a
// kind, so a new kind is one row here and one ServerControl.

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/yaml.h"
#include "server/target.h"

namespace pgslow::server {

// Which server a journal protects, enough to reach it again from another process.
struct TargetRecord {
  std::string kind;                               // "managed", "pgctl" or "command"
  std::string description;                        // "managed cluster in .pgslow/cluster"
  std::optional<std::filesystem::path> data_dir;  // local servers
  std::string conninfo;  // without any secret key (pg::conninfo_without_secrets)
  // How to open the server again (TargetSpec fields, as text; no secrets).
  std::map<std::string, std::string> target;
};

// One user-facing field of a target: the same name in YAML (`reload`), on the command line
// (`--reload-command`) and in the journal's record (`reload_command`).
struct TargetField {
  std::string_view yaml;
  std::string_view option;
  std::string_view record;
  std::string_view help;
  std::string (*get)(const TargetSpec&);
  void (*set)(TargetSpec&, const std::string&);
};
const std::vector<TargetField>& target_fields();

struct TargetKindOps {
  TargetKind kind;
  std::string_view name;
  // The fields (TargetField::yaml) this kind takes; any other is an error in a scenario.
  std::vector<std::string_view> fields;
  // pgslow's own cluster in the workdir: one per PostgreSQL major version (--pg-version picks
  // it, `run --versions` runs on several), reached again through the workdir.
  bool in_workdir;
  // A local server whose data directory pgslow reaches: the journal saves its original
  // postgresql.auto.conf (a command target's own commands put its configuration back).
  bool local;
  // What is missing or contradictory in a spec of this kind, each naming the field.
  std::vector<std::string> (*problems)(const TargetSpec&);
  // Opens it for a command (the managed cluster is started when it is down).
  std::unique_ptr<ServerControl> (*open)(const TargetSpec&);
  // Opens it to put the original configuration back: nothing is started (recovery first puts
  // the original file back), and changes are allowed (restoring is not a change).
  std::unique_ptr<ServerControl> (*reopen)(const TargetSpec&);
  // Adds to `record.target` what reopening needs (the generic fields are already there).
  void (*record)(const ServerControl&, const TargetSpec*, TargetRecord&);
  // Whether `record` protects the server `given` names (same kind already checked); `why`
  // says how it differs.
  bool (*matches)(const TargetRecord&, const TargetSpec& given, std::string* why);
  // The command-line options that name the recorded server again (for `pgslow recover ...`).
  std::vector<std::string> (*options)(const TargetRecord&);
};

const TargetKindOps& target_kind(TargetKind kind);
const TargetKindOps* find_target_kind(std::string_view name);  // nullptr when unknown
std::string target_kind_names();                               // "managed, pgctl or command"

// The kind the given fields name: an apply, reload or restart command, or a conninfo alone,
// mean `command`; a data directory `pgctl`; nothing the managed cluster.
TargetKind infer_kind(const TargetSpec& spec);

// A scenario's `target:` (a scalar `managed`, or a map with kind and that kind's fields), with
// every problem reported through `r` at its line.
void read_target(yaml::Reader& r, const YAML::Node& node, TargetSpec& spec);

// What the journal records about `server`, opened from `spec` when known: its conninfo without
// secrets and how to reopen it.
TargetRecord record_target(const ServerControl& server, const TargetSpec* spec);

// Whether a journal's record protects the server `given` names; `why` says how it differs.
bool record_matches(const TargetRecord& record, const TargetSpec& given, std::string* why);

}  // namespace pgslow::server
