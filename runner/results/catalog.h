#pragma once
// What `pgslow knobs show` and `pgslow presets list|show` return: one knob of the catalog with
// its live pg_settings row, the presets, one preset with each knob's verdict against a live
// server. The commands fill them from the catalog and the server, already in the words a
// reader sees ("128MB", "restart"); report/catalog_view.h renders them (console, Markdown, JSON).

#include <optional>
#include <string>
#include <vector>

namespace pgslow::results {

// A knob's smallest accepted value where it changed between PostgreSQL versions.
struct VersionMinimum {
  int version = 0;
  std::string value;
};

// The live server's pg_settings row of one knob.
struct LiveSetting {
  std::string current;  // "128MB"
  std::string setting;  // pg_settings.setting as stored: "16384"
  std::string unit;     // "8kB"; "" for unitless knobs
  std::string min;      // "16  (16 x 8kB)"; "" when pg_settings has none
  std::string max;
  std::vector<std::string> accepted;  // an enum's values
  std::string type;                   // "integer", "enum", ...
  std::string context;                // "postmaster"
  std::string applies_by;             // "restart", "reload", "reload+reconnect", "fixed"
  std::string source;                 // "configuration file", "default", ...
  std::string default_value;          // boot_val
  bool pending_restart = false;
};

struct KnobDetail {
  std::string name;
  std::string category;
  std::string versions;  // "15 and later", "15 to 17"
  std::string why;
  std::string healthy;
  std::vector<std::string> slow;  // worst last
  std::vector<std::string> watch;
  // The axes it is known to move (the catalog's `moves:`): a stage that changes it tests these
  // first, beside TPS.
  std::vector<std::string> moves;
  std::vector<VersionMinimum> minimum;
  std::string docs;
  std::vector<std::string> pitfalls;
  // With a server ("" / 0 / nullopt when offline). A server without the knob has no live row
  // and says why in `unavailable` ("no (needs 17)").
  std::string server;
  int server_major = 0;
  std::optional<LiveSetting> live;
  std::string unavailable;
};

struct PresetSummary {
  std::string name;
  int knobs = 0;  // after its includes are expanded
  std::string description;
};

struct PresetList {
  std::vector<PresetSummary> presets;
};

// One knob of a preset, from the catalog.
struct PresetSetting {
  std::string knob;
  std::string value;  // as a table cell: plain when it is, quoted otherwise
  std::string category;
  int since = 0;
};

// One knob of a preset against the live server (knobs/validate.h's verdict).
struct SettingCheck {
  std::string knob;
  std::string value;
  std::string verdict;  // "ok", "skip", "error", ...
  std::string note;
};

struct PresetDetail {
  std::string name;
  std::string description;
  std::vector<std::string> includes;
  std::vector<PresetSetting> settings;
  // With a server: each knob's verdict, the count of problems and the problems themselves
  // ("file:line: reason"); here they are the answer, not diagnostics.
  std::string server;
  int server_major = 0;
  std::vector<SettingCheck> checks;
  std::string problem_count;  // "0 errors, 1 warning"
  std::vector<std::string> problems;
};

}  // namespace pgslow::results
