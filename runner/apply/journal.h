#pragma once
// The configuration journal: everything pgslow needs to put a server back exactly as it found
// it, written durably into the workdir (<workdir>/journal.json) before the first change, and
// removed only once the server runs with its original configuration again. docs/journal.md
// describes the format and its life cycle.

#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "apply/owner.h"
#include "server/target_kind.h"

namespace pgslow::apply {

// Why the configuration was changed. A run's changes are transient and must be undone (by the
// run itself, or by recovery when it was interrupted); an apply's are a deliberate, kept
// degradation that only `pgslow restore` undoes.
enum class Operation { kRun, kApply };

// Where the journal's owner was when it last wrote it.
enum class JournalState {
  kChanging,   // changing the configuration, or running with changed configuration (a run)
  kKept,       // a finished `pgslow apply`: the degradation stays until `pgslow restore`
  kRestoring,  // putting the original back
};

std::string to_string(Operation op);
std::string to_string(JournalState state);

// Which server the journal protects (each target kind says what it records: target_kind.h).
using ServerRecord = server::TargetRecord;

// The original postgresql.auto.conf of a local server, byte for byte.
struct OriginalFile {
  std::filesystem::path path;
  bool existed = true;
  std::string bytes;
  std::string sha256;  // of `bytes`, checked when the journal is read and after restore
  unsigned mode = 0600;
  unsigned uid = 0;
  unsigned gid = 0;
};

// The original state of one parameter pgslow changed. For a server reached only by
// connection, restore puts back exactly these names (ALTER SYSTEM SET or RESET), never more.
struct OriginalParameter {
  std::string name;
  std::string setting;  // pg_settings.setting (in `unit`)
  std::string unit;
  std::string source;   // pg_settings.source: "default", "configuration file", ...
  std::string context;  // pg_settings.context: "postmaster", "sighup", ...
  // pg_settings.sourcefile: the configuration file the original came from (empty when not a
  // file, or not readable). A target that sets parameters with its own command is told to
  // remove its entry when the original lives in another file (command_settings.h).
  std::string sourcefile;
  // The entry postgresql.auto.conf held for it, as written; nullopt when it had none.
  std::optional<std::string> auto_conf_value;
  // Whether auto_conf_value is known (pg_file_settings needs superuser or pg_read_all_settings).
  bool auto_conf_known = false;
  // Every value pgslow itself set for it (recorded before it sets one). A postgresql.auto.conf
  // entry for it that is neither the original nor one of these was written by someone else:
  // restore then stops and asks (--force-restore) instead of losing either value.
  std::vector<std::string> pgslow_values;
};

struct JournalSetting {
  std::string name;
  std::string value;
  bool operator==(const JournalSetting&) const = default;
};

struct Journal {
  static constexpr int kFormatVersion = 1;
  int version = kFormatVersion;
  std::string created_at;  // ISO 8601, UTC
  std::string updated_at;
  ProcessIdentity owner;
  std::string command;  // the pgslow command line that wrote it
  Operation operation = Operation::kRun;
  JournalState state = JournalState::kChanging;
  ServerRecord server;

  // What is applied now (the last stage's full set).
  std::string stage;  // stage or preset name, for messages
  std::vector<std::string> presets;
  std::vector<JournalSetting> settings;

  // The original configuration, from before the first change.
  std::optional<OriginalFile> auto_conf;               // local servers
  std::vector<OriginalParameter> touched;              // every parameter ever changed
  std::map<std::string, std::string> settings_before;  // pg_settings name -> setting, to verify
  std::vector<std::string> pending_restart_before;     // already pending when pgslow came
  // A workshop mystery (docs/workshop.md): what is applied is the answer participants look
  // for. The file is then sealed (apply/bytes.h) and messages name no setting; restore and
  // recovery read it as usual.
  bool hidden = false;

  // Case-insensitive, as PostgreSQL compares parameter names.
  const OriginalParameter* find_touched(const std::string& name) const;
  OriginalParameter* find_touched(const std::string& name);
  // Whether recovery must act when the owner is gone: everything but a kept apply.
  bool needs_recovery() const { return state != JournalState::kKept; }
  // "shared_buffers=128kB, work_mem=64kB" (the applied settings, for one-line messages)
  std::string settings_summary() const;
};

// The journal as JSON text (pretty, stable key order) and back. Parsing checks the format
// version and the sha256 of the saved file; it throws RuntimeError naming `origin` and the
// problem on damaged input.
std::string journal_to_json(const Journal& journal);
Journal journal_from_json(const std::string& text, const std::string& origin);

std::filesystem::path journal_path(const std::filesystem::path& workdir);

// Reads <workdir>/journal.json, or nullopt when there is none.
std::optional<Journal> load_journal(const std::filesystem::path& workdir);
// Writes it durably (temp file, fsync, rename, fsync the folder); stamps updated_at.
void save_journal(const std::filesystem::path& workdir, Journal& journal);
// Removes it durably (unlink, fsync the folder). No journal is fine.
void remove_journal(const std::filesystem::path& workdir);

// Now as ISO 8601 UTC ("2026-11-30T03:20:00Z").
std::string utc_now_iso8601();

}  // namespace pgslow::apply
