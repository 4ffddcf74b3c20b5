#include "server/managed_cluster.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <fmt/format.h>
#include <netinet/in.h>
#include <signal.h>
#include <spdlog/spdlog.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <ctime>
#include <fstream>
#include <functional>
#include <thread>

#include "common/clock.h"
#include "common/errors.h"
#include "common/paths.h"
#include "common/process.h"
#include "common/safe_fs.h"
#include "common/strings.h"
#include "pg/connection.h"
#include "pg/data_dir.h"
#include "server/pg_binaries.h"
#include "server/pg_versions.h"
#include "server/server_log.h"
#include "server/target.h"

namespace pgslow::server {

namespace fs = std::filesystem;

namespace {

// Whether `pid` is a live PostgreSQL process (not a zombie, not a reused pid of something else).
bool is_live_postgres(int pid) {
  if (pid <= 0) return false;
  std::ifstream stat(fmt::format("/proc/{}/stat", pid));
  if (!stat) return ::kill(pid, 0) == 0 || errno == EPERM;
  std::string line;
  std::getline(stat, line);
  auto open = line.find('(');
  auto close = line.rfind(')');
  if (open == std::string::npos || close == std::string::npos || close + 2 >= line.size())
    return false;
  std::string comm = line.substr(open + 1, close - open - 1);
  char state = line[close + 2];
  return state != 'Z' && state != 'X' && (comm == "postgres" || comm == "postmaster");
}

// The size of the files in a data directory, for `server status`. The server's user may make
// the tree any depth: folders deeper than PostgreSQL's own (base/<oid>/...) are not entered,
// so the walk holds a bounded number of folders open. Links are not followed.
std::uint64_t directory_size(const fs::path& dir) {
  constexpr int kMaxDepth = 16;
  std::uint64_t total = 0;
  std::error_code ec;
  for (fs::recursive_directory_iterator it(dir, fs::directory_options::skip_permission_denied, ec),
       end;
       !ec && it != end; it.increment(ec)) {
    if (it.depth() >= kMaxDepth) it.disable_recursion_pending();
    std::error_code size_ec;
    if (it->is_regular_file(size_ec) && !it->is_symlink(size_ec)) {
      auto s = it->file_size(size_ec);
      if (!size_ec) total += s;
    }
  }
  return total;
}

}  // namespace

fs::path short_socket_parent() {
  // A name in /tmp can be taken ahead by anyone, and a folder of theirs under pgslow's name
  // would block root's server for good; in /run/pgslow (root's) only root makes names. A user
  // other than root keeps /tmp: a per-session folder ($XDG_RUNTIME_DIR) would differ between
  // a login, cron and sudo, and go at logout while the server runs on.
  std::string why;
  if (running_as_root() && is_trusted_folder("/run", why)) return "/run/pgslow";
  return "/tmp";
}

fs::path socket_folder(const fs::path& folder, const std::string& key, std::string_view tag) {
  // sun_path is 108 bytes with its terminating zero; ".s.PGSQL.65535" takes 14 of them.
  constexpr std::size_t kMaxSocketPath = 107;
  if ((folder / ".s.PGSQL.65535").string().size() <= kMaxSocketPath) return folder;
  return short_socket_parent() /
         fmt::format("pgslow-{:016x}-{}", std::hash<std::string>{}(key), tag);
}

UniqueFd open_socket_parent(const fs::path& socket_dir) {
  const fs::path parent = socket_dir.parent_path();
  if (parent == "/tmp") return open_folder(parent);
  return create_trusted_folders(parent, "the folder of the server's socket");
}

bool port_in_use(int port) {
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return false;
  int one = 1;
  // PostgreSQL binds with SO_REUSEADDR too: a port in TIME_WAIT is free for it.
  ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<std::uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  bool taken = ::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0;
  ::close(fd);
  return taken;
}

int pick_free_port() {
  for (int attempt = 0; attempt < 20; ++attempt) {
    int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) break;
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = 0;  // the kernel picks from its ephemeral range
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof addr;
    int port = 0;
    if (::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0 &&
        ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) == 0)
      port = ntohs(addr.sin_port);
    ::close(fd);
    if (port != 0 && port != 5432) return port;
  }
  throw RuntimeError("cannot find a free TCP port on 127.0.0.1; pass one with a fixed port");
}

