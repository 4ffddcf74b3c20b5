#pragma once
// What a bisect found: results::BisectFindings (report/bisect_view.h, plain structs) plus the
// differences in the catalog's terms the search works with. report/ renders every result:
// to_report() gives it the plain results::BisectResult (render_bisect_console, ...).

#include <optional>
#include <string>
#include <vector>

#include "results/bisect.h"
#include "search/setting.h"

namespace pgslow::search {

// One difference between the good and the bad configuration.
struct Candidate {
  Setting change;                         // the bad configuration's value, applied over good
  std::optional<std::string> good_value;  // nullopt: good leaves it at the server's own value
  // Bad does not set it (only good does): the change is "back to the server's own value",
  // and change.value is that value as the live server reported it before any change.
  bool back_to_server_value = false;
  bool needs_restart = false;  // pg_settings.context = postmaster
  std::string server_value;    // the live server's value before any change, when known

  // "shared_buffers: 128MB -> 8MB", "work_mem: 64MB -> (server value 4MB)".
  std::string describe() const;
};

// A difference that is not bisected, with the reason (absent in this version, invalid value).
struct Excluded {
  Setting setting;
  std::string reason;
  bool invalid = false;  // an error (bad value) rather than a skip (absent in this version)
};

// The search's names for report/'s plain structs.
using Verdict = results::BisectVerdict;
using results::to_string;
using RunRecord = results::BisectRun;         // one call of the Measurer
using SoloEffect = results::BisectSolo;       // a culprit alone over good
using CulpritGroup = results::BisectCulprit;  // one 1-minimal set of one round

struct Result : results::BisectFindings {
  std::vector<Candidate> candidates;
  std::vector<Excluded> excluded;
};

// The plain result report/ renders.
results::BisectResult to_report(const Result& r);

}  // namespace pgslow::search
