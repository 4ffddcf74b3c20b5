#pragma once
// The write patterns of the concurrency labs (CONCURRENCY_LABS.md section 2), each one
// autocommitted statement per transaction as the labs' pgbench custom scripts:
//   insert          INSERT one row into one table (no contention: the append path, WAL)
//   update-spread   UPDATE a random row of 1,000 x scale (row locks rarely collide)
//   update-hot-row  UPDATE one single row (every client queues on the same row lock)
// At 50 clients the hot row ran ~28x slower than the spread update with zero errors: lock
// waits show up only as latency.

#include <memory>

#include "workload/workload.h"

namespace pgslow::workload {

std::unique_ptr<Workload> make_insert();
std::unique_ptr<Workload> make_update_spread();
std::unique_ptr<Workload> make_update_hot_row();

}  // namespace pgslow::workload
