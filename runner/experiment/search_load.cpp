#include "experiment/search_load.h"

#include "driver/driver.h"
#include "pg/connection.h"
#include "workload/registry.h"

namespace pgslow::experiment {

CheckedLoad check_search_load(const SearchLoad& load, std::vector<ConfigError>& problems) {
  if (load.duration_s <= 0) add_option_problem(problems, "--duration must be positive (seconds)");
  if (load.warmup_s < 0) add_option_problem(problems, "--warmup must not be negative (seconds)");
  CheckedLoad checked;
  checked.workload = &workload::find_workload(load.scripts.empty() ? load.workload : "script");
  checked.params.scale = load.scale;
  checked.params.clients = load.clients;
  workload::add_script_files(checked.params, load.scripts);
  for (auto& p : checked.workload->validate(checked.params)) problems.push_back(p);
  const driver::DriverOptions options =
      driver_options(search_trial(load, {}), checked.params.clients);
  for (auto& p : driver::validate(options)) problems.push_back(p);
  return checked;
}

knobs::ServerSettings read_live_settings(server::ServerControl& server) {
  pg::Connection conn = pg::Connection::open(server.conninfo());
  return knobs::ServerSettings::read(conn);
}

void add_option_problem(std::vector<ConfigError>& problems, const std::string& message) {
  problems.push_back({{"command line", 0, 0}, message, "", ConfigError::Severity::kError});
}

LabOptions search_lab_options(const SearchLoad& load, const std::string& command) {
  LabOptions options;
  options.target = load.target;
  options.workdir = load.workdir;
  options.command = command;
  return options;
}

Trial search_trial(const SearchLoad& load, std::vector<knobs::Setting> settings) {
  Trial trial;
  trial.configuration.settings = std::move(settings);
  trial.load.rate = load.rate;
  trial.timing.warmup_s = load.warmup_s;
  trial.timing.duration_s = load.duration_s;
  return trial;
}

}  // namespace pgslow::experiment
