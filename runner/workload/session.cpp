#include "workload/workload.h"

namespace pgslow::workload {

Task<pg::Result> BlockingSession::execute(const std::string& statement, pg::Params params) {
  co_return conn_.exec_prepared(statement, params);
}

Task<pg::Result> BlockingSession::query(const std::string& sql) { co_return conn_.exec(sql); }

}  // namespace pgslow::workload
