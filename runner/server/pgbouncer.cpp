#include "server/pgbouncer.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <signal.h>
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstring>
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
#include "pg/error.h"
#include "server/managed_cluster.h"
#include "server/pg_binaries.h"
#include "server/pooler.h"
#include "server/server_log.h"

namespace pgslow::server {

namespace fs = std::filesystem;

namespace {

// The pid file is the server's user's: read bounded.
constexpr std::size_t kMaxPidFile = 64;

// The first line of /proc/<pid>/<what>.
std::string proc_text(int pid, const char* what) {
  std::ifstream in(fmt::format("/proc/{}/{}", pid, what));
  std::string text;
  std::getline(in, text);
  return text;
}

// Whether `pid` is a PgBouncer running `ini` (a reused pid of something else is not).
bool runs_config(int pid, const fs::path& ini) {
  if (!is_live_pgbouncer(pid)) return false;
  std::string cmdline = proc_text(pid, "cmdline");  // NUL-separated: one "line"
  std::replace(cmdline.begin(), cmdline.end(), '\0', ' ');
  return cmdline.find(ini.string()) != std::string::npos;
}

void wait_gone(int pid, std::chrono::milliseconds limit) {
  const std::int64_t deadline = now_us() + std::chrono::microseconds(limit).count();
  while (is_live_pgbouncer(pid) && now_us() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

// Ends PgBouncer `pid`: SIGTERM is its immediate shutdown (clients are cut, as a pooler that
// pgslow started serves only pgslow's clients); SIGKILL when it has not gone after 10 s.
void end_process(int pid) {
  ::kill(pid, SIGTERM);
  wait_gone(pid, std::chrono::seconds(10));
  if (is_live_pgbouncer(pid)) {
    ::kill(pid, SIGKILL);
    wait_gone(pid, std::chrono::seconds(5));
  }
  if (is_live_pgbouncer(pid)) {
    throw RuntimeError(fmt::format("PgBouncer (pid {}) did not stop, even after SIGKILL", pid));
  }
}

// Paths go into pgbouncer.ini and its connection string unquoted: refuse what would need quotes.
void require_plain_path(const fs::path& p) {
  if (p.string().find_first_of(" '\"\\;=\t\n") != std::string::npos) {
    throw RuntimeError(fmt::format(
        "the pooler cannot use {}: its path has a space, quote, ';' or '=', which PgBouncer's "
        "configuration cannot hold; pass --workdir with a plain path",
        p.string()));
  }
}

}  // namespace

bool is_live_pgbouncer(int pid) {
  if (pid <= 0) return false;
  std::string stat = proc_text(pid, "stat");
  auto open = stat.find('(');
  auto close = stat.rfind(')');
  if (open == std::string::npos || close == std::string::npos || close + 2 >= stat.size())
    return false;
  char state = stat[close + 2];
  return state != 'Z' && state != 'X' && stat.substr(open + 1, close - open - 1) == "pgbouncer";
}

std::string pgbouncer_version(const fs::path& program) {
  try {
    ProcessOptions o;
    o.run_as = server_os_user();
    o.timeout = std::chrono::seconds(10);
    auto r = run_process({program.string(), "--version"}, o);
    // "PgBouncer 1.18.0\nlibevent ..."
    if (!r.ok() || !r.output.starts_with("PgBouncer ")) return "";
    std::string first = r.output.substr(0, r.output.find('\n'));
    return trim(first.substr(std::string("PgBouncer ").size()));
  } catch (const Error&) {
    return "";
  }
}

PgBouncer::PgBouncer(PgBouncerOptions options)
    : options_(std::move(options)), settings_(options_.settings) {
  if (options_.workdir.empty()) options_.workdir = ".pgslow";
  options_.workdir = fs::absolute(options_.workdir).lexically_normal();
  folder_ = options_.workdir / "pooler";
  state_file_ = options_.workdir / "pooler.state";
}

PgBouncer::~PgBouncer() {
  try {
    stop();
  } catch (const std::exception& e) {
    spdlog::error("stopping PgBouncer failed: {}; stop pid {} by hand", e.what(), pid_.value_or(0));
  }
}

std::string PgBouncer::conninfo(const std::string& dbname) const {
  return pg::local_socket_conninfo(socket_dir().string(), std::to_string(port_), dbname);
}

std::string PgBouncer::admin_conninfo() const {
  return conninfo("pgbouncer");
}

fs::path PgBouncer::socket_dir() const {
  return socket_folder(folder_, folder_.string(), "pooler");
}

void PgBouncer::prepare_folder() {
  std::optional<SystemUser> user;
  if (auto name = server_os_user()) user = find_system_user(*name);
  require_plain_path(folder_);
  require_plain_path(options_.server_socket_dir);
  UniqueFd workdir = create_workdir(options_.workdir);
  UniqueFd folder = make_folder_in(workdir.get(), folder_.filename(), folder_);
  make_server_private(folder.get(), folder_, user);
  if (socket_dir() != folder_) {
    UniqueFd parent = open_socket_parent(socket_dir());
    UniqueFd socket = make_folder_in(parent.get(), socket_dir().filename(), socket_dir());
    make_server_private(socket.get(), socket_dir(), user);
  }
}

std::map<std::string, std::string> PgBouncer::written_settings() const {
  std::map<std::string, std::string> all = settings_;
  all.try_emplace("max_client_conn", pooler_setting_value({}, "max_client_conn"));
  for (const auto& name : ever_set_) all.try_emplace(name, pooler_setting_value({}, name));
  return all;
}

std::string PgBouncer::ini() const {
  std::string text = fmt::format(
      "; Written by pgslow at each start and change of its pooler: edits here are lost.\n"
      "[databases]\n"
      "; Every database, to the managed cluster's private socket.\n"
      "* = host={} port={} user=postgres\n"
      "[pgbouncer]\n"
      "; Only a Unix socket in this private folder: no TCP, so `trust` reaches only root and\n"
      "; the server's user, as the cluster's own socket does. users.txt holds no password.\n"
      "listen_addr =\n"
      "listen_port = {}\n"
      "unix_socket_dir = {}\n"
      "unix_socket_mode = 0700\n"
      "auth_type = trust\n"
      "auth_file = {}\n"
      "admin_users = postgres\n"
      "pidfile = {}\n"
      "logfile = {}\n"
      "; The driver's clients send these; PgBouncer would refuse them otherwise.\n"
      "ignore_startup_parameters = extra_float_digits,options\n",
      options_.server_socket_dir.string(), options_.server_port, port_, socket_dir().string(),
      (folder_ / "users.txt").string(), (folder_ / "pgbouncer.pid").string(), log_file().string());
  for (const auto& [name, value] : written_settings())
    text += fmt::format("{} = {}\n", name, value);
  return text;
}

void PgBouncer::write_config() {
  UniqueFd folder = open_folder(folder_);
  FileOwnership owner{::geteuid(), ::getegid(), 0600};
  if (auto name = server_os_user()) {
    if (auto user = find_system_user(*name)) owner = FileOwnership{user->uid, user->gid, 0600};
  }
  replace_file_in(folder.get(), "users.txt", "\"postgres\" \"\"\n", owner, folder_ / "users.txt",
                  "users.txt.tmp.");
  replace_file_in(folder.get(), "pgbouncer.ini", ini(), owner, folder_ / "pgbouncer.ini",
                  "pgbouncer.ini.tmp.");
}

void PgBouncer::save_state() const {
  write_file_durably(state_file_,
                     fmt::format("# pgslow's PgBouncer, while it runs.\npid={}\nport={}\n"
                                 "# The pgslow process that started it.\nowner={}\n",
                                 pid_.value_or(0), port_, ::getpid()));
}

void PgBouncer::stop_left_over() {
  stop_left_over_pgbouncer(options_.workdir);
}

bool stop_left_over_pgbouncer(const fs::path& workdir) {
  const fs::path state_file = workdir / "pooler.state";
  require_trusted_workdir(workdir);
  UniqueFd fd(open_trusted_file(state_file, O_RDONLY));
  if (!fd) return false;
  int pid = 0;
  int owner = 0;
  for (const std::string& line : split(read_all(fd.get(), state_file, 4096), '\n')) {
    if (line.starts_with("pid=")) pid = std::atoi(line.c_str() + 4);
    if (line.starts_with("owner=")) owner = std::atoi(line.c_str() + 6);
  }
  // The pgslow that started it still runs (another command in this workdir): it is its own.
  if (owner > 0 && owner != ::getpid() && ::kill(owner, 0) == 0 &&
      proc_text(owner, "comm") == "pgslow")
    return false;
  bool stopped = false;
  if (runs_config(pid, workdir / "pooler" / "pgbouncer.ini")) {
    spdlog::warn("stopping the PgBouncer (pid {}) an interrupted run left running", pid);
    end_process(pid);
    stopped = true;
  }
  std::error_code ec;
  fs::remove(state_file, ec);
  return stopped;
}

void PgBouncer::start(std::chrono::seconds timeout) {
  if (is_running()) return;
  pid_.reset();  // one that died: the new process has its own
  stop_left_over();
  version_ = pgbouncer_version(options_.program);
  if (version_.empty()) {
    throw RuntimeError(
        fmt::format("the pooler needs PgBouncer, and {} does not run: install it with "
                    "`scripts/install-deps.sh run` (Debian's pgbouncer package)",
                    options_.program.string()));
  }
  std::vector<std::string> problems;
  for (const auto& [name, value] : settings_) {
    if (auto why = check_pooler_setting(name, value, version_)) problems.push_back(*why);
  }
  if (!problems.empty()) throw InputError(fmt::format("pooler: {}", fmt::join(problems, "; ")));
  prepare_folder();
  port_ = pick_free_port();
  write_config();
  const std::uintmax_t log_offset = log_size(log_file());
  ProcessOptions o;
  o.run_as = server_os_user();
  o.timeout = std::chrono::seconds(10);
  // -d: PgBouncer checks its configuration, opens its socket and then goes to the background.
  const std::vector<std::string> argv = {options_.program.string(), "-d",
                                         (folder_ / "pgbouncer.ini").string()};
  auto r = run_process(argv, o);
  auto failed = [&](const std::string& why) {
    std::string log = read_log_since(log_file(), log_offset);
    return RuntimeError(fmt::format("PgBouncer did not start ({}): {}\nLast lines of {}:\n{}", why,
                                    shell_quote(argv), log_file().string(),
                                    last_lines(log.empty() ? r.output : log, 20)));
  };
  if (!r.ok()) throw failed(r.describe_status());
  UniqueFd folder = open_folder(folder_);
  const std::int64_t deadline = now_us() + std::chrono::microseconds(timeout).count();
  for (;;) {
    // The pid file is written once the daemon runs; the admin console answers once it listens.
    if (!pid_) {
      auto text =
          read_file_in(folder.get(), "pgbouncer.pid", folder_ / "pgbouncer.pid", kMaxPidFile);
      int pid = text ? std::atoi(text->c_str()) : 0;
      if (runs_config(pid, folder_ / "pgbouncer.ini")) {
        pid_ = pid;
        save_state();
      }
    }
    if (pid_) {
      try {
        pg::Connection::open(admin_conninfo(), pg::SessionKind::kConsole).exec("SHOW VERSION");
        break;
      } catch (const pg::Error& e) {
        if (now_us() > deadline) throw failed(e.what());
      }
    } else if (now_us() > deadline) {
      throw failed("no PgBouncer process with its pid file");
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  spdlog::info("PgBouncer {} is running (pid {}, socket {}/.s.PGSQL.{})", version_, *pid_,
               socket_dir().string(), port_);
}

bool PgBouncer::is_running() const {
  return pid_ && runs_config(*pid_, folder_ / "pgbouncer.ini");
}

void PgBouncer::stop() {
  if (!pid_) return;
  if (is_running()) end_process(*pid_);
  spdlog::info("stopped PgBouncer (pid {})", *pid_);
  pid_.reset();
  std::error_code ec;
  fs::remove(state_file_, ec);
}

void PgBouncer::set(const std::map<std::string, std::string>& settings) {
  for (const auto& [name, value] : settings) {
    if (auto why = check_pooler_setting(name, value, version_)) throw InputError(*why);
  }
  for (const auto& entry : settings_) ever_set_.insert(entry.first);
  settings_ = settings;
  if (!is_running()) return;  // start() writes them
  write_config();
  auto admin = pg::Connection::open(admin_conninfo(), pg::SessionKind::kConsole);
  admin.exec("RELOAD");
  pg::Result config = admin.exec("SHOW CONFIG");
  const int key = config.column("key");
  const int value = config.column("value");
  const std::map<std::string, std::string> all = written_settings();
  for (int row = 0; row < config.rows(); ++row) {
    auto it = all.find(std::string(config.get(row, key)));
    if (it != all.end() && config.get(row, value) != it->second) {
      throw RuntimeError(fmt::format(
          "PgBouncer did not take {} = {} on RELOAD (it says {}). Last lines of {}:\n{}", it->first,
          it->second, config.get(row, value), log_file().string(), log_tail(10)));
    }
  }
}

PoolerStats PgBouncer::stats(const std::string& dbname) const {
  PoolerStats s;
  auto admin = pg::Connection::open(admin_conninfo(), pg::SessionKind::kConsole);
  pg::Result pools = admin.exec("SHOW POOLS");
  for (int row = 0; row < pools.rows(); ++row) {
    if (pools.get(row, pools.column("database")) != dbname) continue;
    s.clients_active += pools.get_int64(row, pools.column("cl_active"));
    s.clients_waiting += pools.get_int64(row, pools.column("cl_waiting"));
    s.servers_active += pools.get_int64(row, pools.column("sv_active"));
    s.servers_idle += pools.get_int64(row, pools.column("sv_idle"));
    s.servers_used += pools.get_int64(row, pools.column("sv_used"));
    s.max_wait_us =
        std::max(s.max_wait_us, pools.get_int64(row, pools.column("maxwait")) * 1'000'000 +
                                    pools.get_int64(row, pools.column("maxwait_us")));
  }
  pg::Result stats = admin.exec("SHOW STATS");
  for (int row = 0; row < stats.rows(); ++row) {
    if (stats.get(row, stats.column("database")) != dbname) continue;
    s.total_xact_count += stats.get_int64(row, stats.column("total_xact_count"));
    s.total_query_count += stats.get_int64(row, stats.column("total_query_count"));
    s.total_wait_time_us += stats.get_int64(row, stats.column("total_wait_time"));
  }
  pg::Result clients = admin.exec("SHOW CLIENTS");
  for (int row = 0; row < clients.rows(); ++row) {
    if (clients.get(row, clients.column("database")) != dbname ||
        clients.get(row, clients.column("state")) != "waiting")
      continue;
    s.current_wait_us += clients.get_int64(row, clients.column("wait")) * 1'000'000 +
                         clients.get_int64(row, clients.column("wait_us"));
  }
  return s;
}

namespace {

// Runs `command` on the admin console; an error whose message holds `expected` is the state
// the command asked for already (an unknown or unpaused database).
void admin_command(const std::string& conninfo, const std::string& verb, const std::string& dbname,
                   std::string_view expected) {
  // The console takes a bare name: pgslow's clone names are plain words.
  if (dbname.empty() || !std::all_of(dbname.begin(), dbname.end(), [](unsigned char c) {
        return std::isalnum(c) != 0 || c == '_';
      }))
    throw RuntimeError(
        fmt::format("internal: {} of database {} on PgBouncer's console", verb, printable(dbname)));
  const std::string command = verb + " " + dbname;
  auto admin = pg::Connection::open(conninfo, pg::SessionKind::kConsole);
  try {
    admin.exec(command);
  } catch (const pg::Error& e) {
    if (std::string_view(e.what()).find(expected) == std::string_view::npos) throw;
  }
}

}  // namespace

void PgBouncer::hold_database(const std::string& dbname) {
  if (!is_running()) return;
  admin_command(admin_conninfo(), "KILL", dbname, "no such database");
}

void PgBouncer::resume_database(const std::string& dbname) {
  if (!is_running()) return;
  admin_command(admin_conninfo(), "RESUME", dbname, "not paused");
}

void PgBouncer::reconnect_database(const std::string& dbname) {
  if (!is_running()) return;
  admin_command(admin_conninfo(), "RECONNECT", dbname, "no such database");
}

std::string PgBouncer::log_tail(std::size_t lines) const {
  const std::uintmax_t size = log_size(log_file());
  constexpr std::uintmax_t kTail = 64 * 1024;
  return last_lines(read_log_since(log_file(), size > kTail ? size - kTail : 0), lines);
}

}  // namespace pgslow::server
