#include "scenario/run.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>
#include <sys/sysinfo.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <ctime>
#include <thread>

#include "apply/interrupt.h"
#include "common/clock.h"
#include "common/strings.h"
#include "driver/driver.h"
#include "evidence/evidence.h"
#include "pg/connection.h"
#include "server/server_log.h"
#include "workload/registry.h"

namespace pgslow::scenario {

namespace fs = std::filesystem;

double stage_tps(const report::StageResult& stage) {
  if (stage.repeats.empty()) return 0;
  std::vector<double> tps;
  for (const auto& m : stage.repeats) tps.push_back(m.tps);
  std::sort(tps.begin(), tps.end());
  std::size_t n = tps.size();
  return n % 2 == 1 ? tps[n / 2] : (tps[n / 2 - 1] + tps[n / 2]) / 2;
}

report::Machine this_machine() {
  report::Machine m;
  m.cores = static_cast<int>(std::thread::hardware_concurrency());
  struct sysinfo si {};
  if (sysinfo(&si) == 0) m.memory_bytes = static_cast<std::uint64_t>(si.totalram) * si.mem_unit;
  struct utsname u {};
  if (uname(&u) == 0) {
    m.kernel = fmt::format("{} {}", u.sysname, u.release);
    m.hostname = u.nodename;
  }
  return m;
}

namespace {

std::uintmax_t log_offset_now(const std::optional<fs::path>& log) {
  return log ? server::log_size(*log) : 0;
}

// The server log lines written since `offset`, the last `max_lines` of them: the stage's
// excerpt in the results folder.
std::string log_since(const std::optional<fs::path>& log, std::uintmax_t offset,
                      std::size_t max_lines = 200) {
  if (!log) return {};
  std::vector<std::string> lines = split(server::read_log_since(*log, offset), '\n');
  if (!lines.empty() && lines.back().empty()) lines.pop_back();
  std::string out;
  std::size_t first = lines.size() > max_lines ? lines.size() - max_lines : 0;
  if (first > 0) out += fmt::format("... {} earlier lines left out\n", first);
  for (std::size_t i = first; i < lines.size(); ++i) out += lines[i] + "\n";
  return out;
}

}  // namespace

StageExecutor::StageExecutor(server::ServerControl& server, apply::Applier& applier,
                             const workload::Workload& workload, workload::WorkloadParams params,
                             workload::Dataset& dataset, MeasureOptions options, Progress& progress)
    : server_(server),
      applier_(applier),
      workload_(workload),
      params_(std::move(params)),
      dataset_(dataset),
      options_(options),
      progress_(progress) {}

report::Measurement StageExecutor::measure_once(const report::LoadSettings& load,
                                                report::StageResult& stage) {
  workload::ResetResult reset = dataset_.reset();
  stage.reset_seconds += reset.seconds;

  driver::DriverOptions d;
  d.clients = load.clients > 0 ? load.clients : params_.clients;
  d.workers = options_.workers;
  d.warmup_s = options_.warmup_s;
  d.duration_s = options_.duration_s;
  d.rate = load.rate;
  d.pool_size = load.pool_size;
  d.connect_per_transaction = load.connect_per_transaction;
  d.max_tries = options_.max_tries;
  d.allow_partial = options_.allow_partial;
  d.seed = params_.seed;
  workload::WorkloadParams params = params_;
  params.clients = d.clients;

  // Evidence covers the measured window only: snapshots at the end of the warm-up and at the
  // end of the run, on a connection of their own.
  pg::Connection probe = pg::Connection::open(reset.conninfo);
  evidence::LockWaitSampler lock_waits(reset.conninfo, dataset_.clone_name());
  evidence::SnapshotOptions snap_options;
  snap_options.database = dataset_.clone_name();
  snap_options.data_dir = server_.data_dir();
  snap_options.log_file = server_.log_file();
  snap_options.lock_waits = &lock_waits;
  std::optional<evidence::Snapshot> before;
  std::optional<evidence::Snapshot> after;
  d.on_measure_start = [&] {
    lock_waits.start();
    before = evidence::take_snapshot(probe, snap_options);
  };
  d.on_measure_end = [&] {
    after = evidence::take_snapshot(probe, snap_options);
    lock_waits.stop();
  };

  // Test-only fault injection (docs/journal.md): a workload running on a changed server.
  if (applier_.has_changes()) apply::crash_point(apply::phase::kWorkload);
  report::Measurement m = driver::run_workload(workload_, params, reset.conninfo, d, progress_,
                                               apply::InterruptGuard::stop_flag());
  lock_waits.stop();
  if (!before || !after) {
    last_evidence_.clear();  // stopped before the measured window began
    return m;
  }
  last_evidence_ = evidence::delta(*before, *after);
  // The client's side of the evidence (docs/evidence.md): same keys as the catalog's `watch`.
  last_evidence_["tps"] = m.tps;
  last_evidence_["latency_p99"] = m.latency.p99_us;
  if (load.rate > 0) last_evidence_["schedule_lag"] = m.schedule_lag.p99_us;
  if (load.pool_size > 0) last_evidence_["pool_wait"] = m.pool_wait.p99_us;
  last_evidence_["connections_refused"] = m.clients_requested - m.clients_connected;
  return m;
}

report::StageResult StageExecutor::run_stage(const std::string& name,
                                             const std::vector<knobs::Setting>& settings,
                                             const report::LoadSettings& load) {
  report::StageResult stage;
  stage.name = name;
  stage.load = load;
  if (stage.load.clients == 0) stage.load.clients = params_.clients;
  stage.load.workers = options_.workers;
  const std::uintmax_t log_offset = log_offset_now(server_.log_file());
  try {
    apply::ApplyResult applied = applier_.apply(settings, apply::Operation::kRun, {name, {}, {}});
    stage.changes = applied.knob_changes();
    stage.skipped = applied.skipped;
    stage.warnings = applied.warnings;
  } catch (const apply::Interrupted&) {
    throw;
  } catch (const InputError&) {
    throw;
  } catch (const RuntimeError& e) {
    // The server rejected the configuration; the applier put the original back.
    stage.error = e.what();
    stage.log_excerpt = log_since(server_.log_file(), log_offset);
    return stage;
  }

  std::vector<std::map<std::string, double>> evidence_per_repeat;
  for (int i = 0; i < options_.repeats; ++i) {
    if (options_.repeats > 1) progress_.note(fmt::format("  repeat {} of {}", i + 1, options_.repeats));
    try {
      stage.repeats.push_back(measure_once(stage.load, stage));
      evidence_per_repeat.push_back(last_evidence_);
    } catch (const apply::Interrupted&) {
      throw;
    } catch (const RuntimeError& e) {
      stage.error = e.what();
      break;
    }
    apply::InterruptGuard::throw_if_interrupted();
  }
  // The evidence of the median repeat (by TPS) stands for the stage.
  if (!stage.repeats.empty()) {
    std::vector<std::size_t> order(stage.repeats.size());
    for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
    std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
      return stage.repeats[a].tps < stage.repeats[b].tps;
    });
    stage.evidence = evidence_per_repeat[order[order.size() / 2]];
  }
  stage.log_excerpt = log_since(server_.log_file(), log_offset);
  return stage;
}

