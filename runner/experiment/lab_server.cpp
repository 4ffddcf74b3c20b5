#include "experiment/lab_server.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "apply/server_state.h"
#include "common/errors.h"
#include "common/reflink.h"
#include "server/target_kind.h"

namespace pgslow::experiment {

namespace fs = std::filesystem;

// " The server's memory envelope (...) killed 1 server process that ran out of memory: ..."
// when the envelope's kill count has grown past `kills_before`; "" otherwise. A backend killed
// so takes the server through crash recovery, the postmaster killed so stops it: either way the
// run's error says that the envelope was the cause and what to change.
std::string out_of_memory_cause(const server::ServerControl& server, std::uint64_t kills_before) {
  const std::optional<std::uint64_t> kills = server.out_of_memory_kills();
  if (!kills || *kills <= kills_before) return "";
  const std::uint64_t n = *kills - kills_before;
  return fmt::format(
      " The server's memory envelope ({}) killed {} server process{} that ran out of memory: give "
      "the server more memory (--memory, or server.memory in the scenario) or make it use less "
      "(shared_buffers, work_mem, fewer clients).",
      server.envelope(), n, n == 1 ? "" : "es");
}

// After a run: throws RuntimeError when the server stopped or restarted since `started_at`
// (pg_postmaster_start_time() read through `probe` before the run). The clients reconnect after
// a restart and count the lost transactions as failed: the figure then measures the outage and
// a cold cache, not the configuration, so the stage fails. The probe's own session answers
// even when the clients took every connection slot.
void require_same_server(const server::ServerControl& server, std::optional<pg::Connection>& probe,
                         const std::optional<std::string>& started_at,
                         std::uint64_t out_of_memory_kills_before) {
  if (!probe || !started_at) return;  // nothing to compare with: the next measure() checks
  try {
    if (probe->query_value(kPostmasterStartSql) == started_at) return;
  } catch (const pg::Error& e) {
    spdlog::debug("the evidence connection broke: {}", e.what());
  }
  std::optional<std::string> now;
  try {
    pg::Connection conn = pg::Connection::open(server.conninfo());
    now = conn.query_value(kPostmasterStartSql);
  } catch (const pg::Error& e) {
    throw RuntimeError(
        fmt::format("{} stopped during the measurement ({}); the stage's figure is not valid.{}",
                    server.describe(), e.server_message().empty() ? e.what() : e.server_message(),
                    out_of_memory_cause(server, out_of_memory_kills_before)));
  }
  if (now == started_at) return;  // only the probe's session ended
  throw RuntimeError(fmt::format(
      "{} restarted during the measurement (up since {}, before since {}); the stage's figure "
      "includes the restart and is not valid.{}",
      server.describe(), now.value_or("?"), *started_at,
      out_of_memory_cause(server, out_of_memory_kills_before)));
}

// Before a measurement: a server that stopped under an earlier one cannot be measured; the
// restore (the caller's way out) starts it again with its original configuration.
void require_running(const server::ServerControl& server) {
  if (apply::server_accepts_connections(server)) return;
  throw RuntimeError(
      fmt::format("{} does not accept connections (it stopped during the run); "
                  "nothing more can be measured.{}",
                  server.describe(), out_of_memory_cause(server, 0)));
}

// PostgreSQL 18 clones the template's files (file_copy_method = clone) where its data directory
// can: pgslow's own cluster, on the workdir's file system, where a clone made in the workdir
// (root's, unlike the data directory) works. Any other server, or a file system that cannot
// clone, gets the byte copy: there, clone would be the kernel copying the bytes, not a fork.
workload::ResetMethod choose_reset_method(server::ServerControl& server, const fs::path& workdir,
                                          Progress& progress) {
  const std::optional<fs::path> data_dir = server.data_dir();
  if (!server::target_kind(server.kind()).in_workdir || !data_dir || workdir.empty())
    return workload::ResetMethod::kTemplateCopy;
  const int major = pg::Connection::open(server.conninfo()).major_version();
  const ReflinkSupport reflink = probe_reflink(workdir);
  std::string why;
  if (!reflink.supported) {
    why = reflink.why;
  } else if (!same_file_system(workdir, *data_dir)) {
    why = "the data directory is on another file system than the workdir";
  } else if (major < 18) {
    why = fmt::format(
        "the workdir can clone files, but PostgreSQL {} has no file_copy_method (18 has)", major);
  } else {
    progress.note("data reset: the template's files are cloned (" + reflink.why + ")");
    return workload::ResetMethod::kServerClone;
  }
  spdlog::info("data reset: template copy ({})", why);
  return workload::ResetMethod::kTemplateCopy;
}

}  // namespace pgslow::experiment
