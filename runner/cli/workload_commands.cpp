// pgslow load | bench | check-data: load a workload's template, run it once with no knob
// changes (like pgbench), check its data.

#include <fmt/format.h>

#include <atomic>
#include <csignal>
#include <fstream>
#include <nlohmann/json.hpp>

#include "cli/commands.h"
#include "common/errors.h"
#include "common/paths.h"
#include "common/progress.h"
#include "common/strings.h"
#include "driver/driver.h"
#include "server/managed_cluster.h"
#include "workload/dataset.h"
#include "workload/registry.h"

namespace pgslow::cli {

namespace {

std::atomic<bool> g_stop{false};
extern "C" void on_interrupt(int) {
  g_stop.store(true);
}

// Where the workload runs: --conninfo, else the managed cluster (started if needed).
struct Target {
  std::string conninfo;
  std::unique_ptr<server::ManagedCluster> cluster;
};

Target open_target(Context& ctx, const std::string& conninfo) {
  Target t;
  if (!conninfo.empty()) {
    t.conninfo = conninfo;
    return t;
  }
  server::ManagedOptions opts;
  opts.workdir = ctx.workdir;
  opts.pg_bin = ctx.pg_bin;
  t.cluster = std::make_unique<server::ManagedCluster>(opts);
  t.cluster->start();
  t.conninfo = t.cluster->conninfo();
  return t;
}

struct WorkloadArgs {
  std::string workload;
  int scale = 0;  // 0: not given
  std::string conninfo;
  std::uint64_t seed = 1;
};

void add_workload_args(CLI::App* cmd, WorkloadArgs& a) {
  cmd->add_option("--workload,-w", a.workload, "workload name")->required();
  cmd->add_option("--scale,-s", a.scale,
                  "data size: pgbench scale, warehouses (tpcc-lite), 1,000 rows (update-spread)");
  cmd->add_option("--warehouses", a.scale, "tpcc-lite: an alias of --scale");
  cmd->add_option("--conninfo", a.conninfo,
                  "run on this server instead of the managed cluster (libpq conninfo)");
}

const workload::Workload& resolve(WorkloadArgs& a, workload::WorkloadParams& params,
                                  std::vector<ConfigError>& problems) {
  const workload::Workload& w = workload::find_workload(a.workload);
  params.scale = a.scale > 0 ? a.scale : 1;
  params.seed = a.seed;
  auto errs = w.validate(params);
  problems.insert(problems.end(), errs.begin(), errs.end());
  return w;
}

std::string us(double v) {
  return format_duration_us(v);
}

// An aligned table: first column left, the others right.
std::string render_table(const std::vector<std::vector<std::string>>& rows,
                         std::size_t left_columns = 1) {
  std::vector<std::size_t> width;
  for (const auto& r : rows) {
    width.resize(std::max(width.size(), r.size()), 0);
    for (std::size_t i = 0; i < r.size(); ++i) width[i] = std::max(width[i], r[i].size());
  }
  std::string out;
  for (const auto& r : rows) {
    std::string line;
    for (std::size_t i = 0; i < r.size(); ++i) {
      std::string_view sep = i == 0 ? "" : "  ";
      if (i < left_columns)
        line += fmt::format("{}{:<{}}", sep, r[i], width[i]);
      else
        line += fmt::format("{}{:>{}}", sep, r[i], width[i]);
    }
    out += trim(line) + "\n";
  }
  return out;
}

std::vector<std::string> tx_row(const std::string& name, std::uint64_t count, std::uint64_t rb,
                                std::uint64_t failed, std::uint64_t retries,
                                const report::LatencySummary& l) {
  return {name,
          format_count(count),
          format_count(rb),
          format_count(failed),
          format_count(retries),
          us(l.p50_us),
          us(l.p95_us),
          us(l.p99_us),
          us(l.p999_us),
          us(l.max_us)};
}

nlohmann::json latency_json(const report::LatencySummary& l) {
  return {{"mean_us", l.mean_us}, {"p50_us", l.p50_us},   {"p95_us", l.p95_us},
          {"p99_us", l.p99_us},   {"p999_us", l.p999_us}, {"max_us", l.max_us}};
}

nlohmann::json measurement_json(const report::Measurement& m) {
  nlohmann::json by_type = nlohmann::json::array();
  for (const auto& t : m.by_type) {
    by_type.push_back({{"name", t.name},
                       {"committed", t.committed},
                       {"rolled_back", t.rolled_back},
                       {"failed", t.failed},
                       {"retries", t.retries},
                       {"latency", latency_json(t.latency)}});
  }
  return {{"duration_s", m.duration_s},
          {"committed", m.committed},
          {"rolled_back", m.rolled_back},
          {"failed", m.failed},
          {"retries", m.retries},
          {"reconnects", m.reconnects},
          {"tps", m.tps},
          {"new_orders_per_min", m.new_orders_per_min},
          {"latency", latency_json(m.latency)},
          {"schedule_lag", latency_json(m.schedule_lag)},
          {"pool_wait", latency_json(m.pool_wait)},
          {"by_type", by_type},
          {"failures_by_class", m.failures_by_class},
          {"clients_requested", m.clients_requested},
          {"clients_connected", m.clients_connected},
          {"tps_per_second", m.tps_per_second}};
}

void print_result(const std::string& workload, const report::Measurement& m,
                  const driver::DriverOptions& o, std::uint64_t data_bytes, double reset_s) {
  std::vector<std::vector<std::string>> rows;
  rows.push_back({"transaction", "count", "rolled back", "failed", "retries", "p50", "p95", "p99",
                  "p99.9", "max"});
  for (const auto& t : m.by_type)
    rows.push_back(tx_row(t.name, t.committed + t.rolled_back + t.failed, t.rolled_back, t.failed,
                          t.retries, t.latency));
  if (m.by_type.size() > 1)
    rows.push_back(tx_row("total", m.committed + m.rolled_back + m.failed, m.rolled_back, m.failed,
                          m.retries, m.latency));
  std::string out = render_table(rows);
  out += fmt::format("\ntps {:.1f} ({} committed + rolled back in {:.1f} s, warm-up excluded)\n",
                     m.tps, format_count(m.committed + m.rolled_back), m.duration_s);
  if (workload == "tpcc-lite")
    out += fmt::format("NOPM {:.0f}  tpmC {:.0f}\n", m.new_orders_per_min, m.new_orders_per_min);
  if (o.rate > 0)
    out += fmt::format(
        "schedule lag  p50 {}  p99 {}  max {} (rate {:.0f}/s; latency includes it)\n",
        us(m.schedule_lag.p50_us), us(m.schedule_lag.p99_us), us(m.schedule_lag.max_us), o.rate);
  if (o.pool_size > 0)
    out += fmt::format("pool wait     p50 {}  p99 {}  max {} (pool of {}; latency includes it)\n",
                       us(m.pool_wait.p50_us), us(m.pool_wait.p99_us), us(m.pool_wait.max_us),
                       o.pool_size);
  for (const auto& [cls, n] : m.failures_by_class)
    out += fmt::format("failed ({}): {}\n", cls, format_count(n));
  if (m.reconnects > 0) out += fmt::format("reconnects {}\n", format_count(m.reconnects));
  if (m.clients_connected < m.clients_requested)
    out += fmt::format("clients connected {} of {} (the server refused the others)\n",
                       m.clients_connected, m.clients_requested);
  out += fmt::format("data size {}  reset {:.2f} s\n",
                     format_bytes(static_cast<double>(data_bytes)), reset_s);
  std::fputs(out.c_str(), stdout);
  std::fflush(stdout);
}

void throw_problems(std::vector<ConfigError> problems) {
  if (has_errors(problems)) throw InputError(std::move(problems));
}

}  // namespace

void add_workload_commands(CLI::App& app, Context& ctx) {
  // ---- load ----
  auto load_args = std::make_shared<WorkloadArgs>();
  auto force = std::make_shared<bool>(false);
  CLI::App* load = app.add_subcommand(
      "load", "load a workload's data into its template database (skipped when up to date)");
  add_workload_args(load, *load_args);
  load->add_flag("--force", *force, "reload even when the template is up to date");
  load->callback([&ctx, load_args, force] {
    before_command(ctx, "load");
    workload::WorkloadParams params;
    std::vector<ConfigError> problems;
    const workload::Workload& w = resolve(*load_args, params, problems);
    throw_problems(problems);
    Target t = open_target(ctx, load_args->conninfo);
    ConsoleProgress progress;
    workload::Dataset ds(t.conninfo, w, params);
    ds.load(progress, *force);
  });

  // ---- bench ----
  auto bench_args = std::make_shared<WorkloadArgs>();
  auto opts = std::make_shared<driver::DriverOptions>();
  auto json_file = std::make_shared<std::string>();
  auto no_reset = std::make_shared<bool>(false);
  opts->duration_s = 10;
  opts->warmup_s = 0;
  CLI::App* bench = app.add_subcommand(
      "bench", "run a workload once with no knob changes (like pgbench), from a fresh clone");
  add_workload_args(bench, *bench_args);
  bench->add_option("--clients,-c", opts->clients, "simulated clients")->capture_default_str();
  bench->add_option("--workers,-j", opts->workers, "driver threads (0: one per core)")
      ->capture_default_str();
  bench->add_option("--duration,-T", opts->duration_s, "measured seconds")->capture_default_str();
  bench->add_option("--warmup", opts->warmup_s, "seconds before measuring")->capture_default_str();
  bench
      ->add_option("--rate,-R", opts->rate,
                   "fixed rate in transactions per second (Poisson arrivals); 0: closed loop")
      ->capture_default_str();
  bench
      ->add_option("--pool-size", opts->pool_size,
                   "clients share this many connections (0: one per client)")
      ->capture_default_str();
  bench->add_flag("--connect-per-transaction,-C", opts->connect_per_transaction,
                  "open a new connection for every transaction (pgbench -C)");
  bench
      ->add_option("--max-tries", opts->max_tries,
                   "attempts per transaction on serialization failure or deadlock")
      ->capture_default_str();
  bench->add_flag("--allow-partial", opts->allow_partial,
                  "run with the clients that could connect when the server refuses some");
  bench->add_option("--seed", bench_args->seed, "random seed of the inputs")->capture_default_str();
  bench->add_option("--json", *json_file, "write the measurement as JSON to this file");
  bench->add_flag("--no-reset", *no_reset,
                  "run on the database --conninfo names as it is (e.g. tables `pgbench -i` made), "
                  "without a template clone");
  bench->callback([&ctx, bench_args, opts, json_file, no_reset] {
    before_command(ctx, "bench");
    workload::WorkloadParams params;
    std::vector<ConfigError> problems;
    const workload::Workload& w = resolve(*bench_args, params, problems);
    params.clients = opts->clients;
    auto derrs = driver::validate(*opts);
    for (auto& e : derrs) e.where.file = "command line";
    problems.insert(problems.end(), derrs.begin(), derrs.end());
    throw_problems(problems);
    opts->seed = bench_args->seed;

    if (*no_reset && bench_args->conninfo.empty())
      throw InputError("--no-reset needs --conninfo: the database to run on as it is");
    Target t = open_target(ctx, bench_args->conninfo);
    ConsoleProgress progress;
    workload::Dataset ds(t.conninfo, w, params);
    workload::ResetResult reset;
    if (*no_reset) {
      reset.conninfo = t.conninfo;
    } else {
      if (!ds.template_ready()) {
        progress.note(fmt::format("no template for {} at scale {} yet: loading it first", w.name(),
                                  params.scale));
        ds.load(progress);
      }
      reset = ds.reset();
      progress.note(fmt::format("reset {} from {} in {:.2f} s", ds.clone_name(), ds.template_name(),
                                reset.seconds));
    }

    g_stop.store(false);
    struct sigaction sa {};
    struct sigaction old_int {};
    struct sigaction old_term {};
    sa.sa_handler = on_interrupt;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, &old_int);
    sigaction(SIGTERM, &sa, &old_term);
    report::Measurement m;
    try {
      m = driver::run_workload(w, params, reset.conninfo, *opts, progress, &g_stop);
    } catch (...) {
      sigaction(SIGINT, &old_int, nullptr);
      sigaction(SIGTERM, &old_term, nullptr);
      throw;
    }
    sigaction(SIGINT, &old_int, nullptr);
    sigaction(SIGTERM, &old_term, nullptr);
    progress.note("");
    std::uint64_t bytes = 0;
    if (*no_reset) {
      pg::Connection c = pg::Connection::open(t.conninfo);
      auto v = c.query_value("SELECT pg_database_size(current_database())");
      bytes = v ? std::stoull(*v) : 0;
    } else {
      bytes = ds.data_bytes();
    }
    print_result(std::string(w.name()), m, *opts, bytes, reset.seconds);
    if (!json_file->empty()) {
      nlohmann::json j = measurement_json(m);
      j["workload"] = w.name();
      j["scale"] = params.scale;
      j["reset_seconds"] = reset.seconds;
      j["interrupted"] = g_stop.load();
      write_file_durably(*json_file, j.dump(2) + "\n");
    }
    if (g_stop.load()) throw Error(kExitInterrupted, "interrupted: the result above is partial");
  });