bool evaluate_expectations(const Scenario& scenario, report::Run& run) {
  run.expectations.clear();
  bool all = true;
  const report::StageResult* baseline = run.stages.empty() ? nullptr : &run.stages.front();
  for (const auto& e : scenario.expect) {
    report::Expectation out;
    out.text = e.text;
    const report::StageResult* stage = nullptr;
    for (const auto& s : run.stages) {
      if (iequals(s.name, e.stage)) stage = &s;
    }
    if (stage == nullptr || baseline == nullptr || !stage->error.empty() || stage->repeats.empty()) {
      out.passed = false;
      out.detail = stage == nullptr ? "the stage did not run" : "the stage has no measurement";
    } else {
      double base = stage_tps(*baseline);
      double tps = stage_tps(*stage);
      if (e.kind == Expectation::Kind::kSlowerThanBaseline) {
        double factor = tps > 0 ? base / tps : std::numeric_limits<double>::infinity();
        out.passed = factor >= e.value;
        out.detail = fmt::format("{:.1f}x slower ({:.1f} -> {:.1f} tps)", factor, base, tps);
      } else {
        double change = base > 0 ? (tps - base) / base : 0;
        out.passed = std::abs(change) <= e.value;
        out.detail = fmt::format("{:+.1f}% ({:.1f} -> {:.1f} tps)", change * 100, base, tps);
      }
    }
    all = all && out.passed;
    run.expectations.push_back(std::move(out));
  }
  return all;
}