ManagedCluster::ManagedCluster(ManagedOptions options) : options_(std::move(options)) {
  if (options_.workdir.empty()) options_.workdir = ".pgslow";
  options_.workdir = fs::absolute(options_.workdir).lexically_normal();
  cluster_dir_ =
      options_.workdir /
      cluster_folder(options_.pg_version,
                     options_.pg_version ? default_cluster_major(options_.workdir, options_.pg_bin)
                                         : std::nullopt);
  data_dir_ = cluster_dir_ / "data";
  log_file_ = cluster_dir_ / "server.log";
  // In pgslow's own workdir, not in the cluster folder: that one belongs to the server's user,
  // who could otherwise hand root a pg_bin of their choosing.
  state_file_ = options_.workdir / (cluster_dir_.filename().string() + ".state");
  socket_dir_ = socket_folder(cluster_dir_ / "socket", data_dir_.string(), "socket");
  load_state();
  if (options_.port != 0) port_ = options_.port;
}

std::optional<std::string> ManagedCluster::server_user() const {
  return server_os_user();
}

void ManagedCluster::load_state() {
  require_trusted_workdir(options_.workdir);
  UniqueFd fd(open_trusted_file(state_file_, O_RDONLY));
  if (!fd) return;
  for (const std::string& line : split(read_all(fd.get(), state_file_), '\n')) {
    auto eq = line.find('=');
    if (eq == std::string::npos) continue;
    std::string key = trim(line.substr(0, eq));
    std::string value = trim(line.substr(eq + 1));
    if (key == "port") port_ = std::atoi(value.c_str());
    if (key == "pg_bin" && !options_.pg_bin && has_server_programs(value)) pg_bin_ = value;
  }
}

void ManagedCluster::save_state() const {
  std::string text = fmt::format(
      "# The managed cluster as pgslow left it; read at each start.\nport={}\npg_bin={}\n", port_,
      pg_bin_ ? pg_bin_->string() : "");
  write_file_durably(state_file_, text);
}

fs::path ManagedCluster::bin() const {
  if (!pg_bin_ && options_.pg_version && !options_.pg_bin) {
    pg_bin_ = pg_bin_for_version(*options_.pg_version);
  } else if (!pg_bin_) {
    PgBinSearch search;
    search.explicit_dir = options_.pg_bin;
    pg_bin_ = find_pg_bin(search);
  }
  return *pg_bin_;
}

std::string ManagedCluster::describe() const {
  return fmt::format("managed cluster in {} (port {})", cluster_dir_.string(), port_);
}

std::string ManagedCluster::conninfo() const {
  return pg::local_socket_conninfo(socket_dir_.string(), std::to_string(port_), "postgres");
}

std::optional<int> ManagedCluster::running_pid() const {
  auto f = pg::read_postmaster_pid(data_dir_);
  if (f && is_live_postgres(f->pid)) return f->pid;
  return std::nullopt;
}

bool ManagedCluster::is_running() const {
  return running_pid().has_value();
}

bool ManagedCluster::is_initialized() const {
  std::error_code ec;
  return fs::exists(data_dir_ / "PG_VERSION", ec);
}

void ManagedCluster::remove_stale_pid_file() {
  auto f = pg::read_postmaster_pid(data_dir_);
  if (!f || is_live_postgres(f->pid)) return;
  // The server crashed or was killed. PostgreSQL would refuse to start if the pid had since
  // been reused by an unrelated process, so the file goes. Both folders belong to the
  // server's user: names are removed through descriptors, never followed.
  spdlog::info("removing the stale postmaster.pid of process {}, which is gone", f->pid);
  UniqueFd data = open_folder(data_dir_);
  remove_file_in(data.get(), "postmaster.pid", data_dir_ / "postmaster.pid");
  UniqueFd socket = open_folder(socket_dir_);
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(socket_dir_, ec)) {
    std::string name = entry.path().filename().string();
    if (name.ends_with(".lock")) remove_file_in(socket.get(), name, entry.path());
  }
}

