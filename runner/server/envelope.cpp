#include "server/envelope.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sched.h>
#include <signal.h>
#include <spdlog/spdlog.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <set>
#include <thread>

#include "common/errors.h"
#include "common/strings.h"

namespace pgslow::server {

namespace fs = std::filesystem;

namespace {

constexpr std::uint64_t kMiB = 1024ull * 1024;
// Below this PostgreSQL's own shared memory and a few backends do not fit: the server would
// be killed, not slowed.
constexpr std::uint64_t kMinMemory = 32 * kMiB;
constexpr long kCpuPeriodUs = 100000;

int cpu_count() {
  long n = ::sysconf(_SC_NPROCESSORS_CONF);
  return n > 0 ? static_cast<int>(n) : 1;
}

std::string number_text(double v) {
  std::string s = fmt::format("{:.2f}", v);
  while (s.ends_with('0')) s.pop_back();
  if (s.ends_with('.')) s.pop_back();
  return s;
}

// "512MB", "1.5GB": the shortest exact form.
std::string memory_text(std::uint64_t bytes) {
  static constexpr const char* kUnits[] = {"B", "kB", "MB", "GB", "TB"};
  double v = static_cast<double>(bytes);
  int unit = 0;
  while (unit < 4 && v >= 1024) {
    v /= 1024;
    ++unit;
  }
  return number_text(v) + kUnits[unit];
}

// A controller the envelope needs, with the scenario field that asks for it.
struct Wanted {
  const char* controller;
  const char* field;
};

// The controllers `envelope` needs, in the order their refusals are checked.
std::vector<Wanted> wanted_controllers(const Envelope& envelope) {
  std::vector<Wanted> out;
  if (envelope.memory_bytes) out.push_back({"memory", "server.memory"});
  if (envelope.cpus > 0) out.push_back({"cpu", "server.cpus"});
  if (!envelope.cpuset.empty()) out.push_back({"cpuset", "server.cpuset"});
  return out;
}

}  // namespace

std::string Envelope::describe() const {
  std::vector<std::string> parts;
  if (memory_bytes == kUnlimitedMemory) {
    parts.emplace_back("memory unlimited");
  } else if (memory_bytes) {
    parts.push_back("memory " + memory_text(memory_bytes));
  }
  if (cpus == kUnlimitedCpus) {
    parts.emplace_back("cpus unlimited");
  } else if (cpus > 0) {
    parts.push_back("cpus " + number_text(cpus));
  }
  if (!cpuset.empty()) parts.push_back("cpuset " + cpuset);
  return join(parts, ", ");
}

std::optional<std::uint64_t> parse_envelope_memory(std::string_view text, std::string* why) {
  std::string t = trim(text);
  std::size_t end = 0;
  while (end < t.size() && (std::isdigit(static_cast<unsigned char>(t[end])) || t[end] == '.'))
    ++end;
  std::string unit = to_lower(trim(t.substr(end)));
  double factor = 0;
  if (unit == "b") factor = 1;
  if (unit == "kb" || unit == "k") factor = 1024;
  if (unit == "mb" || unit == "m") factor = static_cast<double>(kMiB);
  if (unit == "gb" || unit == "g") factor = static_cast<double>(kMiB) * 1024;
  if (unit == "tb" || unit == "t") factor = static_cast<double>(kMiB) * 1024 * 1024;
  char* stop = nullptr;
  std::string digits = t.substr(0, end);
  double v = digits.empty() ? -1 : std::strtod(digits.c_str(), &stop);
  if (v <= 0 || factor == 0 || (stop && *stop != '\0')) {
    *why = fmt::format(
        "\"{}\" is not an amount of memory: write a number and a unit, as 512MB "
        "or 2GB",
        t);
    return std::nullopt;
  }
  auto bytes = static_cast<std::uint64_t>(std::llround(v * factor));
  if (bytes < kMinMemory) {
    *why = fmt::format(
        "{} is too little for a server: PostgreSQL's shared memory and a few "
        "backends need {} at least",
        t, memory_text(kMinMemory));
    return std::nullopt;
  }
  return bytes;
}

std::optional<double> parse_envelope_cpus(std::string_view text, std::string* why) {
  std::string t = trim(text);
  char* stop = nullptr;
  double v = t.empty() ? 0 : std::strtod(t.c_str(), &stop);
  if (t.empty() || (stop && *stop != '\0') || !(v >= 0.01) || v > 4096) {
    *why = fmt::format("\"{}\" is not a number of CPUs: write one as 1.5 (at least 0.01)", t);
    return std::nullopt;
  }
  return v;
}

std::optional<std::vector<int>> parse_cpuset(std::string_view text, std::string* why) {
  const int n = cpu_count();
  std::set<int> cpus;
  std::string t = trim(text);
  for (const std::string& raw : split(t, ',')) {
    std::string part = trim(raw);
    auto dash = part.find('-');
    std::string a = dash == std::string::npos ? part : part.substr(0, dash);
    std::string b = dash == std::string::npos ? part : part.substr(dash + 1);
    auto number = [](const std::string& s) -> int {
      if (s.empty() || !std::all_of(s.begin(), s.end(), ::isdigit) || s.size() > 4) return -1;
      return std::atoi(s.c_str());
    };
    int lo = number(a), hi = number(b);
    if (lo < 0 || hi < lo) {
      *why = fmt::format(
          "\"{}\" is not a CPU list: write CPU numbers and ranges, as \"1\" or "
          "\"0-1,3\"",
          t);
      return std::nullopt;
    }
    if (hi >= n) {
      *why = fmt::format("CPU {} does not exist: this machine has CPUs 0-{}", hi, n - 1);
      return std::nullopt;
    }
    for (int c = lo; c <= hi; ++c) cpus.insert(c);
  }
  return std::vector<int>(cpus.begin(), cpus.end());
}

fs::path cgroup_root() {
  if (const char* env = std::getenv("PGSLOW_CGROUP_ROOT"); env && *env) return env;
  return "/sys/fs/cgroup";
}

CgroupGroup::CgroupGroup(std::string name, Envelope envelope, fs::path root)
    : name_(std::move(name)), envelope_(std::move(envelope)), root_(std::move(root)) {
  std::error_code ec;
  if (fs::is_regular_file(root_ / "cgroup.controllers", ec)) {
    v2_ = true;
    hierarchies_.push_back({"", root_, "/"});
    std::ifstream in(root_ / "cgroup.controllers");
    std::string line;
    std::getline(in, line);
    std::vector<std::string> offered = split(trim(line), ' ');
    for (const Wanted& w : wanted_controllers(envelope_)) {
      const char* c = w.controller;
      if (std::find(offered.begin(), offered.end(), c) == offered.end()) {
        refuse(fmt::format("the cgroup v2 hierarchy at {} offers no {} controller (it offers: "
                           "{})",
                           root_.string(), c, line.empty() ? "none" : trim(line)),
               fmt::format("a kernel with the {} controller enabled (not disabled by "
                           "cgroup_disable= on its command line) would allow it",
                           c));
      }
    }
    return;
  }
  // v1: one hierarchy per controller; cpu is often mounted together with cpuacct.
  struct Candidate {
    const char* controller;
    std::vector<const char*> dirs;
    const char* file;  // present in a mounted hierarchy of that controller
  };
  const Candidate candidates[] = {
      {"memory", {"memory"}, "memory.limit_in_bytes"},
      {"cpu", {"cpu", "cpu,cpuacct", "cpuacct,cpu"}, "cpu.cfs_quota_us"},
      {"cpuset", {"cpuset"}, "cpuset.cpus"}};
  // The group is made inside pgslow's own group of each hierarchy (when that is visible under
  // the mount): the server then stays within whatever limits the host puts on pgslow, and a
  // hierarchical memory limit above it still holds.
  std::vector<std::string> own = cgroups_of(static_cast<int>(::getpid()));
  auto own_path = [&](const std::string& controller) -> std::string {
    for (const std::string& entry : own) {
      auto colon = entry.find(':');
      if (colon == std::string::npos) continue;
      std::vector<std::string> names = split(entry.substr(0, colon), ',');
      if (std::find(names.begin(), names.end(), controller) != names.end())
        return entry.substr(colon + 1);
    }
    return "/";
  };
  for (const Candidate& c : candidates) {
    for (const char* d : c.dirs) {
      if (fs::exists(root_ / d / c.file, ec)) {
        std::string at = own_path(c.controller);
        fs::path dir = root_ / d / fs::path(at).relative_path();
        if (at.find("..") != std::string::npos || !fs::is_directory(dir, ec)) {
          at = "/";
          dir = root_ / d;
        }
        hierarchies_.push_back({c.controller, dir, at});
        break;
      }
    }
  }
  if (envelope_.empty()) return;
  if (!fs::is_directory(root_, ec)) {
    refuse(fmt::format("no cgroup hierarchy is mounted at {}", root_.string()),
           "a host (or a privileged container) with cgroups mounted there would allow it");
  }
  needed();  // refuses a missing one
}

std::vector<const CgroupGroup::Hierarchy*> CgroupGroup::needed() const {
  std::vector<const Hierarchy*> out;
  if (v2_) {
    if (!envelope_.empty()) out.push_back(&hierarchies_.front());
    return out;
  }
  auto need = [&](const char* controller, const char* field) {
    const Hierarchy* h = find(controller);
    if (!h) {
      refuse(fmt::format("{} needs the cgroup {} controller, and none is mounted at {}/{} (this "
                         "host has cgroup v1 and no v2 hierarchy at {})",
                         field, controller, root_.string(), controller, root_.string()),
             fmt::format("mounting it (mount -t cgroup -o {0} cgroup {1}/{0}) would allow it",
                         controller, root_.string()));
    }
    out.push_back(h);
  };
  for (const Wanted& w : wanted_controllers(envelope_)) need(w.controller, w.field);
  return out;
}

const CgroupGroup::Hierarchy* CgroupGroup::find(std::string_view controller) const {
  for (const Hierarchy& h : hierarchies_) {
    if (h.controller == controller) return &h;
  }
  return nullptr;
}

void CgroupGroup::refuse(const std::string& why, const std::string& allow) const {
  throw RuntimeError(fmt::format(
      "pgslow cannot give the server its envelope ({}): {}. {}. pgslow does not run a "
      "scenario without the envelope it asks for, which would measure another machine; remove "
      "server.memory/cpus/cpuset (run --memory/--cpus/--cpuset) to run the server unlimited "
      "(docs/envelope.md)",
      envelope_.describe(), why, allow));
}

void CgroupGroup::create() const {
  for (const Hierarchy* h : needed()) {
    // The group is root's and so must be the folder it is made in (v1 makes it in pgslow's own
    // group, which a host may have delegated to another user): whoever may write that folder
    // could swap the group for one of theirs between the checks below and the writes.
    require_trusted_path(h->dir, "the cgroup folder",
                         "run pgslow from a cgroup of root's (or of your own), or remove "
                         "server.memory/cpus/cpuset (run --memory/--cpus/--cpuset) to run the "
                         "server unlimited.");
    UniqueFd parent = open_folder(h->dir);
    if (::mkdirat(parent.get(), name_.c_str(), 0755) != 0 && errno != EEXIST) {
      int err = errno;
      std::string allow =
          err == EROFS ? "the hierarchy is mounted read-only (a container without "
                         "--privileged or a writable cgroup mount); running pgslow on the host, "
                         "or in a container with a writable cgroup hierarchy, would allow it"
                       : "running pgslow as root (the cgroup files are root's), or giving its "
                         "user a delegated cgroup v2 subtree, would allow it";
      refuse(fmt::format("it may not create the cgroup {} ({})", (h->dir / name_).string(),
                         std::strerror(err)),
             allow);
    }
    UniqueFd group = make_folder_in(parent.get(), name_, h->dir / name_);
    struct stat st {};
    if (::fstat(group.get(), &st) != 0 || st.st_uid != ::geteuid()) {
      // Reused only when it is ours: a group made by someone else is not taken over.
      throw RuntimeError(
          fmt::format("pgslow refuses the cgroup {}: it belongs to uid {}, not "
                      "to pgslow's. Remove it (rmdir) if it is a leftover",
                      (h->dir / name_).string(), st.st_uid));
    }
    if (v2_) {
      // The root's children get the controllers only when the root hands them down.
      std::string subtree =
          read_file_in(parent.get(), "cgroup.subtree_control", h->dir / "cgroup.subtree_control")
              .value_or("");
      std::vector<std::string> enabled = split(trim(subtree), ' ');
      for (const Wanted& w : wanted_controllers(envelope_)) {
        const std::string c = w.controller;
        if (std::find(enabled.begin(), enabled.end(), c) != enabled.end()) continue;
        UniqueFd f = open_file_in(parent.get(), "cgroup.subtree_control", O_WRONLY,
                                  h->dir / "cgroup.subtree_control");
        std::string plus = "+" + c;
        if (!f || ::write(f.get(), plus.data(), plus.size()) < 0) {
          refuse(fmt::format("it cannot enable the {} controller in {}/cgroup.subtree_control "
                             "({})",
                             c, h->dir.string(), std::strerror(errno)),
                 "a cgroup v2 root whose subtree_control pgslow may write would allow it");
        }
      }
    } else if (h->controller == "cpuset") {
      // A v1 cpuset group takes no process until it has memory nodes: the parent's.
      std::string mems =
          read_file_in(parent.get(), "cpuset.mems", h->dir / "cpuset.mems").value_or("0");
      write(*h, "cpuset.mems", trim(mems));
    }
  }
  set_limits();
  spdlog::info("the server's envelope: {} ({})", envelope_.describe(), mechanism());
}

void CgroupGroup::set_limits() const {
  const Envelope& envelope = envelope_;
  const bool memory_limited =
      envelope.memory_bytes != 0 && envelope.memory_bytes != Envelope::kUnlimitedMemory;
  const bool cpus_limited = envelope.cpus > 0 && envelope.cpus != Envelope::kUnlimitedCpus;
  for (const Hierarchy* h : needed()) {
    const std::string quota =
        cpus_limited ? std::to_string(std::llround(envelope.cpus * kCpuPeriodUs)) : "";
    if (v2_) {
      write(*h, "memory.max", memory_limited ? std::to_string(envelope.memory_bytes) : "max");
      write(*h, "cpu.max", fmt::format("{} {}", quota.empty() ? "max" : quota, kCpuPeriodUs));
      if (!envelope.cpuset.empty()) write(*h, "cpuset.cpus", envelope.cpuset);
    } else if (h->controller == "memory") {
      // -1: no limit (v1).
      write(*h, "memory.limit_in_bytes",
            memory_limited ? std::to_string(envelope.memory_bytes) : "-1");
    } else if (h->controller == "cpu") {
      write(*h, "cpu.cfs_period_us", std::to_string(kCpuPeriodUs));
      write(*h, "cpu.cfs_quota_us", quota.empty() ? "-1" : quota);
    } else if (h->controller == "cpuset") {
      write(*h, "cpuset.cpus", envelope.cpuset);
    }
  }
}

void CgroupGroup::write(const Hierarchy& h, const std::string& file,
                        const std::string& value) const {
  const fs::path shown = h.dir / name_ / file;
  UniqueFd group = open_folder(h.dir / name_);
  UniqueFd f = open_file_in(group.get(), file, O_WRONLY | O_TRUNC, shown);
  if (!f) {
    refuse(fmt::format("{} is missing", shown.string()),
           "a kernel whose cgroup controller has that file would allow it");
  }
  if (::write(f.get(), value.data(), value.size()) != static_cast<ssize_t>(value.size())) {
    throw RuntimeError(
        fmt::format("cannot write {} to {}: {}", value, shown.string(), std::strerror(errno)));
  }
}

std::optional<std::string> CgroupGroup::read(const Hierarchy& h, const std::string& file) const {
  std::error_code ec;
  if (!fs::is_directory(h.dir / name_, ec)) return std::nullopt;
  UniqueFd group = open_folder(h.dir / name_);
  return read_file_in(group.get(), file, h.dir / name_ / file);
}

std::vector<UniqueFd> CgroupGroup::open_procs() const {
  std::vector<UniqueFd> out;
  for (const Hierarchy* h : needed()) {
    UniqueFd group = open_folder(h->dir / name_);
    UniqueFd f =
        open_file_in(group.get(), "cgroup.procs", O_WRONLY, h->dir / name_ / "cgroup.procs");
    if (!f) refuse(fmt::format("{} has no cgroup.procs", (h->dir / name_).string()), "");
    out.push_back(std::move(f));
  }
  return out;
}

std::vector<std::string> cgroups_of(int pid) {
  std::vector<std::string> out;
  std::ifstream in(fmt::format("/proc/{}/cgroup", pid));
  std::string line;
  while (std::getline(in, line)) {
    auto colon = line.find(':');
    if (colon != std::string::npos) out.push_back(line.substr(colon + 1));
  }
  return out;
}

bool CgroupGroup::holds(int pid) const {
  std::set<std::string> in_ours;  // Hierarchy::controller of each of ours holding `pid`
  for (const std::string& entry : cgroups_of(pid)) {
    auto colon = entry.find(':');
    if (colon == std::string::npos) continue;
    const std::string path = entry.substr(colon + 1);
    for (const std::string& c : split(entry.substr(0, colon), ',')) {
      const Hierarchy* h = v2_ ? &hierarchies_.front() : find(c);
      if (!h) continue;
      const std::string ours = (h->at == "/" ? std::string() : h->at) + "/" + name_;
      if (path == ours) in_ours.insert(h->controller);
    }
  }
  std::set<std::string> wanted;
  for (const Hierarchy* h : needed()) wanted.insert(h->controller);
  return in_ours == wanted;
}

void CgroupGroup::kill_processes(int group, const Hierarchy& h) const {
  const fs::path shown = h.dir / name_;
  // cgroup v2 (Linux 5.14+) kills the whole group at once, new forks included.
  if (v2_) {
    UniqueFd kill_file = open_file_in(group, "cgroup.kill", O_WRONLY, shown / "cgroup.kill");
    if (kill_file && ::write(kill_file.get(), "1", 1) == 1) return;
  }
  // Only root may write a group's cgroup.procs, so every pid listed is the server's or its
  // children's. A pid bigger than the kernel's pid_max is no pid: the listing is bounded.
  const std::optional<std::string> procs =
      read_file_in(group, "cgroup.procs", shown / "cgroup.procs", std::size_t{1} << 20);
  for (const std::string& line : split(procs.value_or(""), '\n')) {
    const int pid = std::atoi(line.c_str());
    if (pid > 1 && ::kill(pid, SIGKILL) == 0)
      spdlog::debug("killed process {}, left in the cgroup {}", pid, shown.string());
  }
}

void CgroupGroup::remove() const {
  for (const Hierarchy& h : hierarchies_) {
    std::error_code ec;
    if (!fs::is_directory(h.dir / name_, ec)) continue;
    UniqueFd parent = open_folder(h.dir);
    // A cgroup is removed with rmdir even though its control files are listed in it. A group
    // with a process left refuses with EBUSY: the server's last processes may still be exiting
    // when pg_ctl returns, and one it started in a session of its own (setsid) outlives it.
    // Whatever is left is killed, and the rmdir retried until they are gone, for a few seconds
    // at most; a group that still holds a process then stays (the warning).
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
    int rc = 0;
    while ((rc = ::unlinkat(parent.get(), name_.c_str(), AT_REMOVEDIR)) != 0 && errno == EBUSY &&
           std::chrono::steady_clock::now() < deadline) {
      try {
        if (UniqueFd group = open_folder_in(parent.get(), name_, h.dir / name_))
          kill_processes(group.get(), h);
      } catch (const Error& e) {
        spdlog::debug("cannot empty the cgroup {}: {}", (h.dir / name_).string(), e.what());
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    if (rc == 0) {
      spdlog::debug("removed the cgroup {}", (h.dir / name_).string());
    } else if (errno != ENOENT) {
      spdlog::warn("cannot remove the cgroup {}: {}", (h.dir / name_).string(),
                   std::strerror(errno));
    }
  }
}

bool CgroupGroup::exists() const {
  std::error_code ec;
  for (const Hierarchy& h : hierarchies_) {
    if (fs::is_directory(h.dir / name_, ec)) return true;
  }
  return false;
}

std::optional<std::uint64_t> CgroupGroup::memory_counter(const char* v2_file,
                                                         const char* v1_file) const {
  const Hierarchy* h = v2_ ? &hierarchies_.front() : find("memory");
  if (!h) return std::nullopt;
  auto text = read(*h, v2_ ? v2_file : v1_file);
  if (!text) return std::nullopt;
  return std::strtoull(text->c_str(), nullptr, 10);
}

std::optional<std::uint64_t> CgroupGroup::memory_usage() const {
  return memory_counter("memory.current", "memory.usage_in_bytes");
}

std::optional<std::uint64_t> CgroupGroup::memory_peak() const {
  return memory_counter("memory.peak", "memory.max_usage_in_bytes");
}

std::optional<std::uint64_t> CgroupGroup::memory_limit() const {
  const Hierarchy* h = v2_ ? &hierarchies_.front() : find("memory");
  if (!h) return std::nullopt;
  auto text = read(*h, v2_ ? "memory.max" : "memory.limit_in_bytes");
  if (!text) return std::nullopt;
  if (trim(*text) == "max") return Envelope::kUnlimitedMemory;
  const std::uint64_t bytes = std::strtoull(text->c_str(), nullptr, 10);
  // v1 shows "no limit" as the largest count of pages it can hold (9223372036854771712).
  return bytes >= (1ull << 62) ? Envelope::kUnlimitedMemory : bytes;
}

std::optional<std::uint64_t> CgroupGroup::out_of_memory_kills() const {
  const Hierarchy* h = v2_ ? &hierarchies_.front() : find("memory");
  if (!h) return std::nullopt;
  // "oom_kill 3" among other "name value" lines, in both versions.
  auto text = read(*h, v2_ ? "memory.events" : "memory.oom_control");
  if (!text) return std::nullopt;
  for (const std::string& line : split(*text, '\n')) {
    const std::vector<std::string> field = split(trim(line), ' ');
    if (field.size() == 2 && field[0] == "oom_kill")
      return std::strtoull(field[1].c_str(), nullptr, 10);
  }
  return std::nullopt;
}

std::string CgroupGroup::mechanism() const {
  return fmt::format("cgroup {} {}", v2_ ? "v2" : "v1", name_);
}

std::string keep_clients_off(const std::string& cpuset) {
  std::string why;
  auto server = parse_cpuset(cpuset, &why);
  if (!server) return why;
  cpu_set_t mask;
  CPU_ZERO(&mask);
  if (::sched_getaffinity(0, sizeof mask, &mask) != 0) return "cannot read the CPU affinity";
  for (int c : *server) CPU_CLR(c, &mask);
  std::vector<std::string> left;
  for (int c = 0; c < CPU_SETSIZE; ++c) {
    if (CPU_ISSET(c, &mask)) left.push_back(std::to_string(c));
  }
  if (left.empty()) {
    return fmt::format("the clients share CPUs {} with the server: no CPU is outside its cpuset",
                       cpuset);
  }
  if (::sched_setaffinity(0, sizeof mask, &mask) != 0) {
    return fmt::format("cannot keep the clients off CPUs {}: {}", cpuset, std::strerror(errno));
  }
  return fmt::format("the clients run on CPU{} {}, outside the server's cpuset",
                     left.size() > 1 ? "s" : "", join(left, ","));
}

}  // namespace pgslow::server