void run_plan(const Plan& plan, server::ServerControl& server, const knobs::Catalog& catalog,
              const fs::path& workdir, const RunOptions& options, Progress& progress,
              report::Run& run) {
  const Scenario& s = plan.scenario;
  const auto wall_start = now_us();
  apply::InterruptGuard guard;
  apply::require_permission(server);

  const workload::Workload& wl = workload::find_workload(s.workload.name);
  workload::WorkloadParams params;
  params.scale = s.workload.scale;
  params.clients = s.workload.clients;
  params.think_time = s.workload.think_time;
  params.seed = s.workload.seed;
  params.options = s.workload.options;
  if (auto problems = wl.validate(params); has_errors(problems)) {
    for (auto& p : problems) {
      if (p.where.file.empty()) p.where = s.workload.where;
    }
    throw InputError(problems);
  }

  MeasureOptions m;
  m.warmup_s = options.warmup_s.value_or(s.measure.warmup_s);
  m.duration_s = options.duration_s.value_or(s.measure.duration_s);
  m.repeats = options.repeats.value_or(s.measure.repeats);
  m.workers = options.workers;
  m.max_tries = options.max_tries;
  m.allow_partial = options.allow_partial;

  run.pgslow_version = "0.1.0";
  run.scenario = s.name;
  run.description = s.description;
  {
    std::time_t t = std::time(nullptr);
    char buf[32];
    std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&t));
    run.started_at = buf;
  }
  run.server_version = "PostgreSQL " + plan.server_version;
  run.server_major = plan.server_major;
  run.target = server.describe();
  run.workload = s.workload.name;
  run.scale = s.workload.scale;
  run.warmup_s = m.warmup_s;
  run.duration_s = m.duration_s;
  run.repeats = m.repeats;
  run.mode = std::string(mode_name(s.mode));
  run.machine = this_machine();

  // The data: loaded once into a template (skipped when a matching one exists).
  workload::Dataset dataset(server.conninfo(), wl, params);
  if (dataset.load(progress)) progress.note("data loaded into the template");
  apply::InterruptGuard::throw_if_interrupted();

  apply::Applier applier(server, workdir, catalog, options.target);
  StageExecutor executor(server, applier, wl, params, dataset, m, progress);
  try {
    for (std::size_t i = 0; i < plan.stages.size(); ++i) {
      const PlannedStage& st = plan.stages[i];
      progress.note(fmt::format("stage {}/{}: {}", i + 1, plan.stages.size(), st.name));
      report::StageResult r = executor.run_stage(st.name, st.settings, st.load);
      r.description = st.description;
      // The plan's changes compare with the stage measured before (what the table shows);
      // the applier's compare with the original configuration.
      r.changes = st.changes;
      r.skipped = st.skipped;
      for (const auto& w : st.warnings) {
        if (std::find(r.warnings.begin(), r.warnings.end(), w) == r.warnings.end()) r.warnings.push_back(w);
      }
      if (run.data_bytes == 0 && r.error.empty()) run.data_bytes = dataset.data_bytes();
      run.stages.push_back(std::move(r));
      apply::InterruptGuard::throw_if_interrupted();
    }
  } catch (...) {
    run.wall_seconds = static_cast<double>(now_us() - wall_start) / 1e6;
    applier.restore();
    throw;
  }
  applier.restore();
  progress.note("configuration restored");
  evaluate_expectations(s, run);
  run.wall_seconds = static_cast<double>(now_us() - wall_start) / 1e6;
}

}  // namespace pgslow::scenario
