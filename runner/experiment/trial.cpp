#include "experiment/trial.h"

namespace pgslow::experiment {

Trial Trial::with_repeats(int repeats) const {
  Trial t = *this;
  t.timing.repeats = repeats;
  return t;
}

driver::DriverOptions driver_options(const Trial& trial, int workload_clients) {
  const results::LoadSettings& load = trial.load;
  const Timing& timing = trial.timing;
  driver::DriverOptions d;
  d.clients = load.clients > 0 ? load.clients : workload_clients;
  d.workers = load.workers > 0 ? load.workers : timing.workers;
  d.warmup_s = timing.warmup_s;
  d.ramp_s = timing.ramp_s;
  d.duration_s = timing.duration_s;
  d.rate = load.rate;
  d.pool_size = load.pool_size;
  d.connect_per_transaction = load.connect_per_transaction;
  d.max_tries = timing.max_tries;
  d.allow_partial = timing.allow_partial;
  d.protocol = timing.protocol;
  d.seed = timing.schedule_seed;
  return d;
}

results::LoadSettings recorded_load(const Trial& trial, int workload_clients) {
  results::LoadSettings load = trial.load;
  if (load.clients == 0) load.clients = workload_clients;
  if (load.workers == 0) load.workers = trial.timing.workers;
  return load;
}

}  // namespace pgslow::experiment