std::string ManagedCluster::group_name() const {
  return fmt::format("pgslow-{:016x}", std::hash<std::string>{}(cluster_dir_.string()));
}

CgroupGroup ManagedCluster::envelope_group() const {
  return CgroupGroup(group_name(), options_.envelope);
}

void ManagedCluster::set_envelope(const Envelope& envelope) {
  if (envelope == options_.envelope) return;
  const CgroupGroup group(group_name(), envelope);  // refuses what the host cannot make
  const auto pid = running_pid();
  if (!pid || !group.holds(*pid)) {
    throw RuntimeError(fmt::format(
        "the managed cluster cannot take the envelope {} in place: it {} (envelope {}); a "
        "restart into it would be needed",
        envelope.describe(), pid ? "runs in a group of other controllers" : "is not running",
        options_.envelope.empty() ? std::string("none") : options_.envelope.describe()));
  }
  group.set_limits();
  spdlog::info("the server's envelope is now {} ({})", envelope.describe(), group.mechanism());
  options_.envelope = envelope;
}

std::string ManagedCluster::envelope() const {
  if (options_.envelope.empty()) return "";
  return fmt::format("{} ({})", options_.envelope.describe(), envelope_group().mechanism());
}

std::optional<std::uint64_t> ManagedCluster::out_of_memory_kills() const {
  if (options_.envelope.memory_bytes == 0) return std::nullopt;
  return envelope_group().out_of_memory_kills();
}

void ManagedCluster::start(std::chrono::seconds timeout) {
  // Refuses an envelope the host cannot make before anything changes.
  CgroupGroup group = envelope_group();
  if (auto pid = running_pid()) {
    if (group.holds(*pid)) {
      // Limits apply to the processes already in a group: no restart for a new size.
      if (!options_.envelope.empty()) group.set_limits();
      spdlog::info("the managed cluster is already running (pid {}, port {})", *pid, port_);
      // A postmaster writes its pid file before it accepts connections: one that another
      // pgslow started (a restart a kill -9 interrupted) may still be starting up.
      wait_until_accepting(conninfo(), timeout);
      return;
    }
    if (!options_.envelope.empty()) group.create();  // a refusal leaves the server running
    spdlog::info("restarting the managed cluster to {}",
                 options_.envelope.empty()
                     ? std::string("run it without an envelope")
                     : "give it the envelope " + options_.envelope.describe());
    stop();
  }
  prepare_workdir();
  initdb();
  remove_stale_pid_file();
  if (!options_.envelope.empty()) group.create();
  start_server(timeout, group);
}

