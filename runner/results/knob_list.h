#pragma once
// `pgslow knobs list`'s result: the knob catalog as a table, with the live server's value,
// availability and how each applies when a server was asked. The command fills it from the
// catalog and pg_settings; report/knob_list_view.h renders it (console, Markdown, JSON).

#include <optional>
#include <string>
#include <vector>

namespace pgslow::results {

// What the live server says about one knob.
struct LiveKnob {
  std::string value;       // "128MB"; "-" when the server lacks the knob
  std::string available;   // "yes", "no (needs 17)", "no (removed in 18)"
  std::string applies_by;  // "reload", "restart", "reload+reconnect", "fixed"; "-" when absent
};

struct KnobListRow {
  std::string name;
  std::string category;
  int since = 0;  // the first PostgreSQL major version that has it
  std::string healthy;
  std::vector<std::string> slow;  // the catalog's slow levels, worst last
  std::optional<LiveKnob> live;   // with a server only
};

struct KnobList {
  std::string category;  // the --category asked for; "" for all
  // The server the live columns came from ("managed cluster in ..."); "" without one.
  std::string server;
  int server_major = 0;
  std::vector<KnobListRow> knobs;
};

}  // namespace pgslow::results
