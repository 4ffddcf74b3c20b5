#pragma once
// What the searches over a configuration (bisect, cliff) share before their runs: the workload
// and the runs as their command lines give them, checked before anything changes; the live
// server's settings they validate against; and their lab session's options. The session itself
// restores the configuration however the search ends (LabSession's destructor).

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "common/errors.h"
#include "experiment/lab_session.h"
#include "experiment/trial.h"
#include "knobs/validate.h"
#include "server/server_control.h"
#include "server/target.h"
#include "workload/workload.h"

namespace pgslow::experiment {

struct SearchLoad {
  std::string workload = "tpcb-like";
  std::vector<std::string> scripts;  // pgbench script files FILE[@WEIGHT]: the script workload
  int scale = 1;
  int clients = 4;
  // Transactions per second in total (fixed-rate arrivals); 0: closed loop. Under a rate the
  // server keeps up with, TPS stays at the rate and a slower configuration shows in the
  // latency (--metric p99).
  double rate = 0;
  double duration_s = 10;
  double warmup_s = 2;
  std::optional<server::TargetSpec> target;  // for the journal (recovery by another process)
  std::filesystem::path workdir;
};

struct CheckedLoad {
  const workload::Workload* workload = nullptr;
  workload::WorkloadParams params;
};

// The workload and its parameters; the problems of the durations, the workload and the driver
// settings are appended to `problems` (each naming the command line).
CheckedLoad check_search_load(const SearchLoad& load, std::vector<ConfigError>& problems);

// The live server's settings (pg_settings), for the checks before anything changes.
knobs::ServerSettings read_live_settings(server::ServerControl& server);

// The session options of a search's runs: its target and workdir for the journal, `command`
// ("pgslow bisect") as its name there.
LabOptions search_lab_options(const SearchLoad& load, const std::string& command);

// The trial every configuration of a search starts from: `settings` under the search's load
// (its rate; clients are the workload's) and timing (warm-up and duration of each run).
Trial search_trial(const SearchLoad& load, std::vector<knobs::Setting> settings);

// A problem of a command-line option, for the list every search checks before anything changes.
void add_option_problem(std::vector<ConfigError>& problems, const std::string& message);

}  // namespace pgslow::experiment
