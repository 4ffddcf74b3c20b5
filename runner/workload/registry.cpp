#include "workload/registry.h"

#include <fmt/format.h>

#include <memory>

#include "common/strings.h"
#include "workload/patterns/patterns.h"
#include "workload/pgbench/pgbench.h"
#include "workload/tpcc/tpcc.h"

namespace pgslow::workload {

namespace {
const std::vector<std::unique_ptr<Workload>>& all() {
  static const std::vector<std::unique_ptr<Workload>> workloads = [] {
    std::vector<std::unique_ptr<Workload>> w;
    w.push_back(tpcc::make_tpcc_lite());
    w.push_back(make_tpcb_like());
    w.push_back(make_select_only());
    w.push_back(make_range_aggregate());
    w.push_back(make_script_workload());
    w.push_back(make_insert());
    w.push_back(make_update_spread());
    w.push_back(make_update_hot_row());
    return w;
  }();
  return workloads;
}
}  // namespace

std::vector<std::string> workload_names() {
  std::vector<std::string> names;
  for (const auto& w : all()) names.emplace_back(w->name());
  return names;
}

const Workload& find_workload(std::string_view name) {
  for (const auto& w : all())
    if (w->name() == name) return *w;
  auto names = workload_names();
  std::string msg = fmt::format("unknown workload \"{}\"", name);
  if (auto close = closest_match(name, names))
    msg += fmt::format(" (did you mean \"{}\"?)", *close);
  msg += "; known workloads: " + join(names, ", ");
  throw InputError(msg);
}

void add_script_files(WorkloadParams& params, const std::vector<std::string>& files) {
  for (const auto& f : files) {
    std::string& list = params.options["scripts"];
    list += (list.empty() ? "" : ",") + f;
  }
}

}  // namespace pgslow::workload