void ManagedCluster::start_server(std::chrono::seconds timeout, const CgroupGroup& group) {
  const std::int64_t deadline = now_us() + std::chrono::microseconds(timeout).count();
  for (int attempt = 1;; ++attempt) {
    choose_port();
    write_settings();
    save_state();
    std::uintmax_t log_offset = log_size(log_file_);
    auto left = std::chrono::seconds(std::max<std::int64_t>(1, (deadline - now_us()) / 1000000));
    std::vector<std::string> argv = {
        (bin() / "pg_ctl").string(), "start", "-D", data_dir_.string(),          "-l",
        log_file_.string(),          "-w",    "-t", std::to_string(left.count())};
    ProcessOptions o;
    o.run_as = server_user();
    o.timeout = left + std::chrono::seconds(10);
    // pg_ctl joins the envelope's cgroup before it runs (the child writes to cgroup.procs while
    // still root), so the postmaster and everything it forks are in it from their first page:
    // moving the postmaster after the start would leave the startup process's reads and the
    // first backends outside, and race with them.
    std::vector<UniqueFd> cgroup_procs;
    if (!options_.envelope.empty()) cgroup_procs = group.open_procs();
    for (const UniqueFd& fd : cgroup_procs) o.join_cgroups.push_back(fd.get());
    auto r = run_process(argv, o);
    if (r.ok()) {
      spdlog::debug("started: {}", trim(r.output));
      break;
    }
    std::string log = read_log_since(log_file_, log_offset);
    bool port_race = options_.port == 0 && log.find("could not bind") != std::string::npos;
    // Right after a kill -9 of the postmaster its children may still hold the old shared
    // memory for a moment; they exit as soon as they notice the postmaster is gone.
    bool orphans = log.find("pre-existing shared memory block") != std::string::npos;
    if ((port_race || orphans) && attempt < 5 && now_us() < deadline) {
      if (port_race) port_ = 0;
      spdlog::info("the server did not start ({}); trying again",
                   port_race ? "its port was taken" : "old server processes still exiting");
      std::this_thread::sleep_for(std::chrono::milliseconds(200 * attempt));
      continue;
    }
    std::string tail = last_lines(log.empty() ? r.output : log, 20);
    throw RuntimeError(
        fmt::format("the managed cluster did not start ({}: {}). Last lines of {}:\n{}",
                    r.timed_out ? "timed out" : "pg_ctl failed", trim(last_lines(r.output, 2)),
                    log_file_.string(), tail));
  }
  // pg_ctl -w waits for the postmaster to say it is ready; one query proves it.
  auto conn = pg::Connection::open(conninfo());
  conn.exec("SELECT 1");
  spdlog::info("the managed cluster is running on port {} (socket in {})", port_,
               socket_dir_.string());
}

