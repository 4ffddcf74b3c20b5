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

// --script FILE[@WEIGHT] (repeatable): adds the files to the script workload's `scripts`
// option, relative to the working directory.
void add_script_files(WorkloadParams& params, const std::vector<std::string>& files);

}  // namespace pgslow::workload
