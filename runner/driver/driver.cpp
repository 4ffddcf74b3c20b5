#include "driver/driver.h"

#include <fmt/format.h>
#include <pthread.h>

#include <algorithm>
#include <memory>
#include <optional>
#include <thread>

#include "common/clock.h"
#include "common/format.h"
#include "common/log.h"
#include "common/process.h"
#include "common/strings.h"
#include "driver/worker.h"
#include "evidence/wait_sampler.h"

// The run: builds the workers, connects, starts the clock, collects the per-second progress
// and merges the workers' tallies into one Measurement after they stop.

namespace pgslow::driver {

namespace {

std::string progress_line(double elapsed_s, bool warmup, double tps, double p99_us,
                          std::uint64_t failed) {
  return fmt::format("{:5.1f} s{}  tps {:.0f}  p99 {}  failed {}", elapsed_s,
                     warmup ? " (warm-up)" : "", tps, format_latency_us(p99_us),
                     format_count(failed));
}

// The worker threads of one run. Joined on every path out of run_workload: an exception
// (a snapshot callback that lost its server, a refused connection) first tells the workers to
// stop, so no thread is left joinable (std::terminate) and no client keeps loading the server.
class WorkerThreads {
 public:
  explicit WorkerThreads(Shared& shared) : shared_(shared) {}
  ~WorkerThreads() { stop_and_join(); }
  WorkerThreads(const WorkerThreads&) = delete;
  WorkerThreads& operator=(const WorkerThreads&) = delete;

  void start(std::vector<std::unique_ptr<Worker>>& workers) {
    for (auto& w : workers) {
      Worker* worker = w.get();
      threads_.emplace_back([worker] {
        // Named so the evidence can tell the clients' CPU from the rest of pgslow's.
        ::pthread_setname_np(::pthread_self(), kClientThreadName);
        try {
          worker->run();
        } catch (...) {
          worker->fatal_ = std::current_exception();
        }
      });
    }
  }
  void join() {
    for (auto& t : threads_)
      if (t.joinable()) t.join();
  }
  void stop_and_join() {
    shared_.abort.store(true);
    std::int64_t unstarted = 0;
    if (shared_.start_us.compare_exchange_strong(unstarted, -1)) shared_.start_us.notify_all();
    join();
  }

