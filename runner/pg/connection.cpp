#include "pg/connection.h"

#include <fmt/format.h>

#include <cctype>
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

void Result::check_cell(int row, int col) const {
  if (row >= 0 && row < rows() && col >= 0 && col < columns()) return;
  throw RuntimeError(fmt::format("row {}, column {} read from a result of {} row{} and {} column{}",
                                 row, col, rows(), rows() == 1 ? "" : "s", columns(),
                                 columns() == 1 ? "" : "s"));
}

bool Result::is_null(int row, int col) const {
  check_cell(row, col);
  return PQgetisnull(res_.get(), row, col) != 0;
}

std::string_view Result::get(int row, int col) const {
  check_cell(row, col);
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
  if (kind != SessionKind::kWorkload) {
    conn.cap_ = kResultCap;
    conn.peer_ = redact_conninfo(conninfo);
  }
  if (kind == SessionKind::kOwn) turn_own_timeouts_off(conn);
  return conn;
}

Connection& Connection::operator=(Connection&& other) noexcept {
  if (this != &other) {
    close();
    conn_ = other.conn_;
    cap_ = other.cap_;
    peer_ = std::move(other.peer_);
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

namespace {

// Whether the connection is free for a new query: PQexec's own start also ends a COPY or
// drops results left unread, so anything else goes its way (uncapped, as before).
bool idle(PGconn* conn) {
  return PQtransactionStatus(conn) != PQTRANS_ACTIVE;
}

// Whether `statement` is pgslow's own COPY ... FROM STDIN (a load): the one statement after
// which a capped session may be left mid-COPY, sending.
bool copies_in(std::string_view statement) {
  const auto start = statement.find_first_not_of(" \t\n");
  if (start == std::string_view::npos || statement.size() - start < 5) return false;
  std::string word(statement.substr(start, 5));
  for (char& c : word) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return word == "COPY " && statement.find("FROM STDIN") != std::string_view::npos;
}

}  // namespace

void Connection::refuse_uncapped(std::string_view statement) {
  // A capped session that is not idle was left so by its peer (a COPY it answered with): plain
  // PQexec would read whatever comes next whole.
  close();
  throw Error(ErrorClass::kOther, "",
              fmt::format("{} left pgslow's session in a state no query of pgslow's leaves it "
                          "in (a COPY it was not asked for); pgslow closed the connection: check "
                          "what listens there",
                          peer_),
              std::string(statement));
}

Result Connection::capped_results(int sent, std::string_view statement) {
  if (sent == 0) throw_connection_error(statement);
  PQsetSingleRowMode(conn_);
  // As PQexec: the last result counts, and a COPY or a lost connection stops the loop. Rows
  // arrive one PGresult each and are copied into `rows`, counted as they come.
  Result last;
  Result rows;
  std::int64_t row_count = 0;
  std::size_t bytes = 0;
  while (PGresult* raw = PQgetResult(conn_)) {
    Result r(raw);
    const int fields = r.columns();
    for (int row = 0; row < r.rows(); ++row) {
      ++row_count;
      for (int col = 0; col < fields; ++col)
        bytes += static_cast<std::size_t>(PQgetlength(raw, row, col)) + 16;
    }
    if (row_count > cap_->rows || bytes > cap_->bytes) {
      // Reading on would take all it sends: close, and say whom.
      close();
      throw Error(ErrorClass::kOther, "",
                  fmt::format("{} answered with more than {} rows or {} MB for one query; pgslow "
                              "stopped reading and closed the connection. pgslow's own queries "
                              "read a few hundred rows: check what listens there (a program of "
                              "the server's user may have taken the server's place)",
                              peer_, cap_->rows, cap_->bytes >> 20),
                  std::string(statement));
    }
    if (r.status() == PGRES_SINGLE_TUPLE) {
      if (!rows) rows = Result(PQcopyResult(raw, PG_COPYRES_ATTRS));
      if (!rows) throw Error(ErrorClass::kOther, "", "out of memory", std::string(statement));
      const int at = rows.rows();
      for (int col = 0; col < fields; ++col) {
        const bool null = PQgetisnull(raw, 0, col) != 0;
        if (PQsetvalue(rows.raw(), at, col, null ? nullptr : PQgetvalue(raw, 0, col),
                       null ? -1 : PQgetlength(raw, 0, col)) == 0)
          throw Error(ErrorClass::kOther, "", "out of memory", std::string(statement));
      }
      continue;
    }
    // The end of a row set (zero rows: its description), or any other result.
    last = r.status() == PGRES_TUPLES_OK && rows ? std::move(rows) : std::move(r);
    rows = Result();
    const ExecStatusType status = last.status();
    // COPY data coming in would not be counted: only pgslow's own COPY ... FROM STDIN may
    // leave the session in a COPY, and only to send.
    if (status == PGRES_COPY_OUT || status == PGRES_COPY_BOTH ||
        (status == PGRES_COPY_IN && !copies_in(statement)))
      refuse_uncapped(statement);
    if (status == PGRES_COPY_IN || PQstatus(conn_) == CONNECTION_BAD) break;
  }
  check_result(last, conn_, statement);
  return last;
}

Result Connection::exec(std::string_view sql) {
  if (!conn_) throw_connection_error(sql);
  const std::string text(sql);
  if (cap_ && !idle(conn_)) refuse_uncapped(sql);
  if (cap_) return capped_results(PQsendQuery(conn_, text.c_str()), sql);
  Result r(PQexec(conn_, text.c_str()));
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
  const int n = static_cast<int>(values.size());
  if (cap_ && !idle(conn_)) refuse_uncapped(sql);
  if (cap_) {
    return capped_results(PQsendQueryParams(conn_, std::string(sql).c_str(), n, nullptr,
                                            values.data(), nullptr, nullptr, 0),
                          sql);
  }
  Result r(PQexecParams(conn_, std::string(sql).c_str(), n, nullptr, values.data(), nullptr,
                        nullptr, 0));
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
  const int n = static_cast<int>(values.size());
  if (cap_ && !idle(conn_)) refuse_uncapped(name);
  if (cap_) {
    return capped_results(
        PQsendQueryPrepared(conn_, name.c_str(), n, values.data(), nullptr, nullptr, 0), name);
  }
  Result r(PQexecPrepared(conn_, name.c_str(), n, values.data(), nullptr, nullptr, 0));
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

std::string conninfo_value(std::string_view value) {
  // libpq ends a bare value at white space and reads \ as an escape; a quote starts a quoted one.
  if (!value.empty() && value.find_first_of(" \t\n\r\v\f'\\") == std::string_view::npos)
    return std::string(value);
  std::string out = "'";
  for (char c : value) {
    if (c == '\'' || c == '\\') out += '\\';
    out += c;
  }
  return out + "'";
}

std::string local_socket_conninfo(std::string_view socket_dir, std::string_view port,
                                  std::string_view dbname, std::string_view user) {
  // A path under /dev/null: stat() fails (ENOTDIR) and nobody can create it, so libpq reads no
  // password file and says nothing (/dev/null itself draws a "not a plain file" warning).
  std::string out = fmt::format(
      "host={} port={} user={} dbname={} password='' passfile=/dev/null/pgslow-no-passfile",
      conninfo_value(socket_dir), conninfo_value(port), conninfo_value(user),
      conninfo_value(dbname));
  if (PQlibVersion() >= 160000) out += " require_auth=none";
  return out;
}

std::string with_database(const std::string& conninfo, const std::string& dbname) {
  // Later keywords win in libpq's keyword=value parsing, so appending is enough; quote the
  // name the way conninfo values are quoted.
  const std::string quoted = conninfo_value(dbname);
  if (starts_with(conninfo, "postgresql://") || starts_with(conninfo, "postgres://")) {
    // A URI followed by keywords is not valid; fall back to libpq's parsing.
    PQconninfoOption* opts = PQconninfoParse(conninfo.c_str(), nullptr);
    std::string out;
    if (opts) {
      for (PQconninfoOption* o = opts; o->keyword; ++o) {
        if (o->val && *o->val && std::string_view(o->keyword) != "dbname")
          out += fmt::format("{}={} ", o->keyword, conninfo_value(o->val));
      }
      PQconninfoFree(opts);
    }
    return out + "dbname=" + quoted;
  }
  return trim(conninfo) + " dbname=" + quoted;
}

}  // namespace pgslow::pg
