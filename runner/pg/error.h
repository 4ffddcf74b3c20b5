#pragma once
// SQLSTATE -> error class, the one place that decides what kind of failure a server error is
// (libpqxx's shape: the class decides retry, reconnect or give up).

#include <string>
#include <string_view>

#include "common/errors.h"

namespace pgslow::pg {

enum class ErrorClass {
  kSerialization,       // 40001: retry the transaction
  kDeadlock,            // 40P01: retry the transaction
  kTooManyConnections,  // 53300: the server refused a connection
  kConnectionLost,      // 08xxx, 57P01-57P03: reconnect
  kQueryCanceled,       // 57014: statement_timeout or cancel request
  kOther,
};

std::string_view to_string(ErrorClass c);

// Maps a five-character SQLSTATE to its class. An empty SQLSTATE (libpq's own failures,
// e.g. the socket closed) is a lost connection.
ErrorClass classify_sqlstate(std::string_view sqlstate);

// A connection attempt fails before any SQLSTATE reaches libpq's API; the server's FATAL
// text is all there is.
ErrorClass classify_connect_failure(std::string_view message);

// Serialization failures and deadlocks roll back cleanly and may be retried.
inline bool is_retryable(ErrorClass c) {
  return c == ErrorClass::kSerialization || c == ErrorClass::kDeadlock;
}

// A failure reported by the server or libpq. Carries the SQLSTATE, the server's message and
// the statement (prepared name or SQL) that failed.
class Error : public RuntimeError {
 public:
  Error(ErrorClass error_class, std::string sqlstate, std::string server_message,
        std::string statement);
  ErrorClass error_class() const { return class_; }
  const std::string& sqlstate() const { return sqlstate_; }
  const std::string& server_message() const { return server_message_; }
  const std::string& statement() const { return statement_; }

 private:
  ErrorClass class_;
  std::string sqlstate_;
  std::string server_message_;
  std::string statement_;
};

// The conninfo with every secret (password, sslpassword, the password of a URI's user:password@)
// replaced by "***" (keyword=value and URI forms), for logs and error messages: the one
// redaction for display.
std::string redact_conninfo(std::string_view conninfo);

// The conninfo with no secret key at all, as keyword='value' pairs (libpq parses it), for
// what pgslow stores (the journal): a literal password=*** would override PGPASSWORD, the
// password file and the service file when the server is opened again.
std::string conninfo_without_secrets(std::string_view conninfo);

}  // namespace pgslow::pg
