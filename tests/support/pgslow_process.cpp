#include "tests/support/pgslow_process.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cstring>
#include <fstream>
#include <sstream>
#include <thread>

#include "tests/support/cluster_fixture.h"

extern char** environ;

namespace pgslow::testing {

namespace fs = std::filesystem;

PgslowProcess::PgslowProcess(const std::vector<std::string>& args,
                             const std::vector<std::string>& env) {
  static std::atomic<int> counter{0};
  output_file_ = fs::temp_directory_path() / ("pgslow-test-" + std::to_string(::getpid()) + "-" +
                                              std::to_string(++counter) + ".out");
  std::vector<std::string> argv_s = {pgslow_binary().string()};
  argv_s.insert(argv_s.end(), args.begin(), args.end());
  std::vector<std::string> env_s;
  for (char** e = environ; *e; ++e) {
    std::string var = *e;
    // The hooks apply only where a test asks for them.
    if (var.rfind("PGSLOW_CRASH_", 0) == 0) continue;
    env_s.push_back(var);
  }
  env_s.insert(env_s.end(), env.begin(), env.end());
  std::vector<char*> argv;
  for (auto& a : argv_s) argv.push_back(a.data());
  argv.push_back(nullptr);
  std::vector<char*> envp;
  for (auto& e : env_s) envp.push_back(e.data());
  envp.push_back(nullptr);

  pid_ = ::fork();
  if (pid_ == 0) {
    int fd = ::open(output_file_.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd >= 0) {
      ::dup2(fd, 1);
      ::dup2(fd, 2);
      ::close(fd);
    }
    int devnull = ::open("/dev/null", O_RDONLY);
    if (devnull >= 0) ::dup2(devnull, 0);
    // Its own process group, like a command run from a shell: a signal for it is not one
    // for the test.
    ::setpgid(0, 0);
    ::execve(argv[0], argv.data(), envp.data());
    ::_exit(127);
  }
  if (pid_ < 0) ADD_FAILURE() << "fork failed: " << std::strerror(errno);
}

PgslowProcess::~PgslowProcess() {
  if (pid_ > 0 && !done_) {
    ::kill(pid_, SIGKILL);
    int status = 0;
    ::waitpid(pid_, &status, 0);
  }
  std::error_code ec;
  fs::remove(output_file_, ec);
}

void PgslowProcess::signal(int sig) {
  if (pid_ > 0 && !done_) ::kill(pid_, sig);
}

bool PgslowProcess::poll() {
  if (done_ || pid_ <= 0) return true;
  int status = 0;
  struct rusage usage {};
  pid_t r = ::wait4(pid_, &status, WNOHANG, &usage);
  if (r != pid_) return false;
  done_ = true;
  max_rss_kb_ = usage.ru_maxrss;
  if (WIFEXITED(status)) exit_code_ = WEXITSTATUS(status);
  if (WIFSIGNALED(status)) signal_ = WTERMSIG(status);
  return true;
}

void PgslowProcess::wait(std::chrono::seconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (!poll()) {
    if (std::chrono::steady_clock::now() > deadline) {
      ADD_FAILURE() << "pgslow (pid " << pid_ << ") did not finish within " << timeout.count()
                    << " s; output:\n"
                    << output();
      ::kill(pid_, SIGKILL);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
}

bool PgslowProcess::wait_until_stopped(std::chrono::seconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (!done_ && pid_ > 0 && std::chrono::steady_clock::now() < deadline) {
    int status = 0;
    pid_t r = ::waitpid(pid_, &status, WNOHANG | WUNTRACED);
    if (r == pid_ && WIFSTOPPED(status)) return true;
    if (r == pid_) {
      done_ = true;
      if (WIFEXITED(status)) exit_code_ = WEXITSTATUS(status);
      if (WIFSIGNALED(status)) signal_ = WTERMSIG(status);
      return false;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return false;
}

void PgslowProcess::signal_and_continue(int sig) {
  if (pid_ <= 0 || done_) return;
  // A stopped process keeps the signal pending; SIGCONT resumes it and the pending signal is
  // delivered first.
  ::kill(pid_, sig);
  ::kill(pid_, SIGCONT);
}

bool PgslowProcess::wait_for_output(const std::string& text, std::chrono::seconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (std::chrono::steady_clock::now() < deadline) {
    if (output().find(text) != std::string::npos) return true;
    if (poll()) return output().find(text) != std::string::npos;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return false;
}

std::string PgslowProcess::output() const {
  std::ifstream in(output_file_);
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

Finished run_pgslow(const std::vector<std::string>& args, const std::vector<std::string>& env,
                    std::chrono::seconds timeout) {
  PgslowProcess p(args, env);
  p.wait(timeout);
  return {p.exit_code(), p.killed_by(), p.output(), p.max_rss_kb()};
}

Finished run_pgslow_in(const std::filesystem::path& workdir, std::vector<std::string> args,
                       std::chrono::seconds timeout) {
  args.insert(args.begin(), {"--workdir", workdir.string()});
  return run_pgslow(args, {}, timeout);
}

ProcessResult pgslow(std::vector<std::string> args, std::vector<std::string> env) {
  std::vector<std::string> argv = {pgslow_binary().string(), "--workdir",
                                   cluster_workdir().string()};
  argv.insert(argv.end(), args.begin(), args.end());
  ProcessOptions o;
  o.timeout = std::chrono::minutes(5);
  o.env = std::move(env);
  return run_process(argv, o);
}

std::string unwrapped(const std::string& output) {
  std::string flat;
  flat.reserve(output.size());
  for (std::size_t i = 0; i < output.size(); ++i) {
    if (output[i] != '\n') {
      flat += output[i];
      continue;
    }
    while (i + 1 < output.size() && output[i + 1] == ' ') ++i;
    flat += ' ';
  }
  return flat;
}

}  // namespace pgslow::testing
