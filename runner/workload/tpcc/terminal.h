#pragma once
// A terminal (clause 2.1.4) and the customer selection Payment and Order-Status share.

#include <cstdint>
#include <string>

#include "workload/tpcc/random.h"

namespace pgslow::workload::tpcc {

// What a terminal knows (clause 2.1.4 / 5.2.2): its home warehouse, its district for
// Stock-Level, and the run's NURand constants.
struct Terminal {
  int warehouses = 1;
  int w_id = 1;
  int d_id = 1;
  NURandConstants constants;
};

// Terminal `index` of a run over `warehouses`: the first warehouses x 10 terminals take
// distinct (warehouse, district) pairs, warehouses first, so fewer terminals still spread
// evenly over the warehouses; more wrap around and share pairs.
Terminal terminal_of(int warehouses, int index);

// Customer selection shared by Payment and Order-Status (2.5.1.2, 2.6.1.2).
struct CustomerChoice {
  std::int64_t c_id = 0;  // 0: select by last name
  std::string c_last;
};
CustomerChoice draw_customer(Rng& rng, const Terminal& t, int by_name_percent);

}  // namespace pgslow::workload::tpcc
