// Issue #41: a stage's data reset both ways, side by side in one run, on one server: the
// template copy (CREATE DATABASE ... STRATEGY FILE_COPY copying the bytes) and PostgreSQL 18's
// clone (the same with file_copy_method = clone: the files reflinked). The server lives on a
// small XFS made with reflink=1 on a loop device (tests/support/reflink_mount.h), the data is
// tpcc-lite at PGSLOW_RESET_BENCH_WAREHOUSES warehouses (default 10). After the clones, the
// clone is checked: the workload's consistency checks, and every table's rows hashed in ctid
// order against the template's. The same pair again with fsync off shows the copy's own cost
// apart from the disk's flushes. Needs root, loop devices and PostgreSQL 18 installed.
//
//   sudo build/tests/bench/reset_bench --benchmark_min_time=1x --benchmark_repetitions=5

#include <benchmark/benchmark.h>

#include <cstdlib>
#include <iostream>
#include <memory>

#include "common/errors.h"
#include "common/progress.h"
#include "pg/connection.h"
#include "tests/support/cluster_fixture.h"
#include "tests/support/data_checksum.h"
#include "tests/support/reflink_mount.h"
#include "workload/dataset.h"
#include "workload/registry.h"

namespace pgslow {
namespace {

struct Lab {
  std::unique_ptr<testing::ReflinkMount> mount;
  std::unique_ptr<testing::TemporaryCluster> cluster;
  std::unique_ptr<workload::Dataset> data;
  workload::WorkloadParams params;
};
Lab* g_lab = nullptr;

// fsync as the server has it for the next connections (the reset opens its own).
void set_fsync(bool on) {
  const std::string conninfo = g_lab->cluster->get().conninfo();
  pg::Connection c = pg::Connection::open(conninfo);
  c.exec(on ? "ALTER SYSTEM RESET fsync" : "ALTER SYSTEM SET fsync = off");
  c.exec("SELECT pg_reload_conf()");
  // The postmaster reads the file on its own time: wait until a new session sees it.
  for (int i = 0; i < 1000; ++i) {
    if (pg::Connection::open(conninfo).query_value("SHOW fsync") == (on ? "on" : "off")) return;
  }
  throw RuntimeError("the server did not take fsync = " + std::string(on ? "on" : "off"));
}

// fsync off shows what the copy itself costs: FILE_COPY fsyncs every file it made and
// checkpoints twice, and on a loop device each flush goes through to the disk beneath.
void BM_Reset(benchmark::State& state, workload::ResetMethod method, bool fsync) {
  set_fsync(fsync);
  g_lab->data->set_reset_method(method);
  g_lab->data->reset();  // the previous clone, of either kind, is dropped outside the timing
  for (auto _ : state) {
    const workload::ResetResult r = g_lab->data->reset();
    state.SetIterationTime(r.seconds);
  }
  state.counters["bytes"] = static_cast<double>(g_lab->data->data_bytes());
  set_fsync(true);
}

}  // namespace
}  // namespace pgslow

int main(int argc, char** argv) {
  using namespace pgslow;
  benchmark::Initialize(&argc, argv);
  const char* wh = std::getenv("PGSLOW_RESET_BENCH_WAREHOUSES");
  Lab lab;
  lab.params.scale = wh && *wh ? std::atoi(wh) : 10;
  std::string why;
  // About 110 MB per warehouse, a second copy by the template copy, and the WAL.
  const std::uint64_t image =
      (std::uint64_t{1} << 30) + std::uint64_t(lab.params.scale) * 400'000'000;
  lab.mount = testing::ReflinkMount::make(image, why);
  if (!lab.mount) {
    std::cerr << "reset_bench: no XFS with reflink here: " << why << "\n";
    return 77;
  }
  lab.cluster = std::make_unique<testing::TemporaryCluster>(lab.mount->make_folder("pg18"), 18);
  const workload::Workload& w = workload::find_workload("tpcc-lite");
  lab.data = std::make_unique<workload::Dataset>(lab.cluster->get().conninfo(), w, lab.params);
  ConsoleProgress progress;
  lab.data->load(progress);
  g_lab = &lab;
  for (bool fsync : {true, false}) {
    const std::string suffix = fsync ? "" : "/fsync_off";
    benchmark::RegisterBenchmark(("reset/template_copy" + suffix).c_str(), BM_Reset,
                                 workload::ResetMethod::kTemplateCopy, fsync)
        ->UseManualTime()
        ->Unit(benchmark::kMillisecond);
    benchmark::RegisterBenchmark(("reset/clone" + suffix).c_str(), BM_Reset,
                                 workload::ResetMethod::kServerClone, fsync)
        ->UseManualTime()
        ->Unit(benchmark::kMillisecond);
  }
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();

  // The last reset was a clone: it must hold the template's data, as stored.
  const std::string clone = lab.data->clone_conninfo();
  int failures = 0;
  try {
    for (const auto& c : workload::check_data(w, clone, lab.params)) failures += c.passed ? 0 : 1;
  } catch (const std::exception& e) {
    std::cerr << "check-data on the clone failed: " << e.what() << "\n";
    ++failures;
  }
  const auto template_sums = testing::table_checksums(
      pg::with_database(lab.cluster->get().conninfo(), lab.data->template_name()));
  const bool identical = template_sums == testing::table_checksums(clone);
  std::cout << "clone vs template: check-data " << (failures == 0 ? "passed" : "FAILED") << ", "
            << template_sums.size() << " tables' checksums " << (identical ? "identical" : "DIFFER")
            << "\n";
  g_lab = nullptr;
  lab.data.reset();
  lab.cluster.reset();  // the server stops before its file system is unmounted
  lab.mount.reset();
  return failures == 0 && identical ? 0 : 1;
}
