// The server's envelope against the real managed cluster: its postmaster and backends run in
// the cgroup, the page cache of a table larger than the limit stays under it (rereads come
// from the disk), and a host where no envelope can be made gets the refusal, never a run
// without it.

#include "server/envelope.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <fstream>
#include <thread>

#include "apply/interrupt.h"
#include "common/clock.h"
#include "common/errors.h"
#include "common/process.h"
#include "experiment/cliff_experiment.h"
#include "experiment/run.h"
#include "knobs/catalog.h"
#include "pg/connection.h"
#include "pg/error.h"
#include "scenario/plan.h"
#include "server/target.h"
#include "tests/support/cluster_fixture.h"

namespace pgslow {
namespace {

namespace fs = std::filesystem;
constexpr std::uint64_t kMiB = 1024 * 1024;

bool host_has_memory_cgroup() {
  return fs::exists("/sys/fs/cgroup/memory/memory.limit_in_bytes") ||
         fs::exists("/sys/fs/cgroup/cgroup.controllers");
}

// Bytes the process read from storage (not from the page cache), from /proc/<pid>/io.
std::uint64_t storage_reads(int pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/io");
  std::string key;
  std::uint64_t value = 0;
  while (in >> key >> value) {
    if (key == "read_bytes:") return value;
  }
  return 0;
}

bool in_group(int pid, const std::string& group) {
  for (const std::string& entry : server::cgroups_of(pid)) {
    if (entry.ends_with("/" + group)) return true;
  }
  return false;
}

TEST(Envelope, HoldsTheServersPageCacheUnderItsLimitWhileReadingALargerTable) {
  if (!host_has_memory_cgroup()) GTEST_SKIP() << "this host mounts no memory cgroup";
  server::Envelope envelope;
  envelope.memory_bytes = 96 * kMiB;
  testing::TemporaryCluster c({{"shared_buffers", "16MB"}}, envelope);
  const server::CgroupGroup group = c.get().envelope_group();
  ASSERT_TRUE(c.get().status().pid);
  const int postmaster = *c.get().status().pid;
  EXPECT_TRUE(group.holds(postmaster)) << "the postmaster is not in " << group.name();
  EXPECT_NE(c.get().envelope().find("memory 96MB"), std::string::npos) << c.get().envelope();

  auto conn = pg::Connection::open(c.get().conninfo());
  const int backend = std::stoi(conn.query_value("SELECT pg_backend_pid()").value_or("0"));
  EXPECT_TRUE(in_group(backend, group.name())) << "a backend runs outside the envelope";
  // About 250MB: more than twice the limit.
  conn.exec(
      "CREATE TABLE big AS SELECT g AS id, repeat(md5(g::text), 6) AS filler "
      "FROM generate_series(1, 1000000) g");
  const std::uint64_t table =
      std::stoull(conn.query_value("SELECT pg_table_size('big')").value_or("0"));
  ASSERT_GT(table, 2 * envelope.memory_bytes);

  conn.exec("SET max_parallel_workers_per_gather = 0");  // every read in this backend
  const std::uint64_t before = storage_reads(backend);
  for (int scan = 0; scan < 2; ++scan) {
    EXPECT_EQ(conn.query_value("SELECT count(*) FROM big"), "1000000");
  }
  const std::uint64_t read = storage_reads(backend) - before;
  // The page cache cannot hold the table, so each scan reads at least what does not fit from the
  // disk again: two scans more than the table.
  EXPECT_GT(read, table) << "two scans read only " << read << " bytes of a " << table
                         << "-byte table from storage: the page cache held it";
  // The kernel may force a charge past the limit (an allocation that cannot fail or wait) and
  // reclaim after it, so the peak it records can pass the limit by a few pages: seen once as 4kB
  // over 96MB on a busy machine. The tolerance is one charge batch (64 pages); more than that
  // is the envelope failing.
  const std::uint64_t charge_batch = 64 * static_cast<std::uint64_t>(::sysconf(_SC_PAGESIZE));
  auto peak = group.memory_peak();
  ASSERT_TRUE(peak);
  EXPECT_LE(*peak, envelope.memory_bytes + charge_batch);
  auto usage = group.memory_usage();
  ASSERT_TRUE(usage);
  EXPECT_LE(*usage, envelope.memory_bytes + charge_batch);
  EXPECT_GT(*usage, 16 * kMiB) << "the server's memory is not charged to the group";

  // Stopping removes the group.
  conn = pg::Connection();
  c.get().stop();
  EXPECT_FALSE(group.exists());
}

bool host_has_swap() {
  std::ifstream swaps("/proc/swaps");
  std::string header, device;
  std::getline(swaps, header);
  return static_cast<bool>(swaps >> device);
}

// A server process that goes over the envelope's memory is killed by the kernel; the cluster
// counts it, so a run that fails so can name the envelope as the cause and what to change.
TEST(Envelope, CountsTheServerProcessesItsMemoryLimitKilled) {
  if (!host_has_memory_cgroup()) GTEST_SKIP() << "this host mounts no memory cgroup";
  if (host_has_swap()) GTEST_SKIP() << "with swap, a process over the limit swaps, not dies";
  server::Envelope envelope;
  envelope.memory_bytes = 64 * kMiB;
  testing::TemporaryCluster c({{"shared_buffers", "16MB"}}, envelope);
  EXPECT_EQ(c.get().out_of_memory_kills(), std::optional<std::uint64_t>(0));
  auto conn = pg::Connection::open(c.get().conninfo());
  // One 512MB string in one backend: eight times the limit, allocated and written at once.
  EXPECT_THROW(conn.exec("SELECT length(repeat('x', 512 * 1024 * 1024))"), pg::Error);
  // The server goes through crash recovery; stopped in its middle, PostgreSQL 15 takes pg_ctl's
  // full timeout, so the teardown waits for it to accept connections again (at most 60 s).
  const std::int64_t deadline = now_us() + 60'000'000;
  for (;;) {
    try {
      pg::Connection::open(c.get().conninfo());
      break;
    } catch (const pg::Error&) {
      ASSERT_LT(now_us(), deadline) << "the server did not come back from the kill";
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
  }
  const std::optional<std::uint64_t> kills = c.get().out_of_memory_kills();
  ASSERT_TRUE(kills);
  EXPECT_GE(*kills, 1u);
}

// Issue #36: a process the server starts in a session of its own (setsid) outlives the
// postmaster and kept the group busy, so stop left the group behind. Stop kills it and removes
// the group (cgroup v1 here: SIGKILL to each pid of cgroup.procs; v2: cgroup.kill).
TEST(Envelope, StopKillsAProcessTheServerLeftInItsGroupAndRemovesTheGroup) {
  if (!host_has_memory_cgroup()) GTEST_SKIP() << "this host mounts no memory cgroup";
  server::Envelope envelope;
  envelope.memory_bytes = server::Envelope::kUnlimitedMemory;
  testing::TemporaryCluster c({{"shared_buffers", "16MB"}}, envelope);
  const fs::path pid_file = c.get().cluster_dir() / "leftover.pid";
  {
    auto conn = pg::Connection::open(c.get().conninfo());
    // As the server's user, in the server's group: a sleeper in a new session, its pid noted.
    conn.exec(
        "COPY (SELECT 1) TO PROGRAM 'setsid sleep 600 </dev/null >/dev/null 2>&1 & echo $! "
        "> " +
        pid_file.string() + "'");
  }
  std::ifstream in(pid_file);
  int leftover = 0;
  in >> leftover;
  ASSERT_GT(leftover, 1);
  ASSERT_TRUE(in_group(leftover, c.get().envelope_group().name()));
  c.get().stop();
  EXPECT_FALSE(c.get().envelope_group().exists()) << "the group was left behind";
  // Gone from the group means killed: a cgroup holds its processes until they have exited.
  std::ifstream stat("/proc/" + std::to_string(leftover) + "/stat");
  std::string line;
  std::getline(stat, line);
  EXPECT_TRUE(line.empty() || line.find(") Z") != std::string::npos)
      << "the leftover process still runs: " << line;
  if (!line.empty() && line.find(") Z") == std::string::npos) ::kill(leftover, SIGKILL);
}

// The same server without an envelope runs outside any group of pgslow's, as before.
TEST(Envelope, AClusterWithoutOneRunsUnlimited) {
  testing::TemporaryCluster c;
  const int postmaster = *c.get().status().pid;
  EXPECT_TRUE(c.get().envelope_group().holds(postmaster));
  for (const std::string& entry : server::cgroups_of(postmaster)) {
    EXPECT_EQ(entry.find("pgslow-"), std::string::npos) << entry;
  }
  EXPECT_EQ(c.get().envelope(), "");
}

fs::path fake_root(const std::string& name) {
  fs::path root =
      fs::temp_directory_path() / ("pgslow-fake-cgroup-" + std::to_string(getpid()) + "-" + name);
  fs::remove_all(root);
  fs::create_directories(root);
  return root;
}

std::string refusal(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

TEST(Envelope, AHostWithoutTheMemoryControllerGetsTheRefusal) {
  server::Envelope envelope;
  envelope.memory_bytes = 64 * kMiB;
  // cgroup v1 with cpu mounted and no memory hierarchy.
  fs::path v1 = fake_root("v1");
  fs::create_directories(v1 / "cpu");
  std::ofstream(v1 / "cpu" / "cpu.cfs_quota_us") << "-1\n";
  std::string why = refusal([&] { server::CgroupGroup("pgslow-x", envelope, v1); });
  EXPECT_NE(why.find("cannot give the server its envelope (memory 64MB)"), std::string::npos)
      << why;
  EXPECT_NE(why.find("none is mounted at " + (v1 / "memory").string()), std::string::npos) << why;
  EXPECT_NE(why.find("mount -t cgroup -o memory"), std::string::npos) << why;
  // The CPU quota alone can be made there.
  server::Envelope cpus;
  cpus.cpus = 1;
  EXPECT_EQ(refusal([&] { server::CgroupGroup("pgslow-x", cpus, v1); }), "");

  // cgroup v2 without the memory controller.
  fs::path v2 = fake_root("v2");
  std::ofstream(v2 / "cgroup.controllers") << "cpu io pids\n";
  why = refusal([&] { server::CgroupGroup("pgslow-x", envelope, v2); });
  EXPECT_NE(why.find("offers no memory controller (it offers: cpu io pids)"), std::string::npos)
      << why;
  fs::remove_all(v1);
  fs::remove_all(v2);
}

// The group is root's, made in a folder only root may write: in one another user may write
// (pgslow's own v1 group, delegated to them), they could swap the group for one of theirs
// between pgslow's checks and its writes, so pgslow makes none there.
TEST(Envelope, AHierarchyFolderOthersMayWriteGetsTheRefusal) {
  server::Envelope envelope;
  envelope.memory_bytes = 64 * kMiB;
  fs::path v1 = fake_root("open");
  fs::create_directories(v1 / "memory");
  std::ofstream(v1 / "memory" / "memory.limit_in_bytes") << "9223372036854771712\n";
  ::chmod((v1 / "memory").c_str(), 0777);
  std::string why = refusal([&] { server::CgroupGroup("pgslow-x", envelope, v1).create(); });
  EXPECT_NE(why.find("refuses the cgroup folder " + (v1 / "memory").string()), std::string::npos)
      << why;
  EXPECT_NE(why.find("others may write it (mode 0777)"), std::string::npos) << why;
  EXPECT_FALSE(fs::exists(v1 / "memory" / "pgslow-x")) << "a group was made there";
  fs::remove_all(v1);
}

// pgslow runs as root; a user who may not create cgroups gets the refusal naming the folder
// and what would allow it.
TEST(Envelope, AUserWithoutCgroupPermissionGetsTheRefusal) {
  if (!host_has_memory_cgroup()) GTEST_SKIP() << "this host mounts no memory cgroup";
  if (::geteuid() != 0) GTEST_SKIP() << "needs root to become another user";
  auto nobody = find_system_user("nobody");
  if (!nobody) GTEST_SKIP() << "no user nobody";
  int pipe_fds[2];
  ASSERT_EQ(::pipe(pipe_fds), 0);
  pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    ::close(pipe_fds[0]);
    std::string why;
    if (::setgid(nobody->gid) == 0 && ::setuid(nobody->uid) == 0) {
      server::Envelope envelope;
      envelope.memory_bytes = 64 * kMiB;
      why = refusal([&] { server::CgroupGroup("pgslow-permission-test", envelope).create(); });
    } else {
      why = "setuid failed";
    }
    ssize_t ignored = ::write(pipe_fds[1], why.data(), why.size());
    (void)ignored;
    ::_exit(0);
  }
  ::close(pipe_fds[1]);
  std::string why;
  char buf[4096];
  ssize_t n;
  while ((n = ::read(pipe_fds[0], buf, sizeof buf)) > 0) why.append(buf, static_cast<size_t>(n));
  ::close(pipe_fds[0]);
  int status = 0;
  ::waitpid(child, &status, 0);
  EXPECT_NE(why.find("may not create the cgroup"), std::string::npos) << why;
  EXPECT_NE(why.find("running pgslow as root"), std::string::npos) << why;
  EXPECT_NE(why.find("remove server.memory/cpus/cpuset"), std::string::npos) << why;
}

// A server pgslow does not start itself cannot be put in a cgroup: refused by name.
TEST(Envelope, ACommandTargetGetsTheRefusal) {
  server::TargetSpec spec;
  spec.kind = server::TargetKind::kCommand;
  spec.conninfo = testing::conninfo();
  spec.envelope.memory_bytes = 64 * kMiB;
  std::string why = refusal([&] { server::open_target(spec); });
  EXPECT_NE(why.find("cannot give the server of a command target (" +
                     pg::conninfo_without_secrets(spec.conninfo) + ") an envelope (memory 64MB)"),
            std::string::npos)
      << why;
  EXPECT_NE(why.find("docker run --memory"), std::string::npos) << why;
}

// The command refuses too, before it starts any server, with a fake hierarchy lacking the
// controller (PGSLOW_CGROUP_ROOT).
TEST(Envelope, RunRefusesAnEnvelopeTheHostCannotMake) {
  fs::path v1 = fake_root("cmd");
  fs::path workdir = fake_root("workdir");
  ProcessOptions o;
  o.timeout = std::chrono::minutes(2);
  o.env = {"PGSLOW_CGROUP_ROOT=" + v1.string()};
  ProcessResult r =
      run_process({testing::pgslow_binary().string(), "--workdir", workdir.string(), "run",
                   PGSLOW_SOURCE_DIR "/scenarios/quick.yaml", "--memory", "256MB"},
                  o);
  EXPECT_NE(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("cannot give the server its envelope (memory 256MB)"), std::string::npos)
      << r.output;
  EXPECT_FALSE(fs::exists(workdir / "cluster" / "data" / "PG_VERSION")) << "a server was made";
  fs::remove_all(v1);
  fs::remove_all(workdir);
}

// Reads the group's memory limit when each measured run starts (after its data reset and
// warm-up began: the limit it is measured in).
class LimitWatch final : public Progress {
 public:
  explicit LimitWatch(const server::CgroupGroup& group) : group_(group) {}
  void update(const std::string&) override {}
  void note(const std::string&) override {}
  void measuring(const std::string& stage, const std::string&) override {
    seen.emplace_back(stage, group_.memory_limit().value_or(0));
    if (stage == interrupt_at) ::raise(SIGINT);  // Ctrl-C while the stage's limit is on
  }
  std::vector<std::pair<std::string, std::uint64_t>> seen;
  std::string interrupt_at;

 private:
  const server::CgroupGroup& group_;
};

// A sweep of server.memory: the server starts in its group unlimited (the scenario gives no
// memory of its own), each point is measured in its limit set on the live group, the baseline
// runs between them unlimited again, each stage carries its envelope, and the run ends with
// the run's envelope back. A run killed with a point's limit in place leaves it to the next
// start, which writes the options' limit again.
TEST(Envelope, ASweepOfTheServersMemorySetsEachStagesLimitOnTheLiveGroup) {
  if (!host_has_memory_cgroup()) GTEST_SKIP() << "this host mounts no memory cgroup";
  std::vector<ConfigError> problems;
  scenario::Scenario s = scenario::parse_scenario(R"(workload:
  name: select-only
  scale: 1
  clients: 2
mode: isolated
sweep:
  server.memory: [192MB, 64MB]
)",
                                                  "sweep.yaml", problems);
  ASSERT_TRUE(problems.empty());
  const server::Envelope run_envelope = scenario::run_envelope(s, s.target);
  ASSERT_EQ(run_envelope.memory_bytes, server::Envelope::kUnlimitedMemory);
  testing::TemporaryCluster c({{"shared_buffers", "16MB"}}, run_envelope);
  const server::CgroupGroup group = c.get().envelope_group();
  ASSERT_TRUE(group.holds(*c.get().status().pid)) << "the server did not start in its group";
  EXPECT_EQ(group.memory_limit(), server::Envelope::kUnlimitedMemory);

  const knobs::Catalog catalog = knobs::Catalog::load_default();
  auto conn = pg::Connection::open(c.get().conninfo());
  const scenario::Plan plan = scenario::make_plan(s, catalog, knobs::ServerSettings::read(conn));
  conn = pg::Connection();
  experiment::RunOptions options;
  options.warmup_s = 0.5;
  options.duration_s = 1;
  options.no_wait_sampling = true;
  LimitWatch watch(group);
  results::Run run;
  experiment::run_plan(plan, c.get(), catalog, c.workdir(), options, watch, run);

  // baseline, 192MB, baseline again, 64MB, baseline again.
  const std::uint64_t unlimited = server::Envelope::kUnlimitedMemory;
  const std::vector<std::pair<std::string, std::uint64_t>> expected = {
      {"baseline", unlimited},
      {"server.memory 192MB", 192 * kMiB},
      {"baseline", unlimited},
      {"server.memory 64MB", 64 * kMiB},
      {"baseline", unlimited}};
  EXPECT_EQ(watch.seen, expected);
  ASSERT_EQ(run.stages.size(), 3u);
  EXPECT_EQ(run.stages[0].envelope, "memory unlimited");
  EXPECT_EQ(run.stages[1].envelope, "memory 192MB");
  EXPECT_EQ(run.stages[2].envelope, "memory 64MB");
  EXPECT_EQ(run.stages[2].sweep_values.at("server.memory"), "64MB");
  for (const auto& st : run.stages) EXPECT_TRUE(st.error.empty()) << st.name << ": " << st.error;
  EXPECT_NE(run.envelope.find("memory unlimited"), std::string::npos) << run.envelope;
  // After the run: the run's own envelope.
  EXPECT_EQ(group.memory_limit(), unlimited);
  EXPECT_EQ(c.get().current_envelope(), run_envelope);

  // Ctrl-C during the 64MB point: the run ends with the run's envelope back.
  LimitWatch interrupted(group);
  interrupted.interrupt_at = "server.memory 64MB";
  results::Run cut;
  EXPECT_THROW(experiment::run_plan(plan, c.get(), catalog, c.workdir(), options, interrupted, cut),
               apply::Interrupted);
  apply::InterruptGuard::reset_for_tests();
  ASSERT_FALSE(interrupted.seen.empty());
  EXPECT_EQ(interrupted.seen.back(), std::make_pair(std::string("server.memory 64MB"), 64 * kMiB));
  EXPECT_EQ(group.memory_limit(), unlimited);
  EXPECT_EQ(c.get().current_envelope(), run_envelope);

  // A run killed at the 64MB point leaves that limit on the live group; the next run's start
  // (another process: a cluster object of the run's options) writes its own again, no restart.
  server::Envelope shrunk = run_envelope;
  shrunk.memory_bytes = 64 * kMiB;
  c.get().set_envelope(shrunk);
  EXPECT_EQ(group.memory_limit(), 64 * kMiB);
  const int postmaster = *c.get().status().pid;
  server::ManagedOptions next;
  next.workdir = c.workdir();
  next.pg_version = c.get().pg_version();
  next.envelope = run_envelope;
  server::ManagedCluster again(next);
  again.start();
  EXPECT_EQ(group.memory_limit(), unlimited);
  EXPECT_EQ(again.status().pid, postmaster) << "the server was restarted";
}

// A cliff search over the server's memory (`pgslow cliff server.memory`, the cliff-cache
// lesson): the baseline's runs in the run's own 256MB, each point's in its limit set on the live
// group, alternating B P B P B P B, and the run's envelope back afterwards. A search without an
// envelope to start from is refused before anything runs.
TEST(Envelope, ACliffOverTheServersMemorySetsEachRunsLimitAndPutsTheRunsBack) {
  if (!host_has_memory_cgroup()) GTEST_SKIP() << "this host mounts no memory cgroup";
  server::Envelope run_envelope;
  run_envelope.memory_bytes = 256 * kMiB;
  testing::TemporaryCluster c({{"shared_buffers", "16MB"}}, run_envelope);
  const server::CgroupGroup group = c.get().envelope_group();
  ASSERT_EQ(group.memory_limit(), 256 * kMiB);

  experiment::CliffExperiment e;
  e.workload = "select-only";
  e.scale = 1;
  e.clients = 2;
  e.duration_s = 1;
  e.warmup_s = 0.5;
  e.workdir = c.workdir();
  e.options.knob = "server.memory";
  e.options.to = "128MB";  // --from: the envelope's 256MB; one step, the far end only
  // One look per point: the run count then does not depend on the verdict (a point that looks
  // slower only at a looser confidence is otherwise measured again), so the test holds on a
  // busy machine.
  e.options.search.max_looks = 1;
  e.options.settings = {{"shared_buffers", "16MB", {"--set", 0, 0}}};
  const knobs::Catalog catalog = knobs::Catalog::load_default();
  LimitWatch watch(group);
  const results::CliffResult r = experiment::run_cliff_experiment(e, c.get(), catalog, watch);

  std::vector<std::uint64_t> limits;
  for (const auto& [stage, limit] : watch.seen) limits.push_back(limit);
  const std::uint64_t b = 256 * kMiB, p = 128 * kMiB;
  EXPECT_EQ(limits, (std::vector<std::uint64_t>{b, p, b, p, b, p, b}));
  ASSERT_EQ(r.points.size(), 1u);
  EXPECT_EQ(r.knob, "server.memory");
  EXPECT_EQ(r.from, "256MB");
  EXPECT_EQ(r.points[0].value, "128MB");
  EXPECT_EQ(r.points[0].samples.size(), 3u);
  EXPECT_GT(r.points[0].transactions, 0u);
  EXPECT_EQ(group.memory_limit(), 256 * kMiB);
  EXPECT_EQ(c.get().current_envelope(), run_envelope);

  // Without an envelope there is no group to set a point's limit in: refused, nothing runs.
  testing::TemporaryCluster plain(
      std::vector<std::pair<std::string, std::string>>{{"shared_buffers", "16MB"}});
  e.workdir = plain.workdir();
  LimitWatch none(group);
  try {
    experiment::run_cliff_experiment(e, plain.get(), catalog, none);
    ADD_FAILURE() << "a search of server.memory ran without an envelope";
  } catch (const InputError& err) {
    EXPECT_NE(std::string(err.what()).find("needs the server in an envelope"), std::string::npos)
        << err.what();
  }
  EXPECT_TRUE(none.seen.empty());
}

}  // namespace
}  // namespace pgslow
