// A terminal (clause 2.1.4): where it sits, and the customer selection Payment and
// Order-Status share (2.5.1.2, 2.6.1.2).

#include "workload/tpcc/terminal.h"

#include <algorithm>

#include "workload/tpcc/constants.h"

namespace pgslow::workload::tpcc {

Terminal terminal_of(int warehouses, int index) {
  Terminal t;
  t.warehouses = std::max(1, warehouses);
  t.w_id = index % t.warehouses + 1;
  t.d_id = index / t.warehouses % kDistrictsPerWarehouse + 1;
  return t;
}

CustomerChoice draw_customer(Rng& rng, const Terminal& t, int by_name_percent) {
  CustomerChoice c;
  if (rng.percent(by_name_percent)) {
    c.c_last = last_name(static_cast<int>(nurand(rng, 255, 0, 999, t.constants.c_last)));
  } else {
    c.c_id = nurand(rng, 1023, 1, kCustomersPerDistrict, t.constants.c_id);
  }
  return c;
}

}  // namespace pgslow::workload::tpcc
