#include "common/process.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <grp.h>
#include <poll.h>
#include <pwd.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "common/clock.h"
#include "common/errors.h"

extern char** environ;

namespace pgslow {

namespace {

struct Fd {
  int fd = -1;
  Fd() = default;
  explicit Fd(int f) : fd(f) {}
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  ~Fd() { reset(); }
  void reset() {
    if (fd >= 0) ::close(fd);
    fd = -1;
  }
};

std::string name_of(const std::string& entry) {
  return entry.substr(0, entry.find('='));
}

// The child's environment: ours, with `overrides` ("NAME=value") replacing or adding entries.
std::vector<std::string> inherited_environment(const std::vector<std::string>& overrides) {
  std::vector<std::string> env;
  for (char** e = environ; e && *e; ++e) {
    std::string entry(*e);
    bool replaced = false;
    for (const auto& o : overrides) replaced = replaced || name_of(o) == name_of(entry);
    if (!replaced) env.push_back(std::move(entry));
  }
  env.insert(env.end(), overrides.begin(), overrides.end());
  return env;
}

// Locale and time zone: how the server words its messages and reads times, nothing secret.
bool allowed_from_ours(const std::string& name) {
  if (name == "LANG" || name == "LANGUAGE" || name == "TZ") return true;
  return name.size() > 3 && name.starts_with("LC_") &&
         name.find_first_not_of("ABCDEFGHIJKLMNOPQRSTUVWXYZ_", 3) == std::string::npos;
}

std::vector<char*> c_strings(std::vector<std::string>& v) {
  std::vector<char*> out;
  for (auto& s : v) out.push_back(s.data());
  out.push_back(nullptr);
  return out;
}

void append_capped(std::string& out, const char* data, std::size_t n, std::size_t cap) {
  out.append(data, n);
  if (out.size() > cap) out.erase(0, out.size() - cap);
}

}  // namespace

std::vector<std::string> minimal_environment(const std::vector<std::string>& ours,
                                             const std::vector<std::string>& overrides) {
  std::vector<std::string> env;
  auto overridden = [&](const std::string& name) {
    for (const auto& o : overrides) {
      if (name_of(o) == name) return true;
    }
    return false;
  };
  for (const std::string& entry : ours) {
    const std::string name = name_of(entry);
    if (entry.find('=') != std::string::npos && allowed_from_ours(name) && !overridden(name))
      env.push_back(entry);
  }
  if (!overridden("PATH")) env.push_back(std::string("PATH=") + kSystemPath);
  env.insert(env.end(), overrides.begin(), overrides.end());
  return env;
}

std::string ProcessResult::describe_status() const {
  if (timed_out) return "timed out (killed)";
  if (signal != 0) return fmt::format("killed by signal {} ({})", signal, ::strsignal(signal));
  return fmt::format("exit status {}", exit_code);
}

bool running_as_root() {
  return ::geteuid() == 0;
}

std::optional<SystemUser> find_system_user(const std::string& name) {
  struct passwd pw {};
  struct passwd* found = nullptr;
  std::vector<char> buf(16384);
  if (::getpwnam_r(name.c_str(), &pw, buf.data(), buf.size(), &found) != 0 || found == nullptr)
    return std::nullopt;
  return SystemUser{pw.pw_uid, pw.pw_gid, pw.pw_name, pw.pw_dir ? pw.pw_dir : "/"};
}

namespace {

// What the child needs, prepared before fork: between fork and exec only async-signal-safe
// calls are allowed (we may have threads).
struct ChildSetup {
  bool switch_user = false;
  SystemUser user;
  std::vector<gid_t> groups;
  std::vector<std::string> args;
  std::vector<std::string> env;
  std::vector<char*> c_argv;  // into args
  std::vector<char*> c_env;   // into env
  std::string cwd;
};

void prepare_child(const std::vector<std::string>& argv, const ProcessOptions& options,
                   ChildSetup& child) {
  std::vector<std::string> env_overrides = options.env;
  if (options.run_as && running_as_root()) {
    auto u = find_system_user(*options.run_as);
    if (!u) {
      throw RuntimeError(fmt::format("cannot run {} as user \"{}\": there is no such user", argv[0],
                                     *options.run_as));
    }
    if (u->uid != ::geteuid()) {
      child.switch_user = true;
      child.user = *u;
      int n = 64;
      child.groups.resize(static_cast<std::size_t>(n));
      if (::getgrouplist(child.user.name.c_str(), child.user.gid, child.groups.data(), &n) < 0) {
        child.groups.resize(static_cast<std::size_t>(n));
        ::getgrouplist(child.user.name.c_str(), child.user.gid, child.groups.data(), &n);
      }
      child.groups.resize(static_cast<std::size_t>(n));
      env_overrides.push_back("HOME=" + child.user.home);
      env_overrides.push_back("USER=" + child.user.name);
      env_overrides.push_back("LOGNAME=" + child.user.name);
    }
  }
  child.args = argv;
  child.c_argv = c_strings(child.args);
  if (child.switch_user) {
    std::vector<std::string> ours;
    for (char** e = environ; e && *e; ++e) ours.emplace_back(*e);
    child.env = minimal_environment(ours, env_overrides);
  } else {
    child.env = inherited_environment(env_overrides);
  }
  child.c_env = c_strings(child.env);
  child.cwd = options.cwd ? options.cwd->string() : (child.switch_user ? "/" : "");
}

// Standard input from memory: a memfd holds it whole, so the child reads at its own pace and
// a child that never reads cannot block us on a full pipe.
void write_input(Fd& input, const std::string& bytes) {
  input.fd = ::memfd_create("pgslow-stdin", MFD_CLOEXEC);
  if (input.fd < 0)
    throw RuntimeError(fmt::format("cannot create a memfd: {}", std::strerror(errno)));
  std::size_t done = 0;
  while (done < bytes.size()) {
    ssize_t n = ::write(input.fd, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) throw RuntimeError(fmt::format("cannot write a memfd: {}", std::strerror(errno)));
    done += static_cast<std::size_t>(n);
  }
  ::lseek(input.fd, 0, SEEK_SET);
}

// In the child, after fork: only async-signal-safe calls. A failed step writes {step, errno}
// to `report_fd`.
[[noreturn]] void exec_child(const ChildSetup& child, const ProcessOptions& options, int input_fd,
                             int output_fd, int report_fd, int last_fd) {
  // Own process group, so a timeout kills its children too.
  ::setpgid(0, 0);
  int in = input_fd >= 0 ? input_fd : ::open("/dev/null", O_RDONLY);
  if (in >= 0) ::dup2(in, 0);
  ::dup2(output_fd, 1);
  ::dup2(output_fd, 2);
  int step = 0;  // which call failed, reported with errno
  for (int fd : options.join_cgroups) {
    // "0": the writing process itself (the kernel's cgroup.procs convention).
    if (step == 0 && ::write(fd, "0", 1) != 1) step = 6;
  }
  if (step == 0 && child.switch_user) {
    if (::setgroups(child.groups.size(), child.groups.data()) != 0)
      step = 1;
    else if (::setgid(child.user.gid) != 0)
      step = 2;
    else if (::setuid(child.user.uid) != 0)
      step = 3;
  }
  if (step == 0 && !child.cwd.empty() && ::chdir(child.cwd.c_str()) != 0) step = 4;
  // Nothing but 0, 1 and 2 reaches the program: a descriptor root inherited (`pgslow server
  // start 9>>/root-only-file`) would let the server's user write through it. Marked
  // close-on-exec rather than closed, so a failed exec still reports on err_pipe.
  if (step == 0 && ::close_range(3, ~0U, CLOSE_RANGE_CLOEXEC) != 0) {
    for (int fd = 3; fd < last_fd; ++fd) ::fcntl(fd, F_SETFD, FD_CLOEXEC);
  }
  if (step == 0) {
    ::execvpe(child.c_argv[0], child.c_argv.data(), child.c_env.data());
    step = 5;
  }
  int report[2] = {step, errno};
  ssize_t ignored = ::write(report_fd, report, sizeof report);
  (void)ignored;
  ::_exit(127);
}

// A good exec closes the report pipe (O_CLOEXEC) and read() sees end of file; else the child
// is reaped and RuntimeError names the step that failed.
void throw_if_exec_failed(int report_fd, pid_t pid, const ChildSetup& child) {
  int report[2] = {0, 0};
  ssize_t got;
  do {
    got = ::read(report_fd, report, sizeof report);
  } while (got < 0 && errno == EINTR);
  if (got != static_cast<ssize_t>(sizeof report)) return;
  int status = 0;
  ::waitpid(pid, &status, 0);
  static constexpr const char* kSteps[] = {
      "",    "set the groups of",       "set the group of", "switch to user", "enter the directory",
      "run", "join the server's cgroup"};
  std::string what = report[0] == 4   ? fmt::format("enter the directory {}", child.cwd)
                     : report[0] == 5 ? fmt::format("run {}", child.args[0])
                     : report[0] == 6 ? std::string(kSteps[6])
                                      : fmt::format("{} {}", kSteps[report[0]], child.user.name);
  throw RuntimeError(fmt::format(
      "cannot {}: {}{}", what, std::strerror(report[1]),
      report[0] == 5 && report[1] == ENOENT ? " (not found; is it installed and in PATH?)" : ""));
}

// Reads the child's output until it ends (or the child exits and leaves the pipe to a
// grandchild, or the timeout kills it), then reaps it.
ProcessResult collect_output(pid_t pid, int output_fd, const ProcessOptions& options) {
  ProcessResult result;
  const std::int64_t deadline_us =
      options.timeout.count() > 0 ? now_us() + options.timeout.count() * 1000 : 0;
  bool exited = false;
  int status = 0;
  char buf[8192];
  for (;;) {
    int wait_ms = 50;
    if (deadline_us != 0) {
      std::int64_t left_ms = (deadline_us - now_us()) / 1000;
      if (left_ms <= 0) {
        result.timed_out = true;
        ::kill(-pid, SIGKILL);
        ::kill(pid, SIGKILL);
        break;
      }
      wait_ms = static_cast<int>(std::min<std::int64_t>(left_ms, wait_ms));
    }
    struct pollfd p {
      output_fd, POLLIN, 0
    };
    int r = ::poll(&p, 1, wait_ms);
    if (r < 0 && errno != EINTR) break;
    if (r > 0) {
      ssize_t n = ::read(output_fd, buf, sizeof buf);
      if (n > 0) {
        append_capped(result.output, buf, static_cast<std::size_t>(n), options.max_output);
        continue;
      }
      if (n == 0) break;  // every writer is gone
      if (errno != EINTR && errno != EAGAIN) break;
      continue;
    }
    // Quiet for a moment: has the child exited while a background grandchild keeps the pipe
    // open (e.g. a user's restart command that starts a daemon)? Then stop reading.
    if (::waitpid(pid, &status, WNOHANG) == pid) {
      exited = true;
      ::fcntl(output_fd, F_SETFL, O_NONBLOCK);
      ssize_t n;
      while ((n = ::read(output_fd, buf, sizeof buf)) > 0)
        append_capped(result.output, buf, static_cast<std::size_t>(n), options.max_output);
      break;
    }
  }
  if (!exited) {
    while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
  }
  if (WIFEXITED(status)) {
    result.exit_code = WEXITSTATUS(status);
  } else if (WIFSIGNALED(status)) {
    result.signal = WTERMSIG(status);
    result.exit_code = -1;
  }
  return result;
}

}  // namespace

ProcessResult run_process(const std::vector<std::string>& argv, const ProcessOptions& options) {
  if (argv.empty() || argv[0].empty()) throw RuntimeError("run_process: no program given");

  ChildSetup child;
  prepare_child(argv, options, child);
  Fd input;
  if (options.input) write_input(input, *options.input);

  int out_pipe[2];
  int err_pipe[2];  // the child reports a failed exec (errno) here; closed by a good exec
  if (::pipe2(out_pipe, O_CLOEXEC) != 0) throw RuntimeError("cannot create a pipe");
  Fd out_read(out_pipe[0]), out_write(out_pipe[1]);
  if (::pipe2(err_pipe, O_CLOEXEC) != 0) throw RuntimeError("cannot create a pipe");
  Fd err_read(err_pipe[0]), err_write(err_pipe[1]);

  // The highest descriptor the child may have to close, when close_range cannot (below).
  const long open_max = ::sysconf(_SC_OPEN_MAX);
  const int last_fd = open_max > 0 && open_max < 65536 ? static_cast<int>(open_max) : 65536;

  pid_t pid = ::fork();
  if (pid < 0) throw RuntimeError(fmt::format("cannot fork: {}", std::strerror(errno)));
  if (pid == 0) exec_child(child, options, input.fd, out_pipe[1], err_pipe[1], last_fd);
  out_write.reset();
  err_write.reset();

  throw_if_exec_failed(err_read.fd, pid, child);
  return collect_output(pid, out_read.fd, options);
}

std::string shell_quote(const std::vector<std::string>& argv) {
  std::string out;
  for (const auto& a : argv) {
    if (!out.empty()) out += ' ';
    bool plain = !a.empty() && a.find_first_not_of(
                                   "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRST"
                                   "UVWXYZ0123456789_-./=:,+@%") == std::string::npos;
    if (plain) {
      out += a;
      continue;
    }
    out += '\'';
    for (char c : a) {
      if (c == '\'')
        out += "'\\''";
      else
        out += c;
    }
    out += '\'';
  }
  return out;
}

std::string last_lines(const std::string& text, std::size_t lines) {
  std::size_t end = text.size();
  while (end > 0 && (text[end - 1] == '\n' || text[end - 1] == '\r')) --end;
  std::size_t begin = end;
  for (std::size_t n = 0; n < lines && begin > 0; ++n) {
    std::size_t nl = text.rfind('\n', begin - 1);
    begin = nl == std::string::npos ? 0 : nl;
    if (nl == std::string::npos) break;
  }
  if (begin < end && text[begin] == '\n') ++begin;
  return text.substr(begin, end - begin);
}

}  // namespace pgslow
