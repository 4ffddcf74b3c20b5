#include <chrono>
#include <thread>

#include "workload/workload.h"

namespace pgslow::workload {

Task<pg::Result> BlockingSession::execute(const std::string& statement, const pg::Params& params) {
  co_return conn_.exec_prepared(statement, params);
}

Task<pg::Result> BlockingSession::query(const std::string& sql) {
  co_return conn_.exec(sql);
}

Task<void> Session::sleep(std::int64_t us) {
  std::this_thread::sleep_for(std::chrono::microseconds(us));
  co_return;
}

}  // namespace pgslow::workload