void ManagedCluster::stop() {
  auto pid = running_pid();
  if (!pid) {
    envelope_group().remove();  // what a crashed server left
    spdlog::info("the managed cluster is not running");
    return;
  }
  std::vector<std::string> argv = {(bin() / "pg_ctl").string(),
                                   "stop",
                                   "-D",
                                   data_dir_.string(),
                                   "-m",
                                   "fast",
                                   "-w",
                                   "-t",
                                   "60"};
  ProcessOptions o;
  o.run_as = server_user();
  o.timeout = std::chrono::seconds(70);
  auto r = run_process(argv, o);
  if (!r.ok()) {
    // pg_ctl finds no PID file when the postmaster is already on its way out (a shutdown that
    // a killed pgslow started): removing the file is the last thing it does, so wait for that
    // process to be gone rather than fail.
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    while (is_live_postgres(*pid) && std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    if (is_live_postgres(*pid)) {
      throw RuntimeError(fmt::format("cannot stop the managed cluster (pid {}): {}\n{}", *pid,
                                     r.describe_status(), last_lines(r.output, 10)));
    }
  }
  envelope_group().remove();
  spdlog::info("stopped the managed cluster");
}

void ManagedCluster::destroy() {
  if (is_running()) stop();
  // The cluster folder belongs to the server's user: removed one descriptor step at a time,
  // so a link planted inside never leads root's removal elsewhere.
  remove_tree(cluster_dir_);
  if (!socket_dir_.string().starts_with(cluster_dir_.string())) remove_tree(socket_dir_);
  std::error_code ec;
  fs::remove(state_file_, ec);
  spdlog::info("removed the managed cluster in {}", cluster_dir_.string());
}

void ManagedCluster::keep_log_bounded() {
  std::error_code ec;
  if (!fs::exists(log_file_, ec)) return;  // not started yet: no log, no folder
  try {
    cap_log(log_file_);
  } catch (const Error& e) {
    // A log that cannot be rotated costs disk, not the run.
    spdlog::warn("the server log was not rotated: {}", e.what());
  }
}

void ManagedCluster::restart(std::chrono::seconds timeout) {
  if (is_running()) stop();
  start(timeout);
}

void ManagedCluster::reload() {
  auto conn = pg::Connection::open(conninfo());
  conn.exec("SELECT pg_reload_conf()");
}

std::string cluster_folder(std::optional<int> major, std::optional<int> default_major) {
  if (!major || major == default_major) return "cluster";
  return fmt::format("cluster-{}", *major);
}

namespace {

// The first line of the default cluster's PG_VERSION; nullopt when there is none. The folders
// below the workdir belong to the server's user: each step follows no link of theirs, and a
// file longer than a version is refused (RuntimeError naming it), never read whole.
std::optional<std::string> default_cluster_version_line(const fs::path& workdir) {
  std::error_code ec;
  if (!fs::is_directory(workdir, ec)) return std::nullopt;
  UniqueFd dir = open_folder(workdir);
  fs::path shown = workdir;
  for (const char* step : {"cluster", "data"}) {
    shown /= step;
    dir = open_folder_in(dir.get(), step, shown);
    if (!dir) return std::nullopt;
  }
  std::optional<std::string> text =
      read_file_in(dir.get(), "PG_VERSION", shown / "PG_VERSION", pg::kMaxServerFile);
  if (!text || text->empty()) return std::nullopt;
  return text->substr(0, text->find('\n'));
}

}  // namespace

std::optional<int> default_cluster_major(const fs::path& workdir,
                                         const std::optional<fs::path>& pg_bin) {
  const std::optional<std::string> line = default_cluster_version_line(workdir);
  try {
    if (line) return parse_major_version(*line);
    PgBinSearch search;
    search.explicit_dir = pg_bin;
    const std::string version = server_program_version(find_pg_bin(search));
    if (!version.empty()) return parse_major_version(version);
  } catch (const Error&) {
    // No programs found, or a version pgslow does not support: no default version to match.
  }
  return std::nullopt;
}

std::vector<ManagedOptions> workdir_clusters(const fs::path& workdir) {
  std::vector<ManagedOptions> out;
  std::error_code ec;
  if (fs::is_directory(workdir / "cluster", ec)) {
    ManagedOptions o;
    o.workdir = workdir;
    out.push_back(o);
  }
  const std::optional<int> default_major =
      out.empty() ? std::nullopt : default_cluster_major(workdir, std::nullopt);
  for (int major = kOldestMajor; major <= kNewestMajor; ++major) {
    // A cluster-<major> of the default's own version (left by an older pgslow) is no longer
    // reached: --pg-version <major> names the default cluster.
    if (major == default_major || !fs::is_directory(workdir / cluster_folder(major, {}), ec))
      continue;
    ManagedOptions o;
    o.workdir = workdir;
    o.pg_version = major;
    out.push_back(o);
  }
  return out;
}

ClusterStatus ManagedCluster::status() const {
  ClusterStatus s;
  s.initialized = is_initialized();
  s.port = port_;
  s.socket_dir = socket_dir_;
  s.data_dir = data_dir_;
  s.log_file = log_file_;
  if (s.initialized) s.size_bytes = directory_size(data_dir_);
  auto f = pg::read_postmaster_pid(data_dir_);
  if (f && is_live_postgres(f->pid)) {
    s.running = true;
    s.pid = f->pid;
    if (f->start_epoch > 0) {
      s.uptime =
          std::chrono::seconds(std::max<std::int64_t>(0, std::time(nullptr) - f->start_epoch));
    }
    try {
      auto conn = pg::Connection::open(conninfo());
      if (auto v = conn.query_value("SHOW server_version")) s.version = split(*v, ' ')[0];
    } catch (const std::exception& e) {
      spdlog::debug("cannot ask the server its version: {}", e.what());
    }
  }
  try {
    s.pg_bin = bin();
    if (s.version.empty()) s.version = server_program_version(s.pg_bin);
  } catch (const RuntimeError& e) {
    spdlog::debug("{}", e.what());
  }
  return s;
}

}  // namespace pgslow::server
