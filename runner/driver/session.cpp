#include "driver/session.h"

#include <limits>

#include "common/clock.h"

namespace pgslow::driver {

std::string inline_parameters(const std::string& sql, const pg::Params& params, bool as_text) {
  std::string out;
  out.reserve(sql.size() + 16 * params.size());
  for (std::size_t i = 0; i < sql.size(); ++i) {
    if (sql[i] != '$' || i + 1 >= sql.size() || sql[i + 1] < '0' || sql[i + 1] > '9') {
      out += sql[i];
      continue;
    }
    std::size_t n = 0, j = i + 1;
    while (j < sql.size() && sql[j] >= '0' && sql[j] <= '9') n = n * 10 + (sql[j++] - '0');
    if (n == 0 || n > params.size()) {
      out.append(sql, i, j - i);  // not a parameter of this statement: left as written
    } else if (!params[n - 1]) {
      out += "NULL";
    } else if (as_text) {
      out += *params[n - 1];
    } else {
      out += '\'';
      for (char c : *params[n - 1]) {
        if (c == '\'') out += '\'';
        out += c;
      }
      out += '\'';
    }
    i = j - 1;
  }
  return out;
}

Task<pg::Result> DriverSession::execute(const std::string& statement, const pg::Params& params) {
  send_check();
  const Protocol protocol = statements_ ? statements_->protocol : Protocol::kPrepared;
  if (protocol == Protocol::kPrepared) {
    values_.clear();
    for (const auto& p : params) values_.push_back(p ? p->c_str() : nullptr);
    slot_->conn.send_prepared(statement.c_str(), static_cast<int>(values_.size()), values_.data());
    co_return co_await ResultAwaiter{loop_, slot_, statement.c_str()};
  }
  const auto it = statements_->defs.find(statement);
  if (it == statements_->defs.end())
    throw pg::Error(pg::ErrorClass::kOther, "", "unknown statement " + statement, statement);
  if (protocol == Protocol::kExtended) {
    values_.clear();
    for (const auto& p : params) values_.push_back(p ? p->c_str() : nullptr);
    slot_->conn.send_query_params(it->second.sql.c_str(), static_cast<int>(values_.size()),
                                  values_.data());
  } else {
    text_ = inline_parameters(it->second.sql, params, it->second.text_substitution);
    slot_->conn.send_query(text_.c_str());
  }
  co_return co_await ResultAwaiter{loop_, slot_, statement.c_str()};
}

Task<pg::Result> DriverSession::query(const std::string& sql) {
  send_check();
  slot_->conn.send_query(sql.c_str());
  co_return co_await ResultAwaiter{loop_, slot_, sql.c_str()};
}

namespace {
struct WakeAwaiter {
  EventLoop* loop;
  std::int64_t at;
  bool await_ready() const noexcept { return now_us() >= at; }
  void await_suspend(std::coroutine_handle<> h) { loop->wake_at(at, h); }
  void await_resume() const noexcept {}
};
}  // namespace

Task<void> DriverSession::sleep(std::int64_t us) {
  // A script's \sleep may be up to INT64_MAX microseconds: the deadline saturates.
  std::int64_t at = 0;
  if (__builtin_add_overflow(now_us(), us, &at)) at = std::numeric_limits<std::int64_t>::max();
  co_await WakeAwaiter{loop_, at};
}

void DriverSession::send_check() const {
  if (!slot_->conn.is_open())
    throw pg::Error(pg::ErrorClass::kConnectionLost, "", "the connection was lost", "");
}

}  // namespace pgslow::driver
