#pragma once
// Workloads by name: the one place that knows which workloads exist.

#include <string>
#include <string_view>
#include <vector>

#include "workload/workload.h"

namespace pgslow::workload {

// Throws InputError naming the known workloads (and the closest one, for a typo).
const Workload& find_workload(std::string_view name);
std::vector<std::string> workload_names();

}  // namespace pgslow::workload