  // ---- check-data ----
  auto check_args = std::make_shared<WorkloadArgs>();
  CLI::App* check = app.add_subcommand(
      "check-data", "run a workload's consistency checks on its current clone (exit 1 on failure)");
  add_workload_args(check, *check_args);
  check->callback([&ctx, check_args] {
    before_command(ctx, "check-data");
    workload::WorkloadParams params;
    std::vector<ConfigError> problems;
    const workload::Workload& w = resolve(*check_args, params, problems);
    throw_problems(problems);
    Target t = open_target(ctx, check_args->conninfo);
    if (check_args->scale == 0) {
      // No --scale: the one clone of this workload there is.
      pg::Connection admin = pg::Connection::open(t.conninfo);
      std::string prefix = workload::clone_database_name(w.name(), 0);
      prefix.pop_back();  // "pgslow_<workload>_"
      pg::Result r = admin.exec_params(
          "SELECT datname FROM pg_database WHERE starts_with(datname, $1) ORDER BY datname",
          {prefix});
      std::vector<std::string> found;
      for (int i = 0; i < r.rows(); ++i) {
        std::string name(r.get(i, 0));
        std::string rest = name.substr(prefix.size());
        if (!rest.empty() && rest.find_first_not_of("0123456789") == std::string::npos) {
          found.push_back(name);
          params.scale = std::stoi(rest);
        }
      }
      if (found.empty())
        throw RuntimeError(
            fmt::format("no clone of {} to check: run `pgslow bench --workload {}` "
                        "first",
                        w.name(), w.name()));
      if (found.size() > 1)
        throw InputError(
            fmt::format("several clones of {} ({}): pass --scale", w.name(), join(found, ", ")));
    }
    workload::Dataset ds(t.conninfo, w, params);
    pg::Connection conn = pg::Connection::open(ds.clone_conninfo());
    auto results = w.check(conn, params);
    std::vector<std::vector<std::string>> rows;
    rows.push_back({"clause", "check", "result"});
    bool ok = true;
    for (const auto& c : results) {
      rows.push_back({c.clause, c.description, c.passed ? "ok" : "FAILED"});
      ok = ok && c.passed;
    }
    std::string out = render_table(rows, 3);
    for (const auto& c : results)
      if (!c.passed) out += fmt::format("{}: {}\n", c.clause, c.detail);
    std::fputs(out.c_str(), stdout);
    if (!ok) throw RuntimeError(fmt::format("consistency checks failed on {}", ds.clone_name()));
  });
}

}  // namespace pgslow::cli
