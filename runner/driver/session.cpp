#include "driver/session.h"

namespace pgslow::driver {

Task<pg::Result> DriverSession::execute(const std::string& statement, pg::Params params) {
  values_.clear();
  for (const auto& p : params) values_.push_back(p ? p->c_str() : nullptr);
  send_check();
  slot_->conn.send_prepared(statement.c_str(), static_cast<int>(values_.size()), values_.data());
  co_return co_await ResultAwaiter{loop_, slot_, statement.c_str()};
}

Task<pg::Result> DriverSession::query(const std::string& sql) {
  send_check();
  slot_->conn.send_query(sql.c_str());
  co_return co_await ResultAwaiter{loop_, slot_, sql.c_str()};
}

void DriverSession::send_check() const {
  if (!slot_->conn.is_open())
    throw pg::Error(pg::ErrorClass::kConnectionLost, "", "the connection was lost", "");
}

}  // namespace pgslow::driver
