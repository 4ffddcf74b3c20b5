#pragma once
// What the live lab (LabSession) asks of its server around a measurement: that it accepts
// connections before one, that it is the same server after one (not restarted, not stopped,
// and if it was, whether its memory envelope killed it), and how its data is reset.

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

#include "common/progress.h"
#include "pg/connection.h"
#include "server/server_control.h"
#include "workload/dataset.h"

namespace pgslow::experiment {

// When the server started: read before a run and compared after it (require_same_server).
inline constexpr std::string_view kPostmasterStartSql = "SELECT pg_postmaster_start_time()::text";

// " The server's memory envelope (...) killed 1 server process ..." when the envelope's kill
// count has grown past `kills_before`; "" otherwise.
std::string out_of_memory_cause(const server::ServerControl& server, std::uint64_t kills_before);

// After a run: throws RuntimeError when the server stopped or restarted since `started_at`
// (kPostmasterStartSql read through `probe` before the run).
void require_same_server(const server::ServerControl& server, std::optional<pg::Connection>& probe,
                         const std::optional<std::string>& started_at,
                         std::uint64_t out_of_memory_kills_before);

// Before a measurement: throws RuntimeError when the server does not accept connections.
void require_running(const server::ServerControl& server);

// How the data is reset between runs on `server`: PostgreSQL 18's clone where the data
// directory can clone files, the template copy everywhere else.
workload::ResetMethod choose_reset_method(server::ServerControl& server,
                                          const std::filesystem::path& workdir, Progress& progress);

}  // namespace pgslow::experiment
