#include "pg/error.h"

#include <fmt/format.h>

#include "common/strings.h"

namespace pgslow::pg {

std::string_view to_string(ErrorClass c) {
  switch (c) {
    case ErrorClass::kSerialization: return "serialization failure";
    case ErrorClass::kDeadlock: return "deadlock";
    case ErrorClass::kTooManyConnections: return "too many connections";
    case ErrorClass::kConnectionLost: return "connection lost";
    case ErrorClass::kQueryCanceled: return "query canceled";
    case ErrorClass::kOther: return "other";
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

std::string redact_conninfo(std::string_view conninfo) {
  std::string s(conninfo);
  // URI form: postgresql://user:secret@host/...
  for (std::string_view scheme : {"postgresql://", "postgres://"}) {
    if (starts_with(s, scheme)) {
      auto start = scheme.size();
      auto at = s.find('@', start);
      auto slash = s.find('/', start);
      if (at != std::string::npos && (slash == std::string::npos || at < slash)) {
        auto colon = s.find(':', start);
        if (colon != std::string::npos && colon < at) s.replace(colon + 1, at - colon - 1, "***");
      }
      // password=... may also appear as a query parameter.
      auto q = s.find("password=");
      if (q != std::string::npos) {
        auto end = s.find('&', q);
        s.replace(q + 9, (end == std::string::npos ? s.size() : end) - q - 9, "***");
      }
      return s;
    }
  }
  // keyword = value form; the value may be single-quoted with backslash escapes.
  std::string out;
  std::size_t i = 0;
  while (i < s.size()) {
    auto key_pos = s.find("password", i);
    if (key_pos == std::string::npos) break;
    bool word_start = key_pos == 0 || std::isspace(static_cast<unsigned char>(s[key_pos - 1]));
    std::size_t j = key_pos + 8;
    while (j < s.size() && s[j] == ' ') ++j;
    if (!word_start || j >= s.size() || s[j] != '=') {
      out.append(s, i, j - i);
      i = j;
      continue;
    }
    ++j;
    while (j < s.size() && s[j] == ' ') ++j;
    out.append(s, i, j - i);
    out += "***";
    if (j < s.size() && s[j] == '\'') {
      ++j;
      while (j < s.size() && s[j] != '\'') j += (s[j] == '\\' && j + 1 < s.size()) ? 2 : 1;
      if (j < s.size()) ++j;
    } else {
      while (j < s.size() && !std::isspace(static_cast<unsigned char>(s[j]))) ++j;
    }
    i = j;
  }
  out.append(s, i, std::string::npos);
  return out;
}

}  // namespace pgslow::pg
