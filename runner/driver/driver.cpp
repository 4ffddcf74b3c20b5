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

// The options as the run uses them: the workload's retry default, the worker count.
DriverOptions effective_options(const workload::Workload& workload,
                                const workload::WorkloadParams& params, DriverOptions o) {
  // From here on 0 is RetryPolicy::kUntilCommit, the workload's own choice.
  if (o.max_tries == 0) o.max_tries = std::max(0, workload.default_max_tries(params));
  const int cores = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  o.workers = std::min(o.workers > 0 ? o.workers : cores, o.clients);
  return o;
}

// The run's settings and cross-thread state, before the workers start.
void set_up_shared(Shared& shared, const workload::Workload& workload,
                   const workload::WorkloadParams& params, const std::string& conninfo,
                   const DriverOptions& o, std::size_t types, const std::atomic<bool>* stop) {
  shared.workload = &workload;
  shared.conninfo = conninfo;
  shared.options = o;
  shared.statements = workload.statements(params);
  shared.statement_set.protocol = o.protocol;
  for (const auto& st : shared.statements) shared.statement_set.defs[st.name] = st;
  shared.types = types;
  shared.stop = stop;
  if (o.pool_size > 0) shared.pool = std::make_unique<SharedPool>(o.pool_size);
  if (o.active_clients) {
    shared.active_clients.store(o.active_clients());
    shared.client_runs = std::make_unique<std::atomic<std::uint8_t>[]>(
        static_cast<std::size_t>(o.clients));  // value-initialised: Shared::kNoLoop
  }
  if (o.on_poll && o.max_blocks > 0) {
    shared.max_blocks = o.max_blocks;
    shared.block_finished =
        std::make_unique<std::atomic<std::uint64_t>[]>(static_cast<std::size_t>(o.max_blocks));
  }
}

// The workers, and the clients dealt to them in turn.
std::vector<std::unique_ptr<Worker>> make_workers(Shared& shared,
                                                  const workload::Workload& workload,
                                                  const workload::WorkloadParams& params,
                                                  const DriverOptions& o) {
  std::vector<std::unique_ptr<Worker>> ws;
  for (int i = 0; i < o.workers; ++i) ws.push_back(std::make_unique<Worker>(shared, i, o.workers));
  for (int i = 0; i < o.clients; ++i)
    ws[i % o.workers]->add_client(workload.make_client(params, i), i);
  return ws;
}

// The workload's probe (TPC-C: sum(D_NEXT_O_ID)) on a connection of its own, read as the
// window starts and ends, each read timed: the workers judge each commit of the probe's type
// against the reads (Accounts::record_probe_commit), so the probe's rise has an exact bound. A
// probe that fails is an error of the cross-check (RunCounts::probe_error), not of the run. It
// connects before the clients, as the other evidence connections do (clients taking every
// slot cannot starve it), and by its name the wait sampler leaves it out.
class WindowProbe {
 public:
  WindowProbe(std::string sql, const std::string& conninfo) : sql_(std::move(sql)) {
    if (sql_.empty()) return;
    try {
      conn_ = pg::Connection::open(conninfo);
      evidence::name_evidence_connection(*conn_);
    } catch (const std::exception& e) {
      error_ = fmt::format("no connection for the probe: {}", e.what());
      spdlog::warn("{}", error_);
    }
  }
  bool wanted() const { return !sql_.empty(); }
  // As the window starts: the workers judge against this read from now on.
  void read_first(Shared& shared) {
    first_ = read();
    if (!first_) return;
    shared.probe_read_start.store(first_->began, std::memory_order_relaxed);
    shared.probe_read_end.store(first_->ended, std::memory_order_release);
  }
  void read_last() { last_ = read(); }
  // The probe's rise and its bound into `run`, or why there is none. A probe that failed on a
  // window that ran to its end is an error: the run's figures would go unchecked.
  void add_to(const Accounts& merged, bool ended_early, workload::RunCounts& run) const {
    if (first_ && last_ && !ended_early) {
      run.probe_delta = last_->value - first_->value;
      judge_pending_probes(merged, *first_, *last_, run);
    } else if (wanted()) {
      if (!ended_early)
        throw RuntimeError(fmt::format("the run's figures cannot be cross-checked: {}", error_));
      run.probe_error =
          "the window ended early (a stop or a switchback's end): the reads were not where the "
          "workers expected them";
    }
  }

 private:
  std::optional<ProbeRead> read() {
    if (!conn_) return std::nullopt;
    ProbeRead r;
    try {
      r.began = now_us();
      const auto v = conn_->query_value(sql_);
      r.ended = now_us();
      if (!v) throw RuntimeError("it returned no value");
      r.value = std::stod(*v);
      return r;
    } catch (const std::exception& e) {
      error_ = fmt::format("the probe `{}` failed: {}", sql_, e.what());
      spdlog::warn("{}", error_);
      conn_.reset();
      return std::nullopt;
    }
  }

