// The delta and ratio logic over hand-made snapshots: no server.

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <future>
#include <thread>

#include "evidence/evidence.h"

namespace pgslow::evidence {
namespace {

Snapshot snapshot(std::map<std::string, double> values, std::string db_epoch = "start|") {
  Snapshot s;
  s.server_major = 15;
  s.epochs = {{"pg_stat_database", db_epoch}, {"pg_stat_bgwriter", "start|"}, {"/proc", "42|7"}};
  for (const auto& [key, v] : values) {
    std::string source = "pg_stat_database";
    if (key.rfind("checkpoints", 0) == 0) source = "pg_stat_bgwriter";
    if (key == "read_syscalls") source = "/proc";
    s.counters[key] = Counter{v, source};
  }
  return s;
}

TEST(Delta, CountersAreDifferences) {
  const auto d = delta(snapshot({{"temp_files", 10}, {"checkpoints_requested", 3}}),
                       snapshot({{"temp_files", 14}, {"checkpoints_requested", 44}}));
  EXPECT_DOUBLE_EQ(d.at("temp_files"), 4);
  EXPECT_DOUBLE_EQ(d.at("checkpoints_requested"), 41);
}

TEST(Delta, HitRatioIsOverTheWindowNotSinceStart) {
  // Since the start: 1,900 hits of 2,000 (95%). In the window: 900 of 1,000 (90%).
  const auto d = delta(snapshot({{"blocks_hit", 1000}, {"blocks_read", 0}}),
                       snapshot({{"blocks_hit", 1900}, {"blocks_read", 100}}));
  EXPECT_DOUBLE_EQ(d.at("buffer_hit_ratio"), 0.9);
  EXPECT_DOUBLE_EQ(d.at("blocks_read"), 100);
}

TEST(Delta, NoBlocksMeansNoRatio) {
  const auto d = delta(snapshot({{"blocks_hit", 5}, {"blocks_read", 5}}),
                       snapshot({{"blocks_hit", 5}, {"blocks_read", 5}}));
  EXPECT_EQ(d.count("buffer_hit_ratio"), 0u);
  EXPECT_DOUBLE_EQ(d.at("blocks_hit"), 0);
}

TEST(Delta, AResetSourceIsAbsentNotNegativeOrCumulative) {
  // pg_stat_reset() between the snapshots: stats_reset changed for the database only.
  const auto d = delta(snapshot({{"temp_files", 10}, {"checkpoints_requested", 3}}, "start|"),
                       snapshot({{"temp_files", 2}, {"checkpoints_requested", 5}}, "start|reset"));
  EXPECT_EQ(d.count("temp_files"), 0u);
  EXPECT_DOUBLE_EQ(d.at("checkpoints_requested"), 2);
}

TEST(Delta, ACounterThatWentBackwardsIsAbsent) {
  const auto d = delta(snapshot({{"read_syscalls", 5000}}), snapshot({{"read_syscalls", 100}}));
  EXPECT_EQ(d.count("read_syscalls"), 0u);
}

TEST(Delta, AKeyMissingFromOneSnapshotIsAbsent) {
  // A remote server: /proc unreadable in the first snapshot.
  Snapshot before = snapshot({{"temp_files", 1}});
  before.epochs.erase("/proc");
  const auto d = delta(before, snapshot({{"temp_files", 1}, {"read_syscalls", 900}}));
  EXPECT_EQ(d.count("read_syscalls"), 0u);
  EXPECT_DOUBLE_EQ(d.at("temp_files"), 0);
}

TEST(Delta, ARestartedPostmasterIsAbsentForProc) {
  Snapshot after = snapshot({{"read_syscalls", 9000}});
  after.epochs["/proc"] = "77|1234";
  const auto d = delta(snapshot({{"read_syscalls", 100}}), after);
  EXPECT_EQ(d.count("read_syscalls"), 0u);
}

TEST(Delta, LevelsAreTheValueAtTheEnd) {
  Snapshot before = snapshot({});
  Snapshot after = snapshot({});
  before.levels["dead_tuples"] = Counter{500, "pg_stat_user_tables"};
  after.levels["dead_tuples"] = Counter{120, "pg_stat_user_tables"};
  EXPECT_DOUBLE_EQ(delta(before, after).at("dead_tuples"), 120);
}

TEST(Delta, WindowSeconds) {
  Snapshot before, after;
  before.taken_at_us = 1'000'000;
  after.taken_at_us = 61'500'000;
  EXPECT_DOUBLE_EQ(window_seconds(before, after), 60.5);
}

// /proc/PID/smaps_rollup of this very process: some memory, in bytes.
TEST(BackendMemory, ReadsThePssOfAProcess) {
  const auto pss = read_pss_bytes(static_cast<int>(::getpid()));
  ASSERT_TRUE(pss);
  EXPECT_GT(*pss, 100'000u);
  EXPECT_FALSE(read_pss_bytes(-1));
  // Not a child of pid 1's... nothing here is a child of a postmaster with pid 0.
  EXPECT_FALSE(backend_memory({static_cast<int>(::getpid())}, 0));
}

}  // namespace
}  // namespace pgslow::evidence

namespace pgslow::evidence {
namespace {

CpuTimes cpu_at(double seconds, double busy, std::optional<double> server, double self,
                double beside_clients = 0) {
  CpuTimes t;
  t.beside_clients_s = beside_clients;
  t.taken_at_us = static_cast<std::int64_t>(seconds * 1e6);
  t.machine_busy_s = busy;
  t.server_s = server;
  t.self_s = self;
  t.cores = 2;
  return t;
}

TEST(CpuShares, WhatTheServerAndPgslowDidNotUseIsOtherPrograms) {
  // 10 s on 2 cores: 20 core-seconds; the machine was busy 15 s of them, the server 8, pgslow 3
  // (1 of them beside its clients).
  auto s = cpu_shares(cpu_at(0, 100, 50, 10, 5), cpu_at(10, 115, 58, 13, 6));
  ASSERT_TRUE(s.has_value());
  EXPECT_DOUBLE_EQ(s->window_s, 10);
  EXPECT_DOUBLE_EQ(s->server, 0.4);
  EXPECT_DOUBLE_EQ(s->clients, 0.1);
  EXPECT_DOUBLE_EQ(s->pgslow_other, 0.05);
  EXPECT_DOUBLE_EQ(s->other_programs, 0.2);
  EXPECT_DOUBLE_EQ(s->disturbance(), 0.25);
  EXPECT_GT(s->disturbance(), kDisturbedShare);
}

// The neighbours a comparison subtracts are other programs' user time: the kernel's work for
// the server (its I/O, its sockets) moves with the stage itself and is left out.
TEST(CpuShares, NeighboursAreOtherProgramsUserTimeNotTheKernelsWorkForTheServer) {
  CpuTimes before = cpu_at(0, 100, 50, 10);
  CpuTimes after = cpu_at(10, 118, 58, 13);
  before.machine_user_s = 60;
  after.machine_user_s = 69;  // 9 of the 18 busy seconds in user mode
  before.server_user_s = 30;
  after.server_user_s = 35;  // the server: 5 of its 8 in user mode
  before.self_user_s = 6;
  after.self_user_s = 8;  // pgslow: 2 of its 3
  auto s = cpu_shares(before, after);
  ASSERT_TRUE(s.has_value());
  EXPECT_DOUBLE_EQ(s->other_programs, 0.35);  // 7 core-seconds of 20, kernel time included
  EXPECT_DOUBLE_EQ(s->neighbours, 0.1);       // 9 - 5 - 2 = 2 of 20
  after.machine_user_s = 64;                  // nothing else ran in user mode
  EXPECT_DOUBLE_EQ(cpu_shares(before, after)->neighbours, 0.0);
}

TEST(CpuShares, PgslowsOwnDashboardFloodIsADisturbanceToo) {
  // Nothing else runs, but pgslow spent 4 of its 6 core-seconds outside its clients.
  auto s = cpu_shares(cpu_at(0, 100, 50, 10, 5), cpu_at(10, 114, 58, 16, 9));
  ASSERT_TRUE(s.has_value());
  EXPECT_DOUBLE_EQ(s->other_programs, 0.0);
  EXPECT_DOUBLE_EQ(s->pgslow_other, 0.2);
  EXPECT_GT(s->disturbance(), kDisturbedShare);
}

TEST(CpuShares, AQuietMachineLeavesNothingForOthersAndNeverANegativeShare) {
  auto s = cpu_shares(cpu_at(0, 100, 50, 10), cpu_at(10, 110, 58, 13));  // busy < server+self
  ASSERT_TRUE(s.has_value());
  EXPECT_DOUBLE_EQ(s->other_programs, 0.0);
}

TEST(CpuShares, UnknownWithoutTheServersFiguresOrAfterARestart) {
  EXPECT_FALSE(cpu_shares(cpu_at(0, 100, std::nullopt, 10), cpu_at(10, 115, 58, 13)));
  EXPECT_FALSE(cpu_shares(cpu_at(0, 100, 50, 10), cpu_at(10, 115, 2, 13)));  // a new server
  EXPECT_FALSE(cpu_shares(cpu_at(5, 100, 50, 10), cpu_at(5, 115, 58, 13)));  // no window
}

// A fresh workdir's initdb is a reaped child of pgslow; every thread's stat carries the
// process's reaped children, so a thread started within the window (the wait sampler) once
// brought that time in as "pgslow's dashboard and evidence", 14% of a quick run's baseline.
TEST(CpuShares, AReapedChildIsNeverPgslowsOwnTime) {
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    // Burn 0.3 s of CPU, then leave.
    const auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(300);
    volatile std::uint64_t spin = 0;
    while (std::chrono::steady_clock::now() < until) spin = spin + 1;
    ::_exit(0);
  }
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  const CpuTimes before = read_cpu_times(std::nullopt);
  std::promise<void> read;
  std::thread beside([&] { read.get_future().wait(); });  // a thread new to the window
  const CpuTimes after = read_cpu_times(std::nullopt);
  read.set_value();
  beside.join();
  EXPECT_LT(after.beside_clients_s - before.beside_clients_s, 0.1);
  EXPECT_LT(after.self_s - before.self_s, 0.1);
}

TEST(CpuShares, ThisMachinesFiguresCanBeRead) {
  CpuTimes t = read_cpu_times(std::nullopt);
  EXPECT_GT(t.machine_busy_s, 0);
  EXPECT_GE(t.cores, 1);
  EXPECT_FALSE(t.server_s.has_value());
}

}  // namespace
}  // namespace pgslow::evidence
