#include "pg/connection.h"

#include <fmt/format.h>

#include <charconv>
#include <cstdlib>

#include "common/strings.h"

namespace pgslow::pg {

namespace {
std::string field(const PGresult* r, int code) {
  const char* v = PQresultErrorField(r, code);
  return v ? std::string(v) : std::string();
}
}  // namespace

int Result::column(std::string_view name) const {
  int c = PQfnumber(res_.get(), std::string(name).c_str());
  if (c < 0) throw RuntimeError(fmt::format("result has no column \"{}\"", name));
  return c;
}

std::string_view Result::get(int row, int col) const {
  return {PQgetvalue(res_.get(), row, col),
          static_cast<std::size_t>(PQgetlength(res_.get(), row, col))};
}

std::int64_t Result::get_int64(int row, int col) const {
  if (is_null(row, col)) return 0;
  auto s = get(row, col);
  std::int64_t v = 0;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc()) {
    // numeric values such as "12.0" or "1e+06": go through double.
    return static_cast<std::int64_t>(std::strtod(std::string(s).c_str(), nullptr));
  }
  return v;
}

double Result::get_double(int row, int col) const {
  if (is_null(row, col)) return 0.0;
  return std::strtod(std::string(get(row, col)).c_str(), nullptr);
}

std::optional<std::string> Result::get_optional(int row, int col) const {
  if (is_null(row, col)) return std::nullopt;
  return std::string(get(row, col));
}

std::int64_t Result::affected_rows() const {
  const char* n = PQcmdTuples(res_.get());
  return (n && *n) ? std::strtoll(n, nullptr, 10) : 0;
}

void check_result(const Result& r, PGconn* conn, std::string_view statement) {
  if (!r) {
    std::string msg = conn ? PQerrorMessage(conn) : "no result";
    throw Error(ErrorClass::kConnectionLost, "", msg, std::string(statement));
  }
  switch (r.status()) {
    case PGRES_COMMAND_OK:
    case PGRES_TUPLES_OK:
    case PGRES_COPY_IN:
    case PGRES_COPY_OUT:
    case PGRES_EMPTY_QUERY:
    case PGRES_SINGLE_TUPLE:
      return;
    default:
      break;
  }
  std::string sqlstate = field(r.raw(), PG_DIAG_SQLSTATE);
  std::string message = field(r.raw(), PG_DIAG_MESSAGE_PRIMARY);
  if (message.empty()) message = PQresultErrorMessage(r.raw());
  if (message.empty() && conn) message = PQerrorMessage(conn);
  throw Error(classify_sqlstate(sqlstate), sqlstate, message, std::string(statement));
}

std::string own_session_settings() {
  // Settings every supported version (13+) knows.
  return "SET statement_timeout = 0; SET lock_timeout = 0; "
         "SET idle_in_transaction_session_timeout = 0";
}

namespace {

// A SET, not a startup option (-c in `options`): a startup option is also the session's reset
// value, so pg_settings.reset_val would show 0 instead of the server's configured value, and
// ServerSettings::read (knobs/validate.cpp) reads through this session's own SETs with it.
void turn_own_timeouts_off(Connection& conn) {
  // The server's statement_timeout may be tiny (a stage's 1ms) and cancel even these.
  constexpr int kAttempts = 20;
  for (int attempt = 1;; ++attempt) {
    try {
      conn.exec(own_session_settings());
      return;
    } catch (const Error& e) {
      if (e.error_class() != ErrorClass::kQueryCanceled || attempt == kAttempts) throw;
    }
  }
}

}  // namespace

Connection Connection::open(const std::string& conninfo, SessionKind kind) {
  PGconn* c = PQconnectdb(conninfo.c_str());
  if (c == nullptr) {
    throw Error(ErrorClass::kOther, "", "out of memory creating a connection", "");
  }
  if (PQstatus(c) != CONNECTION_OK) {
    std::string msg = trim(PQerrorMessage(c));
    PQfinish(c);
    ErrorClass cls = classify_connect_failure(msg);
    std::string sqlstate = cls == ErrorClass::kTooManyConnections ? "53300" : "";
    throw Error(cls, sqlstate,
                fmt::format("cannot connect to {}: {}", redact_conninfo(conninfo), msg), "");
  }
  // Results are parsed as text; keep the client quiet about NOTICEs.
  PQsetNoticeProcessor(
      c, [](void*, const char*) {}, nullptr);
  Connection conn(c);
  if (kind == SessionKind::kOwn) turn_own_timeouts_off(conn);
  return conn;
}

Connection& Connection::operator=(Connection&& other) noexcept {
  if (this != &other) {
    close();
    conn_ = other.conn_;
    other.conn_ = nullptr;
  }
  return *this;
}

Connection::~Connection() {
  close();
}

void Connection::close() {
  if (conn_ != nullptr) {
    PQfinish(conn_);
    conn_ = nullptr;
  }
}