  std::string sql_;
  std::optional<pg::Connection> conn_;
  std::string error_;
  std::optional<ProbeRead> first_, last_;
};

struct Connected {
  int connected = 0;
  int refused = 0;
};

// How many clients (or pool connections) connected. Throws, after stopping the workers, when
// the server refused some and the run may not go on without them.
Connected check_connections(const std::vector<std::unique_ptr<Worker>>& ws, const DriverOptions& o,
                            WorkerThreads& threads) {
  Connected c;
  std::optional<pg::Error> first_error;
  for (const auto& w : ws) {
    c.connected += w->connected_;
    c.refused += w->refused_;
    if (!first_error && w->connect_error_) first_error = w->connect_error_;
  }
  if (c.refused == 0) return c;
  const int wanted = o.pool_size > 0 ? o.pool_size : o.clients;
  const char* what = o.pool_size > 0 ? "pool connections" : "clients";
  const bool too_many =
      first_error && first_error->error_class() == pg::ErrorClass::kTooManyConnections;
  const std::string reason = first_error ? first_error->server_message() : "unknown";
  if (c.connected == 0 || !too_many || !o.allow_partial) {
    threads.stop_and_join();
    if (too_many) {
      throw RuntimeError(fmt::format(
          "{} of {} {} could not connect: the server refused them (too many clients, "
          "SQLSTATE 53300). Raise max_connections on the server or lower --clients{}, or "
          "pass --allow-partial to run with the {} that connected.",
          c.refused, wanted, what, o.pool_size > 0 ? " / --pool-size" : "", c.connected));
    }
    throw RuntimeError(
        fmt::format("{} of {} {} could not connect: {}", c.refused, wanted, what, reason));
  }
  spdlog::warn("{} of {} {} could not connect (too many clients); running with {}", c.refused,
               wanted, what, c.connected);
  return c;
}

// What the controlling thread saw of the window.
struct Watched {
  bool measure_started = false;
  bool ended_early = false;  // a stop or on_poll: the workers judged no commit near the end
};

// The controlling thread during the run, every 50 ms: starts the window (the probe's first
// read, on_measure_start), polls a switchback, collects what the workers published once a
// second into the series and the progress line, and ends the window (the planned end, a
// stop, on_poll's kEndWindow).
Watched watch_window(Shared& shared, std::vector<std::unique_ptr<Worker>>& ws,
                     const DriverOptions& o, std::int64_t t0, WindowProbe& probe,
                     SecondSeries& series, Progress& progress, const std::atomic<bool>* stop) {
  const std::int64_t measure_start = t0 + static_cast<std::int64_t>(o.warmup_s * 1e6);
  const std::int64_t window_end_planned =
      measure_start + static_cast<std::int64_t>(o.duration_s * 1e6);
  BlockReader blocks;
  blocks.finished = [&shared](int b) {
    return b >= 0 && b < shared.max_blocks
               ? shared.block_finished[static_cast<std::size_t>(b)].load(std::memory_order_relaxed)
               : 0;
  };
  blocks.latency = [&shared, &ws](int b,
                                  std::int64_t since_us) -> std::optional<results::LatencySummary> {
    if (b < 0 || b >= shared.max_blocks) return std::nullopt;
    Histogram h;
    for (auto& w : ws) {
      std::lock_guard lock(w->published_.mu);
      if (w->published_.at < since_us) return std::nullopt;
      h.merge(w->published_.blocks[static_cast<std::size_t>(b)]);
    }
    return h.summary();
  };
  if (o.active_clients) blocks.clients_settled = [&shared] { return shared.clients_settled(); };
  Watched watched;
  Histogram second;
  std::uint64_t failed_total = 0;
  std::int64_t next_tick = t0 + 1'000'000;
  for (;;) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    std::int64_t now = now_us();
    const bool stop_now = (stop && stop->load()) || shared.fatal.load();
    if (!watched.measure_started && now >= measure_start) {
      watched.measure_started = true;
      probe.read_first(shared);
      if (o.on_measure_start) o.on_measure_start();
      // The hooks' queries can take a second on a saturated server, while the clients go on:
      // the next tick divides what they published by the time that really passed (a stale
      // clock made one second read twice the TPS and the next zero).
      now = now_us();
    }
    bool end_now = false;
    if (watched.measure_started && shared.max_blocks > 0 && !stop_now) {
      const int b = o.on_poll(static_cast<double>(now - measure_start) / 1e6, blocks);
      end_now = b == kEndWindow;
      shared.block.store(!end_now && b < shared.max_blocks ? b : -1);
      if (o.active_clients) shared.active_clients.store(o.active_clients());
      // A switch (a reload, PgBouncer's pool settling) can take a second: the tick divides by
      // the time that really passed, as after on_measure_start.
      now = now_us();
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
      SecondSeries::Second s = series.tick(now, second, failed_total, stop_now);
      s.tick.failed = s.failed_shown;
      progress.tick(s.tick);  // the console's line, the dashboard's chart
      next_tick += 1'000'000;
      if (next_tick <= now) next_tick = now + 1'000'000;
    }
    // Threads finish shortly after the window ends (or after the stop flag).
    if (now >= window_end_planned) break;
    if (stop_now || end_now) watched.ended_early = true;
    if (stop_now) break;
    if (end_now) {
      // The workers close the window at the moment they see it: a shorter one.
      shared.end_early.store(true);
      break;
    }
  }
  return watched;
}

