#include "workload/tpcc/load.h"

#include <libpq-fe.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <ctime>
#include <exception>
#include <mutex>
#include <thread>
#include <vector>

#include "common/clock.h"
#include "common/format.h"
#include "common/strings.h"
#include "pg/connection.h"
#include "workload/tpcc/checks.h"
#include "workload/tpcc/constants.h"
#include "workload/tpcc/ddls.h"
#include "workload/tpcc/generate.h"

namespace pgslow::workload::tpcc {
namespace {

struct CopyJob {
  Table table;
  int w_id;
};

// Streams `job`'s rows through COPY ... FROM STDIN (text format) on `conn`.
void copy_table(pg::Connection& conn, const CopyJob& job, const LoadContext& ctx,
                std::atomic<std::int64_t>& rows, std::atomic<std::int64_t>& bytes,
                const std::atomic<bool>& stop) {
  const TableInfo& info = table_info(job.table);
  const std::string sql =
      "COPY " + std::string(info.name) + " (" + std::string(info.columns) + ") FROM STDIN";
  pg::Result started(PQexec(conn.raw(), sql.c_str()));
  if (started.status() != PGRES_COPY_IN) pg::check_result(started, conn.raw(), sql);

  // The shared counters move once per buffer, not per row.
  RowBuffer* self = nullptr;
  std::int64_t rows_counted = 0;
  RowBuffer buffer([&](std::string_view chunk) {
    if (stop) throw RuntimeError("load stopped");
    if (PQputCopyData(conn.raw(), chunk.data(), static_cast<int>(chunk.size())) != 1)
      throw RuntimeError("COPY " + std::string(info.name) + ": " + PQerrorMessage(conn.raw()));
    bytes += static_cast<std::int64_t>(chunk.size());
    rows += self->rows() - rows_counted;
    rows_counted = self->rows();
  });
  self = &buffer;
  generate_rows(job.table, job.w_id, ctx, buffer);
  buffer.finish();
  if (PQputCopyEnd(conn.raw(), nullptr) != 1)
    throw RuntimeError("COPY " + std::string(info.name) + ": " + PQerrorMessage(conn.raw()));
  pg::Result done(PQgetResult(conn.raw()));
  pg::check_result(done, conn.raw(), sql);
  while (pg::Result(PQgetResult(conn.raw()))) {
  }
}

// Runs `work(conn, index)` for indexes 0 .. count-1 on `connections` threads, each with its
// own connection; the calling thread reports progress once a second through `tick`. The first
// failure stops the others and is rethrown here.
template <typename Work, typename Tick>
void run_parallel(const std::string& conninfo, int connections, std::size_t count, Work work,
                  Tick tick) {
  std::atomic<std::size_t> next{0};
  std::atomic<bool> stop{false};
  std::mutex mu;
  std::condition_variable cv;
  std::exception_ptr failure;
  int running = 0;

  std::vector<std::thread> threads;
  const int n = std::max(1, std::min(connections, static_cast<int>(count)));
  running = n;
  for (int t = 0; t < n; ++t) {
    threads.emplace_back([&] {
      try {
        pg::Connection conn = pg::Connection::open(conninfo);
        conn.exec("SET synchronous_commit = off");
        conn.exec("SET maintenance_work_mem = '256MB'");
        for (std::size_t i = next++; i < count && !stop; i = next++) work(conn, i, stop);
      } catch (...) {
        std::lock_guard lock(mu);
        if (!failure) failure = std::current_exception();
        stop = true;
      }
      std::lock_guard lock(mu);
      --running;
      cv.notify_all();
    });
  }
  {
    std::unique_lock lock(mu);
    while (!cv.wait_for(lock, std::chrono::seconds(1), [&] { return running == 0; })) {
      lock.unlock();
      tick();
      lock.lock();
    }
  }
  for (auto& t : threads) t.join();
  if (failure) std::rethrow_exception(failure);
}

// Approximate COPY text bytes per row of each table, measured on a 100-warehouse load: the
// time estimate scales the elapsed time by the bytes still to come. (Rows alone would not do:
// the loader copies the wide STOCK and CUSTOMER rows first and the narrow ORDER-LINE rows
// last, so a row-based estimate starts more than twice too long.)
double row_bytes(Table table) {
  switch (table) {
    case Table::kItem:
      return 76;
    case Table::kWarehouse:
      return 90;
    case Table::kDistrict:
      return 96;
    case Table::kStock:
      return 306;
    case Table::kCustomer:
      return 576;
    case Table::kHistory:
      return 60;
    case Table::kOrders:
      return 42;
    case Table::kNewOrder:
      return 10;
    case Table::kOrderLine:
      return 68;
  }
  return 100;
}

// The bytes the copy phase will write, approximately; ORDER-LINE at its mean of 10 lines per
// order.
double planned_bytes(int warehouses) {
  double total = 0;
  for (const auto& info : table_infos()) {
    const std::int64_t n = expected_rows(info.table, warehouses);
    const std::int64_t rows =
        n >= 0 ? n
               : expected_rows(Table::kOrders, warehouses) * (kMinOrderLines + kMaxOrderLines) / 2;
    total += static_cast<double>(rows) * row_bytes(info.table);
  }
  return total;
}

std::string load_line(double secs, std::int64_t rows, std::int64_t bytes, double planned,
                      std::size_t done, std::size_t total) {
  char buf[200];
  const double mb = static_cast<double>(bytes) / 1e6;
  const double fraction = planned > 0 ? std::min(1.0, static_cast<double>(bytes) / planned) : 0;
  const std::string left =
      fraction > 0.01 ? "about " + format_latency_us(secs * (1 / fraction - 1) * 1e6) + " left"
                      : "estimating time left";
  std::snprintf(buf, sizeof buf,
                "tpcc-lite: load %6.1f s  %3.0f%%  %s rows  %.0f MB  %.1f MB/s  %zu/%zu tables  %s",
                secs, fraction * 100, format_count(static_cast<std::uint64_t>(rows)).c_str(), mb,
                secs > 0 ? mb / secs : 0.0, done, total, left.c_str());
  return buf;
}

std::string load_timestamp() {
  const std::time_t now = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&now, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%d %H:%M:%S", &tm);
  return buf;
}

}  // namespace

void load_database(const std::string& conninfo, const LoadOptions& options, Progress& progress) {
  const auto start = now_us();
  pg::Connection conn = pg::Connection::open(conninfo);
  conn.exec_all(table_ddls());

  // Largest tables first, so the last jobs to finish are small ones.
  std::vector<CopyJob> jobs;
  for (Table t : {Table::kStock, Table::kOrderLine, Table::kCustomer, Table::kItem, Table::kOrders,
                  Table::kHistory, Table::kNewOrder, Table::kDistrict, Table::kWarehouse}) {
    if (!table_info(t).per_warehouse) {
      jobs.push_back({t, 0});
      continue;
    }
    for (int w = 1; w <= options.warehouses; ++w) jobs.push_back({t, w});
  }

  const LoadContext ctx{.warehouses = options.warehouses, .now = load_timestamp()};
  std::atomic<std::int64_t> rows{0}, bytes{0};
  std::atomic<std::size_t> jobs_done{0};
  const double planned = planned_bytes(options.warehouses);
  run_parallel(
      conninfo, options.connections, jobs.size(),
      [&](pg::Connection& c, std::size_t i, const std::atomic<bool>& stop) {
        copy_table(c, jobs[i], ctx, rows, bytes, stop);
        ++jobs_done;
      },
      [&] {
        const double secs = static_cast<double>(now_us() - start) / 1e6;
        progress.update(load_line(secs, rows, bytes, planned, jobs_done, jobs.size()));
      });
  const double copy_secs = static_cast<double>(now_us() - start) / 1e6;
  progress.note("tpcc-lite: copied " + format_count(static_cast<std::uint64_t>(rows.load())) +
                " rows (" + format_size(static_cast<double>(bytes.load())) + ") in " +
                format_latency_us(copy_secs * 1e6));

  const auto index_start = now_us();
  // Keys and indexes first, then VACUUM (FREEZE, ANALYZE) as pgbench -i does: every clone of
  // the template starts with hint bits set, pages all-visible and statistics in place, so a
  // run's first minutes do not pay for rewriting freshly loaded pages, and its plans do not
  // depend on when autovacuum wakes up.
  std::vector<std::string> steps = index_ddls();
  const std::size_t index_steps = steps.size();
  for (const auto& info : table_infos())
    steps.push_back("VACUUM (FREEZE, ANALYZE) " + std::string(info.name));
  std::atomic<std::size_t> steps_done{0};
  // VACUUM must wait for its table's indexes (it would otherwise scan it twice); the steps are
  // handed out in order and the index steps are the first ones, so a VACUUM only starts
  // once every index build has at least started; waiting on the table lock does the rest.
  run_parallel(
      conninfo, options.connections, steps.size(),
      [&](pg::Connection& c, std::size_t i, const std::atomic<bool>&) {
        c.exec(steps[i]);
        ++steps_done;
      },
      [&] {
        const double secs = static_cast<double>(now_us() - index_start) / 1e6;
        const std::size_t done = steps_done.load();
        progress.update(
            "tpcc-lite: " +
            std::string(done < index_steps ? "keys and indexes" : "vacuum and analyze") + "  " +
            format_latency_us(secs * 1e6) + "  " + std::to_string(done) + "/" +
            std::to_string(steps.size()) + " steps");
      });
  // 3.3.2.11 holds only right after the initial load; the run's checks cannot test it.
  const CheckResult loaded = run_load_check(conn);
  if (!loaded.passed)
    throw RuntimeError("tpcc-lite: the loaded data fails " + loaded.clause + " (" +
                       loaded.description + "): " + loaded.detail);
  progress.note("tpcc-lite: keys, indexes, vacuum and statistics in " +
                format_latency_us(static_cast<double>(now_us() - index_start)) + " (total " +
                format_latency_us(static_cast<double>(now_us() - start)) + ")");
}

}  // namespace pgslow::workload::tpcc