void Connection::throw_connection_error(std::string_view statement) const {
  std::string msg = conn_ ? trim(PQerrorMessage(conn_)) : "not connected";
  throw Error(ErrorClass::kConnectionLost, "", msg, std::string(statement));
}

Result Connection::exec(std::string_view sql) {
  if (!conn_) throw_connection_error(sql);
  Result r(PQexec(conn_, std::string(sql).c_str()));
  check_result(r, conn_, sql);
  return r;
}

namespace {
std::vector<const char*> param_pointers(const Params& params) {
  std::vector<const char*> values;
  values.reserve(params.size());
  for (const auto& p : params) values.push_back(p ? p->c_str() : nullptr);
  return values;
}
}  // namespace

Result Connection::exec_params(std::string_view sql, const Params& params) {
  if (!conn_) throw_connection_error(sql);
  auto values = param_pointers(params);
  Result r(PQexecParams(conn_, std::string(sql).c_str(), static_cast<int>(values.size()), nullptr,
                        values.data(), nullptr, nullptr, 0));
  check_result(r, conn_, sql);
  return r;
}

void Connection::prepare(const std::string& name, std::string_view sql) {
  if (!conn_) throw_connection_error(name);
  Result r(PQprepare(conn_, name.c_str(), std::string(sql).c_str(), 0, nullptr));
  check_result(r, conn_, name);
}

Result Connection::exec_prepared(const std::string& name, const Params& params) {
  if (!conn_) throw_connection_error(name);
  auto values = param_pointers(params);
  Result r(PQexecPrepared(conn_, name.c_str(), static_cast<int>(values.size()), values.data(),
                          nullptr, nullptr, 0));
  check_result(r, conn_, name);
  return r;
}

void Connection::exec_all(const std::vector<std::string>& statements) {
  for (const auto& s : statements) exec(s);
}

std::optional<std::string> Connection::query_value(std::string_view sql) {
  Result r = exec(sql);
  if (r.rows() == 0 || r.columns() == 0) return std::nullopt;
  return r.get_optional(0, 0);
}

std::string Connection::quote_literal(std::string_view value) const {
  char* q = PQescapeLiteral(conn_, value.data(), value.size());
  if (q == nullptr) throw_connection_error("quote_literal");
  std::string out(q);
  PQfreemem(q);
  return out;
}

std::string Connection::quote_identifier(std::string_view name) const {
  char* q = PQescapeIdentifier(conn_, name.data(), name.size());
  if (q == nullptr) throw_connection_error("quote_identifier");
  std::string out(q);
  PQfreemem(q);
  return out;
}

void Connection::set_nonblocking(bool on) {
  if (PQsetnonblocking(conn_, on ? 1 : 0) != 0) throw_connection_error("set_nonblocking");
}

void Connection::send_prepared(const char* name, int n_params, const char* const* values) {
  if (PQsendQueryPrepared(conn_, name, n_params, values, nullptr, nullptr, 0) == 0)
    throw_connection_error(name);
}

void Connection::send_query(const char* sql) {
  if (PQsendQuery(conn_, sql) == 0) throw_connection_error(sql);
}

void Connection::send_query_params(const char* sql, int n_params, const char* const* values) {
  if (PQsendQueryParams(conn_, sql, n_params, nullptr, values, nullptr, nullptr, 0) == 0)
    throw_connection_error(sql);
}

bool Connection::flush() {
  int rc = PQflush(conn_);
  if (rc < 0) throw_connection_error("flush");
  return rc == 0;
}

void Connection::consume_input() {
  if (PQconsumeInput(conn_) == 0) throw_connection_error("consume_input");
}

void Connection::cancel() noexcept {
  if (!conn_) return;
  PGcancel* c = PQgetCancel(conn_);
  if (!c) return;
  char err[256];
  PQcancel(c, err, sizeof err);
  PQfreeCancel(c);
}

std::string with_database(const std::string& conninfo, const std::string& dbname) {
  // Later keywords win in libpq's keyword=value parsing, so appending is enough; quote the
  // name the way conninfo values are quoted.
  std::string quoted = "'";
  for (char ch : dbname) {
    if (ch == '\'' || ch == '\\') quoted += '\\';
    quoted += ch;
  }
  quoted += "'";
  if (starts_with(conninfo, "postgresql://") || starts_with(conninfo, "postgres://")) {
    // A URI followed by keywords is not valid; fall back to libpq's parsing.
    PQconninfoOption* opts = PQconninfoParse(conninfo.c_str(), nullptr);
    std::string out;
    if (opts) {
      for (PQconninfoOption* o = opts; o->keyword; ++o) {
        if (o->val && *o->val && std::string_view(o->keyword) != "dbname") {
          std::string v = "'";
          for (const char* p = o->val; *p; ++p) {
            if (*p == '\'' || *p == '\\') v += '\\';
            v += *p;
          }
          out += fmt::format("{}={}' ", o->keyword, v);
        }
      }
      PQconninfoFree(opts);
    }
    return out + "dbname=" + quoted;
  }
  return trim(conninfo) + " dbname=" + quoted;
}

}  // namespace pgslow::pg
