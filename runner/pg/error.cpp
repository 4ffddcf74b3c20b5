#include "pg/error.h"

#include <fmt/format.h>
#include <libpq-fe.h>

#include <cctype>

#include "common/strings.h"

namespace pgslow::pg {

std::string_view to_string(ErrorClass c) {
  switch (c) {
    case ErrorClass::kSerialization:
      return "serialization failure";
    case ErrorClass::kDeadlock:
      return "deadlock";
    case ErrorClass::kTooManyConnections:
      return "too many connections";
    case ErrorClass::kConnectionLost:
      return "connection lost";
    case ErrorClass::kQueryCanceled:
      return "query canceled";
    case ErrorClass::kOther:
      return "other";
  }
  return "other";
}

ErrorClass classify_sqlstate(std::string_view sqlstate) {
  if (sqlstate.empty()) return ErrorClass::kConnectionLost;
  if (sqlstate == "40001") return ErrorClass::kSerialization;
  if (sqlstate == "40P01") return ErrorClass::kDeadlock;
  if (sqlstate == "53300") return ErrorClass::kTooManyConnections;
  if (sqlstate == "57014") return ErrorClass::kQueryCanceled;
  // 57P01 admin_shutdown, 57P02 crash_shutdown, 57P03 cannot_connect_now.
  if (sqlstate == "57P01" || sqlstate == "57P02" || sqlstate == "57P03")
    return ErrorClass::kConnectionLost;
  if (starts_with(sqlstate, "08")) return ErrorClass::kConnectionLost;
  return ErrorClass::kOther;
}

ErrorClass classify_connect_failure(std::string_view message) {
  // The texts of 53300 (too_many_connections) in src/backend/utils/init/postinit.c and
  // src/backend/storage/ipc/procarray.c.
  if (message.find("too many clients") != std::string_view::npos ||
      message.find("remaining connection slots are reserved") != std::string_view::npos ||
      message.find("too many connections for") != std::string_view::npos)
    return ErrorClass::kTooManyConnections;
  if (message.find("the database system is shutting down") != std::string_view::npos ||
      message.find("the database system is starting up") != std::string_view::npos)
    return ErrorClass::kConnectionLost;
  return ErrorClass::kConnectionLost;
}

bool is_login_refused(std::string_view message) {
  for (std::string_view text :
       {"no password supplied", "password authentication failed", "authentication failed for user",
        "no pg_hba.conf entry", "pg_hba.conf rejects connection", "does not exist"}) {
    if (message.find(text) != std::string_view::npos) return true;
  }
  return false;
}

namespace {
std::string describe(ErrorClass c, const std::string& sqlstate, const std::string& message,
                     const std::string& statement) {
  std::string text = trim(message);
  std::string out = fmt::format("{}", text.empty() ? std::string(to_string(c)) : text);
  if (!sqlstate.empty()) out += fmt::format(" (SQLSTATE {})", sqlstate);
  if (!statement.empty()) out += fmt::format(" in {}", statement);
  return out;
}
}  // namespace

Error::Error(ErrorClass error_class, std::string sqlstate, std::string server_message,
             std::string statement)
    : RuntimeError(describe(error_class, sqlstate, server_message, statement)),
      class_(error_class),
      sqlstate_(std::move(sqlstate)),
      server_message_(std::move(server_message)),
      statement_(std::move(statement)) {}

namespace {

bool is_secret_key(std::string_view key) {
  return key == "password" || key == "sslpassword";
}

bool is_space(char c) {
  return std::isspace(static_cast<unsigned char>(c)) != 0;
}

// URI form: postgresql://user:secret@host/db?password=secret&sslpassword=secret
std::string redact_uri(std::string s, std::size_t start) {
  auto at = s.find('@', start);
  auto end_of_authority = s.find_first_of("/?", start);
  if (at != std::string::npos && (end_of_authority == std::string::npos || at < end_of_authority)) {
    auto colon = s.find(':', start);
    if (colon != std::string::npos && colon < at) s.replace(colon + 1, at - colon - 1, "***");
  }
  auto q = s.find('?');
  while (q != std::string::npos && q + 1 < s.size()) {
    std::size_t key_start = q + 1;
    std::size_t eq = s.find('=', key_start);
    std::size_t amp = s.find('&', key_start);
    if (eq == std::string::npos || (amp != std::string::npos && amp < eq)) {
      q = amp;
      continue;
    }
    std::string key = s.substr(key_start, eq - key_start);
    std::size_t value_end = amp == std::string::npos ? s.size() : amp;
    if (is_secret_key(key)) s.replace(eq + 1, value_end - eq - 1, "***");
    q = s.find('&', eq);
  }
  return s;
}

}  // namespace

std::string redact_conninfo(std::string_view conninfo) {
  std::string s(conninfo);
  for (std::string_view scheme : {"postgresql://", "postgres://"}) {
    if (starts_with(s, scheme)) return redact_uri(std::move(s), scheme.size());
  }
  // keyword = value form (libpq's grammar: whitespace, tabs included, may surround '='; the
  // value may be single-quoted with backslash escapes).
  std::string out;
  std::size_t i = 0;
  while (i < s.size()) {
    if (is_space(s[i])) {
      out += s[i++];
      continue;
    }
    std::size_t key_start = i;
    while (i < s.size() && !is_space(s[i]) && s[i] != '=') ++i;
    std::string key = s.substr(key_start, i - key_start);
    std::size_t j = i;
    while (j < s.size() && is_space(s[j])) ++j;
    if (j >= s.size() || s[j] != '=') {
      out.append(s, key_start, j - key_start);
      i = j;
      continue;
    }
    ++j;
    while (j < s.size() && is_space(s[j])) ++j;
    std::size_t value_start = j;
    if (j < s.size() && s[j] == '\'') {
      ++j;
      while (j < s.size() && s[j] != '\'') j += (s[j] == '\\' && j + 1 < s.size()) ? 2 : 1;
      if (j < s.size()) ++j;
    } else {
      while (j < s.size() && !is_space(s[j])) j += (s[j] == '\\' && j + 1 < s.size()) ? 2 : 1;
    }
    out.append(s, key_start, value_start - key_start);
    // password='' (local_socket_conninfo: send none) hides nothing.
    if (is_secret_key(key) && s.compare(value_start, j - value_start, "''") != 0) {
      out += "***";
    } else {
      out.append(s, value_start, j - value_start);
    }
    i = j;
  }
  return out;
}

std::string conninfo_without_secrets(std::string_view conninfo) {
  char* err = nullptr;
  PQconninfoOption* options = PQconninfoParse(std::string(conninfo).c_str(), &err);
  if (options == nullptr) {
    if (err) PQfreemem(err);
    // Not a valid conninfo: nothing could connect with it anyway; keep no part that may be one.
    return redact_conninfo(conninfo);
  }
  std::string out;
  for (PQconninfoOption* o = options; o->keyword != nullptr; ++o) {
    if (o->val == nullptr || is_secret_key(o->keyword)) continue;
    std::string value;
    for (const char* c = o->val; *c; ++c) {
      if (*c == '\'' || *c == '\\') value += '\\';
      value += *c;
    }
    if (!out.empty()) out += ' ';
    out += fmt::format("{}='{}'", o->keyword, value);
  }
  PQconninfoFree(options);
  return out;
}

}  // namespace pgslow::pg