 private:
  Shared& shared_;
  std::vector<std::thread> threads_;
};

}  // namespace

results::Measurement run_workload(const workload::Workload& workload,
                                  const workload::WorkloadParams& params,
                                  const std::string& conninfo, const DriverOptions& options,
                                  Progress& progress, const std::atomic<bool>* stop) {
  auto problems = validate(options, params.think_time);
  if (has_errors(problems)) throw InputError(std::move(problems));

  DriverOptions o = options;
  // From here on 0 is RetryPolicy::kUntilCommit, the workload's own choice.
  if (o.max_tries == 0) o.max_tries = std::max(0, workload.default_max_tries(params));
  int cores = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  int workers = o.workers > 0 ? o.workers : cores;
  workers = std::min(workers, o.clients);
  o.workers = workers;

  Shared shared(workers);
  shared.workload = &workload;
  shared.conninfo = conninfo;
  shared.options = o;
  shared.statements = workload.statements(params);
  shared.statement_set.protocol = o.protocol;
  for (const auto& st : shared.statements) shared.statement_set.defs[st.name] = st;
  std::vector<std::string> type_names = workload.transaction_types(params);
  shared.types = std::max<std::size_t>(1, type_names.size());
  shared.stop = stop;
  if (o.pool_size > 0) shared.pool = std::make_unique<SharedPool>(o.pool_size);
  if (o.on_poll && o.max_blocks > 0) {
    shared.max_blocks = o.max_blocks;
    shared.block_finished =
        std::make_unique<std::atomic<std::uint64_t>[]>(static_cast<std::size_t>(o.max_blocks));
  }
  const std::function<std::uint64_t(int)> block_count = [&shared](int b) {
    return b >= 0 && b < shared.max_blocks
               ? shared.block_finished[static_cast<std::size_t>(b)].load(std::memory_order_relaxed)
               : 0;
  };

  std::vector<std::unique_ptr<Worker>> ws;
  for (int i = 0; i < workers; ++i) ws.push_back(std::make_unique<Worker>(shared, i, workers));
  for (int i = 0; i < o.clients; ++i)
    ws[i % workers]->add_client(workload.make_client(params, i), i);

  // The workload's probe (TPC-C: sum(D_NEXT_O_ID)) on a connection of its own, read as the
  // window starts and ends, each read timed: the workers judge each commit of the probe's type
  // against the reads (Worker::count_probe), so the probe's rise has an exact bound. A probe
  // that fails is an error of the cross-check (RunCounts::probe_error), not of the run. It
  // connects before the clients, as the other evidence connections do (clients taking every
  // slot cannot starve it), and by its name the wait sampler leaves it out.
  const std::string probe_sql = workload.window_probe_sql();
  shared.probe_type = probe_sql.empty() ? -1 : workload.window_probe_type();
  std::optional<pg::Connection> probe_conn;
  std::string probe_error;
  struct ProbeRead {
    double value = 0;
    std::int64_t began = 0, ended = 0;
  };
  std::optional<ProbeRead> probe_start, probe_end;
  auto read_probe = [&]() -> std::optional<ProbeRead> {
    if (!probe_conn) return std::nullopt;
    ProbeRead r;
    try {
      r.began = now_us();
      const auto v = probe_conn->query_value(probe_sql);
      r.ended = now_us();
      if (!v) throw RuntimeError("it returned no value");
      r.value = std::stod(*v);
      return r;
    } catch (const std::exception& e) {
      probe_error = fmt::format("the probe `{}` failed: {}", probe_sql, e.what());
      spdlog::warn("{}", probe_error);
      probe_conn.reset();
      return std::nullopt;
    }
  };
  if (!probe_sql.empty()) {
    try {
      probe_conn = pg::Connection::open(conninfo);
      evidence::name_evidence_connection(*probe_conn);
    } catch (const std::exception& e) {
      probe_error = fmt::format("no connection for the probe: {}", e.what());
      spdlog::warn("{}", probe_error);
    }
  }

  progress.update(fmt::format("connecting {} {}", o.pool_size > 0 ? o.pool_size : o.clients,
                              o.pool_size > 0 ? "pool connections" : "clients"));
  WorkerThreads threads(shared);
  threads.start(ws);
  shared.connected.wait();

  int connected = 0, refused = 0;
  std::optional<pg::Error> first_error;
  for (auto& w : ws) {
    connected += w->connected_;
    refused += w->refused_;
    if (!first_error && w->connect_error_) first_error = w->connect_error_;
  }
  const int wanted = o.pool_size > 0 ? o.pool_size : o.clients;
  const char* what = o.pool_size > 0 ? "pool connections" : "clients";
  if (refused > 0) {
    bool too_many =
        first_error && first_error->error_class() == pg::ErrorClass::kTooManyConnections;
    std::string reason = first_error ? first_error->server_message() : "unknown";
    if (connected == 0 || !too_many || !o.allow_partial) {
      threads.stop_and_join();
      if (too_many) {
        throw RuntimeError(fmt::format(
            "{} of {} {} could not connect: the server refused them (too many clients, "
            "SQLSTATE 53300). Raise max_connections on the server or lower --clients{}, or "
            "pass --allow-partial to run with the {} that connected.",
            refused, wanted, what, o.pool_size > 0 ? " / --pool-size" : "", connected));
      }
      throw RuntimeError(
          fmt::format("{} of {} {} could not connect: {}", refused, wanted, what, reason));
    }
    spdlog::warn("{} of {} {} could not connect (too many clients); running with {}", refused,
                 wanted, what, connected);
  }

  if (o.on_connected) {
    // The workers wait for the start signal: their pid lists are complete and not written.
    std::vector<int> pids;
    for (auto& w : ws) pids.insert(pids.end(), w->backend_pids_.begin(), w->backend_pids_.end());
    o.on_connected(pids);
  }

  const std::int64_t t0 = now_us();
  shared.start_us.store(t0);
  shared.start_us.notify_all();
  const std::int64_t measure_start = t0 + static_cast<std::int64_t>(o.warmup_s * 1e6);

  // Progress: collect what the workers published, once a second.
  results::Measurement m;
  Histogram second;
  std::uint64_t failed_total = 0;
  std::uint64_t failed_before = 0;
  // Failures of the warm-up: the line shows them while warming up, then counts again from the
  // measured window, as the report does (a warm-up failure is not in the report's count).
  std::uint64_t failed_in_warmup = 0;
  std::int64_t last = t0;
  std::int64_t next_tick = t0 + 1'000'000;
  const std::int64_t window_end_planned =
      measure_start + static_cast<std::int64_t>(o.duration_s * 1e6);
  bool measure_started = false;
  bool ended_early = false;  // a stop or on_poll: the workers judged no commit near the end
  for (;;) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    std::int64_t now = now_us();
    bool stop_now = stop && stop->load();
    if (!measure_started && now >= measure_start) {
      measure_started = true;
      probe_start = read_probe();
      if (probe_start) {
        shared.probe_read_start.store(probe_start->began, std::memory_order_relaxed);
        shared.probe_read_end.store(probe_start->ended, std::memory_order_release);
      }
      if (o.on_measure_start) o.on_measure_start();
      // The hooks' queries can take a second on a saturated server, while the clients go on:
      // the next tick divides what they published by the time that really passed (a stale
      // clock made one second read twice the TPS and the next zero).
      now = now_us();
    }
    bool end_now = false;
    if (measure_started && shared.max_blocks > 0 && !stop_now) {
      const int b = o.on_poll(static_cast<double>(now - measure_start) / 1e6, block_count);
      if (b == kEndWindow) {
        end_now = true;
        shared.block.store(-1);
      } else {
        shared.block.store(b < shared.max_blocks ? b : -1);
      }
    }
    if (now >= next_tick || stop_now) {
      second.clear();
      for (auto& w : ws) {
        std::lock_guard lock(w->published_.mu);
        second.merge(w->published_.interval);
        failed_total += w->published_.failed;
        w->published_.interval.clear();
        w->published_.failed = 0;
      }
      double secs = static_cast<double>(now - last) / 1e6;
      double tps = secs > 0 ? static_cast<double>(second.count()) / secs : 0;
      if (now > measure_start && !stop_now) {
        m.tps_per_second.push_back(tps);
        m.p99_per_second.push_back(second.percentile(0.99));
      }
      const bool warming_up = now <= measure_start;
      if (warming_up) failed_in_warmup = failed_total;
      progress.update(progress_line(static_cast<double>(now - t0) / 1e6, warming_up, tps,
                                    second.percentile(0.99),
                                    warming_up ? failed_total : failed_total - failed_in_warmup));
      ProgressTick tick;
      tick.elapsed_s = static_cast<double>(now - t0) / 1e6;
      tick.warmup = now <= measure_start;
      tick.tps = tps;
      tick.p50_us = second.percentile(0.50);
      tick.p99_us = second.percentile(0.99);
      tick.failed_per_s = secs > 0 ? static_cast<double>(failed_total - failed_before) / secs : 0;
      failed_before = failed_total;
      progress.tick(tick);
      last = now;
      next_tick += 1'000'000;
      if (next_tick <= now) next_tick = now + 1'000'000;
    }
    // Threads finish shortly after the window ends (or after the stop flag).
    if (now >= window_end_planned) break;
    if (stop_now || end_now) ended_early = true;
    if (stop_now) break;
    if (end_now) {
      // The workers close the window at the moment they see it: a shorter one.
      shared.end_early.store(true);
      break;
    }
  }
  if (measure_started) probe_end = read_probe();
  if (measure_started && o.on_measure_end) o.on_measure_end();
  threads.join();

