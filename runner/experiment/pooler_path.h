#pragma once
// The pooler between a lab session's clients and the server (docs/pooler.md): none (the
// clients connect directly), pgslow's own PgBouncer (started on first use in front of the
// managed cluster, stopped when the session ends, also on error or Ctrl-C), or the target's own
// (its conninfo). Gives the clients' conninfo and the pooler's evidence for a stage.

#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "evidence/evidence.h"
#include "results/model.h"
#include "server/managed_cluster.h"
#include "server/pgbouncer.h"
#include "server/pooler.h"
#include "server/server_control.h"

namespace pgslow::experiment {

class PoolerPath {
 public:
  PoolerPath(std::optional<server::PoolerSpec> spec, server::ServerControl& server,
             std::filesystem::path workdir);
  ~PoolerPath();
  PoolerPath(const PoolerPath&) = delete;
  PoolerPath& operator=(const PoolerPath&) = delete;

  // The conninfo the workload's clients use for `database` under `load`, and the driver's own
  // pool for it (`driver_pool`). load.pooler picks the path: "" the session's pooler (none:
  // `direct`), "driver" none (the driver's pool of load.pool_size), "pgbouncer" pgslow's
  // PgBouncer with default_pool_size = load.pool_size (transaction mode unless the session's
  // pooler says otherwise) and no driver pool. Starts PgBouncer when it is not running (the
  // first stage, or after it died), or sets a point's settings by RELOAD.
  std::string client_conninfo(const std::string& direct, const std::string& database,
                              const results::LoadSettings& load, int& driver_pool);
  // During a switchback run whose two loads differ only in settings pgslow's PgBouncer takes
  // live (scenario::load_switch_refusal): `load`'s settings by RELOAD, then up to `settle_s`
  // for `database`'s pool to hold no more server connections than they allow. Returns why it
  // did not settle ("PgBouncer still held 5 server connections ..."), nullopt when it did.
  std::optional<std::string> switch_load(const results::LoadSettings& load,
                                         const std::string& database, double settle_s);
  // The PgBouncer settings `load` gives (load.pooler_settings) as knob changes against what its
  // clients would meet without them (the run's pooler on the same path): the stage's knob lines.
  std::vector<results::KnobChange> knob_changes(const results::LoadSettings& load) const;
  // SHOW POOLS/STATS of `database` on pgslow's PgBouncer; nullopt without one, or when its
  // console does not answer.
  std::optional<server::PoolerStats> stats(const std::string& database) const;
  // Why the run's failures are the pooler's: pgslow's PgBouncer died during the run (its pid
  // and the log's last lines); nullopt when it still runs or there is none.
  std::optional<std::string> died() const;
  // Why the clients' protocol-level prepared statements (-M prepared) would fail through this
  // pooler (and that the run falls back to -M extended), found by a probe on `conninfo`
  // (client_conninfo's) before the run; nullopt when they work, or when the pooler hands each
  // client a server connection of its own (session mode).
  std::optional<std::string> prepared_statements_problem(const std::string& conninfo);
  // Around a data reset that drops and recreates `database`: pgslow's PgBouncer, when it runs,
  // drops its connections to it and holds new clients until the reset is over, so no login
  // meets the database gone (a failed login locks every client of it out for 15 s).
  void hold_during_reset(const std::string& database);
  void resume_after_reset(const std::string& database);
  // Stops pgslow's PgBouncer (also done by the destructor).
  void stop();
  server::PgBouncer* pgbouncer() { return pgbouncer_.get(); }

 private:
  std::optional<server::PoolerSpec> route(const results::LoadSettings& load,
                                          int& driver_pool) const;
  server::ManagedCluster& require_managed_cluster() const;

  std::optional<server::PoolerSpec> spec_;
  std::optional<server::PoolerSpec> current_;  // the path of the stage being measured
  server::ServerControl& server_;
  std::filesystem::path workdir_;
  std::unique_ptr<server::PgBouncer> pgbouncer_;
  std::optional<int> started_pid_;
  int probes_ = 0;
};

// The pooler's cumulative counters in an evidence snapshot (a switchback block's ends), so
// evidence::delta gives each block its own pooler wait.
void add_pooler_counters(const server::PoolerStats& stats, evidence::Snapshot& snapshot);

// The evidence keys of the pooler (docs/evidence.md) from SHOW POOLS/STATS at the start and the
// end of the measured window: the clients' wait for a server connection, the server
// connections it held and the longest wait at the end.
void add_pooler_evidence(const server::PoolerStats& before, const server::PoolerStats& after,
                         std::map<std::string, double>& evidence);

}  // namespace pgslow::experiment
