#pragma once
// The server's envelope: a machine of a chosen size for the server pgslow starts (a scenario's
// `server: {memory, cpus, cpuset}`, run --memory/--cpus/--cpuset). Made with a cgroup the
// postmaster starts in, so every backend and the page cache of what they read are charged to
// it: data larger than the envelope's memory is read from the disk, not from the page cache.
// cgroup v2 (one hierarchy) or v1 (a hierarchy per controller), whichever the host mounts;
// where none can be made pgslow refuses with why and what would allow it (docs/envelope.md).

#include <cstdint>
#include <filesystem>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/safe_fs.h"

namespace pgslow::server {

struct Envelope {
  // In the group, without that limit: a run that sweeps server.memory (or server.cpus) with no
  // value of its own starts the server in the group so that each stage can set one, and its
  // baseline runs unlimited there (docs/envelope.md).
  static constexpr std::uint64_t kUnlimitedMemory = std::numeric_limits<std::uint64_t>::max();
  static constexpr double kUnlimitedCpus = std::numeric_limits<double>::infinity();

  std::uint64_t memory_bytes = 0;  // 0: no memory limit (no group); kUnlimitedMemory
  double cpus = 0;                 // 0: no CPU quota; 1.5: one and a half CPUs' time
  std::string cpuset;              // "": any CPU; "1", "0-1,3": only these
  bool empty() const { return memory_bytes == 0 && cpus == 0 && cpuset.empty(); }
  // "memory 512MB, cpus 1.5, cpuset 1" ("memory unlimited" in the group); "" when empty.
  std::string describe() const;
  bool operator==(const Envelope&) const = default;
};

// "512MB", "2GB", "1.5GB" (1024-based, as PostgreSQL's units); nullopt with `why` otherwise.
std::optional<std::uint64_t> parse_envelope_memory(std::string_view text, std::string* why);
// "1.5", "2": at least 0.01; nullopt with `why` otherwise.
std::optional<double> parse_envelope_cpus(std::string_view text, std::string* why);
// The CPUs of "1", "0-1,3"; nullopt with `why` when malformed or naming a CPU this machine has
// not got.
std::optional<std::vector<int>> parse_cpuset(std::string_view text, std::string* why);

// Where cgroup hierarchies are mounted: /sys/fs/cgroup, or $PGSLOW_CGROUP_ROOT (tests point it
// at a fake hierarchy to see the refusals).
std::filesystem::path cgroup_root();

// One cgroup named `name` in every hierarchy the envelope needs.
class CgroupGroup {
 public:
  // Finds the hierarchies under `root`; throws RuntimeError (the refusal) when the envelope
  // needs a controller the host does not offer. An empty envelope needs none: such a group is
  // only used to find and remove what an earlier run left.
  CgroupGroup(std::string name, Envelope envelope, std::filesystem::path root = cgroup_root());

  // Creates the group (or reuses the one an interrupted run left) and writes the limits;
  // throws the refusal when pgslow may not (not root, read-only hierarchy).
  void create() const;
  // Writes the envelope's limits into the existing group (the server keeps running: cgroups
  // apply a new limit to the processes already in them; a smaller memory limit reclaims page
  // cache).
  void set_limits() const;
  // The groups' cgroup.procs (v1: tasks too would do; procs moves whole processes) open for
  // writing, for ProcessOptions::join_cgroups.
  std::vector<UniqueFd> open_procs() const;
  // Whether `pid` runs in this group in exactly the hierarchies this envelope needs (and in
  // no other of ours): a server that does not can be moved only by a restart.
  bool holds(int pid) const;
  // Removes the group from every hierarchy where it exists, killing the processes left in it
  // first (a server's child in a session of its own outlives the postmaster); a group that
  // still holds one after a few seconds stays (logged). Needs no envelope.
  void remove() const;
  // Whether the group exists in any hierarchy.
  bool exists() const;
  // The memory the group's processes use, page cache included, and its high-water mark
  // (v1 memory.max_usage_in_bytes, v2 memory.peak); nullopt without a memory hierarchy.
  std::optional<std::uint64_t> memory_usage() const;
  std::optional<std::uint64_t> memory_peak() const;
  // The memory limit the group has now (v2 memory.max, v1 memory.limit_in_bytes),
  // Envelope::kUnlimitedMemory for none; nullopt without a memory hierarchy or group.
  std::optional<std::uint64_t> memory_limit() const;
  // How many of the group's processes the kernel killed for going over the memory limit
  // (oom_kill in v2 memory.events, v1 memory.oom_control); nullopt without a memory hierarchy
  // or that counter.
  std::optional<std::uint64_t> out_of_memory_kills() const;
  // "cgroup v1" or "cgroup v2", and the group's name.
  std::string mechanism() const;
  const std::string& name() const { return name_; }

 private:
  struct Hierarchy {
    std::string controller;     // "memory", "cpu", "cpuset"; "" for v2's single hierarchy
    std::filesystem::path dir;  // where the group is made: the mount, or pgslow's own group
    std::string at;             // `dir` within the hierarchy ("/", "/batch/42")
  };
  std::vector<const Hierarchy*> needed() const;
  const Hierarchy* find(std::string_view controller) const;
  void write(const Hierarchy& h, const std::string& file, const std::string& value) const;
  std::optional<std::string> read(const Hierarchy& h, const std::string& file) const;
  // A number the memory controller keeps, from the file of that name in v2 or in v1.
  std::optional<std::uint64_t> memory_counter(const char* v2_file, const char* v1_file) const;
  // SIGKILL to every process in the group open as `group` (v2: cgroup.kill).
  void kill_processes(int group, const Hierarchy& h) const;
  [[noreturn]] void refuse(const std::string& why, const std::string& allow) const;

  std::string name_;
  Envelope envelope_;
  std::filesystem::path root_;
  bool v2_ = false;
  std::vector<Hierarchy> hierarchies_;  // the ones present
};

// The cgroups `pid` is in, one per hierarchy: "memory:/pgslow-x", "0::/user.slice" as
// /proc/<pid>/cgroup lists them.
std::vector<std::string> cgroups_of(int pid);

// Keeps the calling thread, and the threads it starts after, off the CPUs of `cpuset` (the
// server's): the driver's clients then compete with nothing in the envelope. Returns what it
// did for the log ("clients on CPUs 0"), or why it could not.
std::string keep_clients_off(const std::string& cpuset);

}  // namespace pgslow::server