  std::exception_ptr fatal;
  std::vector<Tally> tallies(shared.types);
  Histogram lag, pool_wait, connect_time;
  std::vector<Histogram> block_latency(static_cast<std::size_t>(shared.max_blocks));
  std::uint64_t block_failed[2] = {0, 0};
  std::int64_t window_end = 0;
  for (auto& w : ws) {
    if (w->fatal_ && !fatal) fatal = w->fatal_;
    for (std::size_t i = 0; i < shared.types; ++i) tallies[i].merge(w->tallies_[i]);
    lag.merge(w->schedule_lag_);
    for (std::size_t b = 0; b < block_latency.size(); ++b)
      block_latency[b].merge(w->block_latency_[b]);
    for (int p = 0; p < 2; ++p) block_failed[p] += w->block_failed_[p];
    pool_wait.merge(w->pool_wait_);
    connect_time.merge(w->connect_time_);
    m.reconnects += w->reconnects_;
    m.in_flight_at_end += w->in_flight_at_end_;
    m.in_flight_longest_us =
        std::max(m.in_flight_longest_us, static_cast<double>(w->in_flight_longest_us_));
    window_end = std::max(window_end, w->window_end_);
  }
  if (fatal) std::rethrow_exception(fatal);

  Tally total;
  for (std::size_t i = 0; i < shared.types; ++i) {
    total.merge(tallies[i]);
    std::string name = i < type_names.size() ? type_names[i] : std::string(workload.name());
    m.by_type.push_back(tallies[i].result(name));
  }
  m.duration_s = std::max(0.0, static_cast<double>(window_end - measure_start) / 1e6);
  m.committed = total.committed;
  m.rolled_back = total.rolled_back;
  m.failed = total.failed;
  m.retries = total.retries;
  m.tps = m.duration_s > 0 ? static_cast<double>(m.committed + m.rolled_back) / m.duration_s : 0;
  // The workload's own figures (tpmC, ...): the driver knows no workload by name.
  workload::RunCounts run;
  run.duration_s = m.duration_s;
  run.clients = o.pool_size > 0 ? o.clients : connected;
  run.scale = params.scale;
  run.think_time = params.think_time && o.rate <= 0;  // waited only in the closed loop
  run.max_tries = o.max_tries;
  run.by_type = m.by_type;
  if (probe_start && probe_end && !ended_early) {
    run.probe_delta = probe_end->value - probe_start->value;
    for (auto& w : ws) {
      run.probe_sure += w->probe_sure_;
      run.probe_in_flight += w->probe_in_flight_;
      for (const auto& [began, ended] : w->probe_pending_) {
        if (ended <= probe_start->began || began >= probe_end->ended) continue;  // outside
        if (began >= probe_start->ended && ended <= probe_end->began)
          ++run.probe_sure;
        else
          ++run.probe_in_flight;
      }
    }
  } else if (!probe_sql.empty()) {
    run.probe_error = ended_early ? "the window ended early (a stop or a switchback's end): "
                                    "the reads were not where the workers expected them"
                                  : probe_error;
  }
  run.in_flight_by_type.assign(shared.types, 0);
  for (auto& w : ws) {
    for (std::size_t i = 0; i < w->in_flight_by_type_.size() && i < shared.types; ++i)
      run.in_flight_by_type[i] += w->in_flight_by_type_[i];
    run.keying_asked_s += static_cast<double>(w->keying_asked_us_) / 1e6;
    run.keying_waited_s += static_cast<double>(w->keying_waited_us_) / 1e6;
    run.think_asked_s += static_cast<double>(w->think_asked_us_) / 1e6;
    run.think_waited_s += static_cast<double>(w->think_waited_us_) / 1e6;
  }
  // Whole minutes of the window only: a last partial minute is no rate.
  const auto whole_minutes = static_cast<std::size_t>(m.duration_s / 60);
  run.per_minute.assign(whole_minutes, std::vector<std::uint64_t>(shared.types, 0));
  for (auto& w : ws)
    for (std::size_t k = 0; k < whole_minutes && k < w->per_minute_.size(); ++k)
      for (std::size_t i = 0; i < w->per_minute_[k].size() && i < shared.types; ++i)
        run.per_minute[k][i] += w->per_minute_[k][i];
  run.counters.assign(workload.counter_names().size(), 0);
  for (auto& w : ws)
    for (std::size_t i = 0; i < run.counters.size() && i < w->counters_.size(); ++i)
      run.counters[i] += w->counters_[i];
  m.headline = workload.headline(run);
  m.audit = workload.audit(run);
  m.latency = total.latency.summary();
  if (o.rate > 0) m.schedule_lag = lag.summary();
  if (o.pool_size > 0) m.pool_wait = pool_wait.summary();
  m.connect_time = connect_time.summary();
  if (o.rate > 0 && lag.count() > 0) {
    std::uint64_t on_time = 0;
    for (auto& w : ws) on_time += w->on_time_;
    m.on_time_ratio = static_cast<double>(on_time) / static_cast<double>(lag.count());
  }
  m.connections_refused = refused;
  total.add_failures_to(m.failures_by_class);
  m.clients_requested = o.clients;
  m.clients_connected = o.pool_size > 0 ? (connected > 0 ? o.clients : 0) : connected;
  if (o.blocks != nullptr && shared.max_blocks > 0) {
    BlockTallies& t = *o.blocks;
    t.finished.clear();
    t.block_latency.clear();
    Histogram config_latency[2];  // even blocks run the reference, odd ones the stage
    for (int b = 0; b < shared.max_blocks; ++b) {
      t.finished.push_back(block_count(b));
      const Histogram& h = block_latency[static_cast<std::size_t>(b)];
      t.block_latency.push_back(h.summary());
      config_latency[b & 1].merge(h);
    }
    for (int p = 0; p < 2; ++p) {
      t.latency[p] = config_latency[p].summary();
      t.counted[p] = config_latency[p].count();
      t.failed[p] = block_failed[p];
    }
  }
  return m;
}

}  // namespace pgslow::driver
