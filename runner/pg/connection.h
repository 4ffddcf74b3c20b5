#pragma once
// A thin RAII layer over libpq (libpqxx's shape, not libpqxx itself: the driver needs the
// non-blocking API directly). Connections and results move, never copy; destructors never
// throw.

#include <libpq-fe.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "pg/error.h"

namespace pgslow::pg {

// Owns a PGresult; PQclear on destruction.
class Result {
 public:
  Result() = default;
  explicit Result(PGresult* r) : res_(r, &PQclear) {}

  explicit operator bool() const { return res_ != nullptr; }
  PGresult* raw() const { return res_.get(); }
  ExecStatusType status() const { return PQresultStatus(res_.get()); }

  int rows() const { return PQntuples(res_.get()); }
  int columns() const { return PQnfields(res_.get()); }
  int column(std::string_view name) const;  // throws when the result has no such column
  // The accessors throw RuntimeError for a row or column the result does not have: libpq
  // would read it as "" (or NULL), so a missing row would pass for an empty value.
  bool is_null(int row, int col) const;
  std::string_view get(int row, int col) const;
  std::int64_t get_int64(int row, int col) const;  // NULL reads as 0
  double get_double(int row, int col) const;       // NULL reads as 0
  std::optional<std::string> get_optional(int row, int col) const;
  // Rows a command touched (UPDATE/DELETE/INSERT), 0 when not a command.
  std::int64_t affected_rows() const;

 private:
  void check_cell(int row, int col) const;  // throws when (row, col) is not in the result
  std::unique_ptr<PGresult, decltype(&PQclear)> res_{nullptr, &PQclear};
};

// Text parameters; std::nullopt is SQL NULL.
using Params = std::vector<std::optional<std::string>>;

// Params from values convertible to std::string. A plain function on purpose: GCC 12
// miscompiles a braced initializer list inside a co_await expression.
template <typename... S>
Params make_params(const S&... values) {
  Params p;
  p.reserve(sizeof...(values));
  (p.emplace_back(values), ...);
  return p;
}

// Sets `p` to `values`, reusing its storage: a client that keeps one Params for its
// statements allocates nothing per statement (numbers fit in a string's own buffer).
template <typename... S>
void assign_params(Params& p, const S&... values) {
  p.resize(sizeof...(values));
  std::size_t i = 0;
  ((p[i++] = values), ...);
}

// Throws pg::Error when `r` is not a successful result; `statement` names what ran.
void check_result(const Result& r, PGconn* conn, std::string_view statement);

// Whose session a connection is. pgslow's own sessions (applier, restore, evidence, data
// reset, loading) SET their own statement_timeout, lock_timeout and idle timeouts to 0 right
// after connecting, so a stage that sets `statement_timeout: 1ms` cannot stop pgslow from
// measuring or restoring the server (ARCHITECTURE.md "Configuration changes: the rules").
// The workload's clients take the server's settings: those are what a stage measures.
// kConsole is PgBouncer's admin console, which knows no SET. kOwn and kConsole sessions read
// each blocking query's result under kResultCap (below); kWorkload's are the measured path.
enum class SessionKind { kOwn, kWorkload, kConsole };

// What one blocking query of an own or console session may bring back. pgslow's own queries
// read settings and counters (a few hundred rows); a peer that answers with more (the server's
// user can put anything at the socket pgslow reaches) is cut off there, the connection closed.
struct ResultCap {
  std::int64_t rows = 0;
  std::size_t bytes = 0;  // the values' bytes, plus 16 per field
};
inline constexpr ResultCap kResultCap{100000, std::size_t{32} << 20};

// What pgslow's own sessions run first ("SET statement_timeout = 0; ...").
std::string own_session_settings();

class Connection {
 public:
  Connection() = default;
  // Connects (blocking); throws pg::Error with the class of the failure (53300 and friends)
  // and the conninfo redacted.
  static Connection open(const std::string& conninfo, SessionKind kind = SessionKind::kOwn);

  Connection(Connection&& other) noexcept
      : conn_(other.conn_), cap_(other.cap_), peer_(std::move(other.peer_)) {
    other.conn_ = nullptr;
  }
  Connection& operator=(Connection&& other) noexcept;
  Connection(const Connection&) = delete;
  Connection& operator=(const Connection&) = delete;
  ~Connection();