// The workers' accounts merged, after join; rethrows the first worker's fatal error.
Accounts merge_accounts(const std::vector<std::unique_ptr<Worker>>& ws,
                        const AccountsShape& shape) {
  Accounts merged(shape);
  for (const auto& w : ws)
    if (w->fatal_) std::rethrow_exception(w->fatal_);
  for (const auto& w : ws) merged.merge(w->accounts_);
  return merged;
}

}  // namespace

results::Measurement run_workload(const workload::Workload& workload,
                                  const workload::WorkloadParams& params,
                                  const std::string& conninfo, const DriverOptions& options,
                                  Progress& progress, const std::atomic<bool>* stop) {
  auto problems = validate(options, params.think_time);
  if (has_errors(problems)) throw InputError(std::move(problems));
  const DriverOptions o = effective_options(workload, params, options);
  const std::vector<std::string> type_names = workload.transaction_types(params);
  Shared shared(o.workers);
  set_up_shared(shared, workload, params, conninfo, o, std::max<std::size_t>(1, type_names.size()),
                stop);
  std::vector<std::unique_ptr<Worker>> ws = make_workers(shared, workload, params, o);
  const std::string probe_sql = workload.window_probe_sql();
  shared.probe_type = probe_sql.empty() ? -1 : workload.window_probe_type();
  WindowProbe probe(probe_sql, conninfo);

  progress.update(fmt::format("connecting {} {}", o.pool_size > 0 ? o.pool_size : o.clients,
                              o.pool_size > 0 ? "pool connections" : "clients"));
  WorkerThreads threads(shared);
  threads.start(ws);
  shared.connected.wait();
  const Connected connected = check_connections(ws, o, threads);
  if (o.on_connected) {
    // The workers wait for the start signal: their pid lists are complete and not written.
    std::vector<int> pids;
    for (auto& w : ws) pids.insert(pids.end(), w->backend_pids_.begin(), w->backend_pids_.end());
    o.on_connected(pids);
  }

  const std::int64_t t0 = now_us();
  shared.start_us.store(t0);
  shared.start_us.notify_all();
  RunFacts facts;
  facts.measure_start = t0 + static_cast<std::int64_t>(o.warmup_s * 1e6);
  SecondSeries series(t0, facts.measure_start);
  const Watched watched = watch_window(shared, ws, o, t0, probe, series, progress, stop);
  if (watched.measure_started) probe.read_last();
  if (watched.measure_started && o.on_measure_end) o.on_measure_end();
  threads.join();

  const Accounts merged = merge_accounts(ws, accounts_shape(shared));
  facts.type_names = type_names;
  facts.workload_name = std::string(workload.name());
  facts.fixed_rate = o.rate > 0;
  facts.pooled = o.pool_size > 0;
  facts.clients = o.clients;
  facts.connected = connected.connected;
  facts.refused = connected.refused;
  results::Measurement m = measurement_of(merged, facts);
  m.tps_per_second = series.tps_per_second;
  m.p99_per_second = series.p99_per_second;
  // The workload's own figures (tpmC, ...): the driver knows no workload by name.
  workload::RunCounts run;
  add_run_counts(merged, m, workload.counter_names().size(), run);
  run.clients = o.pool_size > 0 ? o.clients : connected.connected;
  run.scale = params.scale;
  run.think_time = params.think_time && o.rate <= 0;  // waited only in the closed loop
  run.max_tries = o.max_tries;
  run.options = params.options;
  probe.add_to(merged, watched.ended_early, run);
  m.headline = workload.headline(run);
  m.audit = workload.audit(run);
  if (o.blocks != nullptr && shared.max_blocks > 0) *o.blocks = block_tallies(merged);
  return m;
}

}  // namespace pgslow::driver
