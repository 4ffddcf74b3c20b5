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

// The child's environment: ours, with `overrides` ("NAME=value") replacing or adding entries.
std::vector<std::string> make_environment(const std::vector<std::string>& overrides) {
  std::vector<std::string> env;
  auto name_of = [](const std::string& entry) { return entry.substr(0, entry.find('=')); };
  for (char** e = environ; e && *e; ++e) {
    std::string entry(*e);
    bool replaced = false;
    for (const auto& o : overrides) replaced = replaced || name_of(o) == name_of(entry);
    if (!replaced) env.push_back(std::move(entry));
  }
  env.insert(env.end(), overrides.begin(), overrides.end());
  return env;
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

ProcessResult run_process(const std::vector<std::string>& argv, const ProcessOptions& options) {
  if (argv.empty() || argv[0].empty()) throw RuntimeError("run_process: no program given");

  // Everything the child needs is prepared before fork: between fork and exec only
  // async-signal-safe calls are allowed (we may have threads).
  std::vector<std::string> env_overrides = options.env;
  bool switch_user = false;
  SystemUser user;
  std::vector<gid_t> groups;
  if (options.run_as && running_as_root()) {
    auto u = find_system_user(*options.run_as);
    if (!u) {
      throw RuntimeError(fmt::format("cannot run {} as user \"{}\": there is no such user", argv[0],
                                     *options.run_as));
    }
    if (u->uid != ::geteuid()) {
      switch_user = true;
      user = *u;
      int n = 64;
      groups.resize(static_cast<std::size_t>(n));
      if (::getgrouplist(user.name.c_str(), user.gid, groups.data(), &n) < 0) {
        groups.resize(static_cast<std::size_t>(n));
        ::getgrouplist(user.name.c_str(), user.gid, groups.data(), &n);
      }
      groups.resize(static_cast<std::size_t>(n));
      env_overrides.push_back("HOME=" + user.home);
      env_overrides.push_back("USER=" + user.name);
      env_overrides.push_back("LOGNAME=" + user.name);
    }
  }
  std::vector<std::string> args = argv;
  std::vector<char*> c_argv = c_strings(args);
  std::vector<std::string> env = make_environment(env_overrides);
  std::vector<char*> c_env = c_strings(env);
  std::string cwd = options.cwd ? options.cwd->string() : (switch_user ? "/" : "");

  // Standard input from memory: a memfd holds it whole, so the child reads at its own pace and
  // a child that never reads cannot block us on a full pipe.
  Fd input;
  if (options.input) {
    input.fd = ::memfd_create("pgslow-stdin", MFD_CLOEXEC);
    if (input.fd < 0)
      throw RuntimeError(fmt::format("cannot create a memfd: {}", std::strerror(errno)));
    std::size_t done = 0;
    while (done < options.input->size()) {
      ssize_t n = ::write(input.fd, options.input->data() + done, options.input->size() - done);
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) throw RuntimeError(fmt::format("cannot write a memfd: {}", std::strerror(errno)));
      done += static_cast<std::size_t>(n);
    }
    ::lseek(input.fd, 0, SEEK_SET);
  }

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
  if (pid == 0) {
    // Child: own process group, so a timeout kills its children too.
    ::setpgid(0, 0);
    int in = input.fd >= 0 ? input.fd : ::open("/dev/null", O_RDONLY);
    if (in >= 0) ::dup2(in, 0);
    ::dup2(out_pipe[1], 1);
    ::dup2(out_pipe[1], 2);
    int step = 0;  // which call failed, reported with errno
    for (int fd : options.join_cgroups) {
      // "0": the writing process itself (the kernel's cgroup.procs convention).
      if (step == 0 && ::write(fd, "0", 1) != 1) step = 6;
    }
    if (step == 0 && switch_user) {
      if (::setgroups(groups.size(), groups.data()) != 0)
        step = 1;
      else if (::setgid(user.gid) != 0)
        step = 2;
      else if (::setuid(user.uid) != 0)
        step = 3;
    }
    if (step == 0 && !cwd.empty() && ::chdir(cwd.c_str()) != 0) step = 4;
    // Nothing but 0, 1 and 2 reaches the program: a descriptor root inherited (`pgslow server
    // start 9>>/root-only-file`) would let the server's user write through it. Marked
    // close-on-exec rather than closed, so a failed exec still reports on err_pipe.
    if (step == 0 && ::close_range(3, ~0U, CLOSE_RANGE_CLOEXEC) != 0) {
      for (int fd = 3; fd < last_fd; ++fd) ::fcntl(fd, F_SETFD, FD_CLOEXEC);
    }
    if (step == 0) {
      ::execvpe(c_argv[0], c_argv.data(), c_env.data());
      step = 5;
    }
    int report[2] = {step, errno};
    ssize_t ignored = ::write(err_pipe[1], report, sizeof report);
    (void)ignored;
    ::_exit(127);
  }
  out_write.reset();
  err_write.reset();

  // A good exec closes err_pipe (O_CLOEXEC) and read() sees end of file.
  int report[2] = {0, 0};
  ssize_t got;
  do {
    got = ::read(err_read.fd, report, sizeof report);
  } while (got < 0 && errno == EINTR);
  if (got == static_cast<ssize_t>(sizeof report)) {
    int status = 0;
    ::waitpid(pid, &status, 0);
    static constexpr const char* kSteps[] = {"",
                                             "set the groups of",
                                             "set the group of",
                                             "switch to user",
                                             "enter the directory",
                                             "run",
                                             "join the server's cgroup"};
    std::string what = report[0] == 4   ? fmt::format("enter the directory {}", cwd)
                       : report[0] == 5 ? fmt::format("run {}", argv[0])
                       : report[0] == 6 ? std::string(kSteps[6])
                                        : fmt::format("{} {}", kSteps[report[0]], user.name);
    throw RuntimeError(fmt::format(
        "cannot {}: {}{}", what, std::strerror(report[1]),
        report[0] == 5 && report[1] == ENOENT ? " (not found; is it installed and in PATH?)" : ""));
  }

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
      out_read.fd, POLLIN, 0
    };
    int r = ::poll(&p, 1, wait_ms);
    if (r < 0 && errno != EINTR) break;
    if (r > 0) {
      ssize_t n = ::read(out_read.fd, buf, sizeof buf);
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
      ::fcntl(out_read.fd, F_SETFL, O_NONBLOCK);
      ssize_t n;
      while ((n = ::read(out_read.fd, buf, sizeof buf)) > 0)
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