  PGconn* raw() const { return conn_; }
  bool is_open() const { return conn_ != nullptr && PQstatus(conn_) == CONNECTION_OK; }
  void close();

  // Blocking calls; all throw pg::Error on failure.
  Result exec(std::string_view sql);
  Result exec_params(std::string_view sql, const Params& params);
  void prepare(const std::string& name, std::string_view sql);
  Result exec_prepared(const std::string& name, const Params& params);
  // Runs each statement in turn; for scripts of DDL.
  void exec_all(const std::vector<std::string>& statements);
  // The first column of the first row, or nullopt when there is no row or it is NULL.
  std::optional<std::string> query_value(std::string_view sql);

  int server_version() const { return PQserverVersion(conn_); }   // e.g. 150018
  int major_version() const { return server_version() / 10000; }  // e.g. 15
  int backend_pid() const { return PQbackendPID(conn_); }

  std::string quote_literal(std::string_view value) const;    // 'it''s'
  std::string quote_identifier(std::string_view name) const;  // "My Table"

  // Non-blocking API for the driver.
  int socket() const { return PQsocket(conn_); }
  void set_nonblocking(bool on);
  // Queues a prepared statement; returns false only if libpq could not queue it (throws on
  // a broken connection).
  void send_prepared(const char* name, int n_params, const char* const* values);
  void send_query(const char* sql);
  // The extended protocol with the statement's text (unnamed, parsed every time).
  void send_query_params(const char* sql, int n_params, const char* const* values);
  // Flushes queued output; true when everything was sent, false when the socket is full.
  bool flush();
  // Reads what the socket has; throws pg::Error(kConnectionLost) when the connection broke.
  void consume_input();
  bool is_busy() const { return PQisBusy(conn_) != 0; }
  Result next_result() { return Result(PQgetResult(conn_)); }  // empty Result: no more

  // Asks the server to cancel the running statement (PQcancel); never throws.
  void cancel() noexcept;

 private:
  explicit Connection(PGconn* c) : conn_(c) {}
  [[noreturn]] void throw_connection_error(std::string_view statement) const;
  // After a PQsend* call that returned `sent`: reads its results as PQexec would, a row at a
  // time under cap_ (closing the connection past it).
  Result capped_results(int sent, std::string_view statement);
  // Closes a capped session its peer left mid-COPY, and throws naming the peer.
  [[noreturn]] void refuse_uncapped(std::string_view statement);
  PGconn* conn_ = nullptr;
  std::optional<ResultCap> cap_;  // set for kOwn and kConsole sessions
  std::string peer_;              // the redacted conninfo, for the cap's error
};

// Runs the body in a transaction; ROLLBACK when it throws. For setup code and checks, not the
// driver. `begin` may set the isolation level ("BEGIN ISOLATION LEVEL REPEATABLE READ").
template <typename F>
void in_transaction(Connection& conn, F&& body, std::string_view begin = "BEGIN") {
  conn.exec(begin);
  try {
    body();
  } catch (...) {
    if (conn.is_open()) {
      try {
        conn.exec("ROLLBACK");
      } catch (...) {
      }
    }
    throw;
  }
  conn.exec("COMMIT");
}

// Adds or replaces `dbname` in a keyword=value conninfo (URIs are passed through libpq's
// expand_dbname rule by appending dbname=...).
std::string with_database(const std::string& conninfo, const std::string& dbname);

// A conninfo value as libpq reads it: bare when plain, else single-quoted with each quote and
// backslash escaped. Every value pgslow puts into a conninfo goes through this, so a socket
// folder read from postmaster.pid (`x hostaddr=127.0.0.1`) stays one value.
std::string conninfo_value(std::string_view value);

// The conninfo of a server on a local socket the server's user controls (the managed cluster,
// a pgctl target, pgslow's PgBouncer and its console): it logs in by trust, and whatever
// listens there may ask for a password, so none is ever sent. password='' keeps PGPASSWORD
// out, a passfile that cannot exist keeps ~/.pgpass and PGPASSFILE out (libpq then fails "no
// password supplied"), and libpq 16+ is told require_auth=none.
std::string local_socket_conninfo(std::string_view socket_dir, std::string_view port,
                                  std::string_view dbname, std::string_view user = "postgres");

}  // namespace pgslow::pg
