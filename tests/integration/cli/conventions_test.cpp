// The habits of a command-line tool, on the real pgslow binary (docs/user-guide.md): NO_COLOR,
// `--json -`, the exit code of `status` when the server is down, `--dashboard PORT`, and each
// error naming the real problem, printed once. Only the status codes, the run and the
// interruption need a server: a temporary cluster of the test's own.

#include <fcntl.h>
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "common/errors.h"
#include "common/process.h"
#include "common/strings.h"
#include "tests/support/cluster_fixture.h"
#include "tests/support/pgslow_process.h"

extern char** environ;

namespace pgslow::testing {
namespace {

namespace fs = std::filesystem;

// pgslow with a terminal (a pseudo-terminal, TERM=xterm) as its standard input, output and error,
// as a user's shell runs it: where color would show. Returns what it printed.
std::string run_in_terminal(const std::vector<std::string>& args,
                            const std::vector<std::string>& env) {
  const int master = ::posix_openpt(O_RDWR | O_NOCTTY);
  if (master < 0 || ::grantpt(master) != 0 || ::unlockpt(master) != 0) {
    ADD_FAILURE() << "no pseudo-terminal: " << std::strerror(errno);
    return "";
  }
  const std::string slave_name = ::ptsname(master);
  std::vector<std::string> argv_s = {pgslow_binary().string()};
  argv_s.insert(argv_s.end(), args.begin(), args.end());
  std::vector<std::string> env_s;
  for (char** e = environ; *e; ++e) {
    const std::string var = *e;
    if (!var.starts_with("NO_COLOR=") && !var.starts_with("TERM=")) env_s.push_back(var);
  }
  env_s.push_back("TERM=xterm");
  env_s.insert(env_s.end(), env.begin(), env.end());
  std::vector<char*> argv, envp;
  for (auto& a : argv_s) argv.push_back(a.data());
  argv.push_back(nullptr);
  for (auto& e : env_s) envp.push_back(e.data());
  envp.push_back(nullptr);
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::setsid();
    const int slave = ::open(slave_name.c_str(), O_RDWR);
    if (slave < 0) ::_exit(127);
    ::dup2(slave, 0);
    ::dup2(slave, 1);
    ::dup2(slave, 2);
    ::close(master);
    ::execve(argv[0], argv.data(), envp.data());
    ::_exit(127);
  }
  std::string out;
  char buf[4096];
  // Read until the child's side is closed (EIO once every descriptor of the slave is gone).
  for (ssize_t n; (n = ::read(master, buf, sizeof buf)) > 0 || (n < 0 && errno == EINTR);)
    if (n > 0) out.append(buf, static_cast<std::size_t>(n));
  int status = 0;
  ::waitpid(pid, &status, 0);
  ::close(master);
  return out;
}

std::size_t count(const std::string& text, const std::string& what) {
  std::size_t n = 0;
  for (auto at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

// A port nothing listens on now (the kernel's pick for port 0).
int free_port() {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof addr;
  EXPECT_EQ(::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
  EXPECT_EQ(::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len), 0);
  ::close(fd);
  return ntohs(addr.sin_port);
}

class Conventions : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / fmt::format("pgslow-conventions-{}", ::getpid());
    fs::create_directories(dir_);
    // The smallest run there is: two stages of separate one-second runs, select-only at scale 1.
    std::ofstream(dir_ / "tiny.yaml") << R"(name: tiny
description: two short stages for the conventions test
workload:
  name: select-only
  scale: 1
  clients: 2
measure:
  warmup: 0s
  duration: 1s
  repeats: 1
  design: isolated
mode: isolated
stages:
  - name: costly-pages
    settings:
      random_page_cost: 5
)";
  }
  void TearDown() override {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }
  fs::path dir_;
};

// Each error names the real problem, once, and changes nothing (no server is reached).
TEST_F(Conventions, AMissingFileIsNamedOnce) {
  const std::string wd = (dir_ / "wd").string();
  struct Case {
    std::vector<std::string> args;
    std::string message;
  };
  for (const Case& c : {Case{{"bisect", "--good", "default", "--bad", "missing.conf"},
                             "no such file: missing.conf"},
                        Case{{"run", "nothere.yaml"}, "no such file: nothere.yaml"},
                        Case{{"apply", "./missing.yaml"}, "no such file: ./missing.yaml"},
                        Case{{"check", "gone.yaml"}, "no such file: gone.yaml"}}) {
    std::vector<std::string> args = {"--workdir", wd};
    args.insert(args.end(), c.args.begin(), c.args.end());
    const Finished r = run_pgslow(args);
    EXPECT_EQ(r.exit_code, kExitBadInput) << r.output;
    EXPECT_EQ(count(r.output, c.message), 1u) << r.output;
    EXPECT_EQ(r.output.find("a file as a path"), std::string::npos) << r.output;
  }
}

// Listing and explaining read a running server but never start one: in a fresh workdir they
// print the catalog's part, say how to read a live server, and create no cluster.
TEST_F(Conventions, AListingNeverStartsTheManagedCluster) {
  const fs::path wd = dir_ / "fresh";
  for (const std::vector<std::string>& command :
       {std::vector<std::string>{"presets", "show", "tiny-cache"},
        std::vector<std::string>{"knobs", "show", "work_mem"},
        std::vector<std::string>{"knobs", "list", "--server"}}) {
    std::vector<std::string> args = {"--workdir", wd.string()};
    args.insert(args.end(), command.begin(), command.end());
    const Finished r = run_pgslow(args);
    EXPECT_EQ(r.exit_code, 0) << r.output;
    EXPECT_NE(r.output.find("no live server read: the managed cluster in"), std::string::npos)
        << r.output;
    EXPECT_FALSE(fs::exists(wd / "cluster" / "data")) << r.output;
  }
}

// A search (bisect, cliff) on a server reached through user commands is refused before anything
// is applied: it would compare configurations an HA manager may not have put in place yet.
TEST_F(Conventions, SearchesRefuseACommandTarget) {
  const std::vector<std::string> target = {"--conninfo", "host=/nonexistent port=1",
                                           "--apply-command", "true"};
  for (std::vector<std::string> args :
       {std::vector<std::string>{"bisect", "--good", "default", "--bad", "tiny-cache"},
        std::vector<std::string>{"cliff", "work_mem", "--from", "4MB", "--to", "64kB"}}) {
    const std::string verb = args.front();
    args.insert(args.begin(), {"--workdir", (dir_ / "searches").string()});
    args.insert(args.end(), target.begin(), target.end());
    const Finished r = run_pgslow(args);
    EXPECT_EQ(r.exit_code, kExitBadInput) << r.output;
    EXPECT_NE(r.output.find("pgslow " + verb +
                            " cannot search a server reached by conninfo or through user "
                            "commands"),
              std::string::npos)
        << r.output;
    EXPECT_NE(r.output.find("docs/" + verb + ".md"), std::string::npos) << r.output;
  }
}

TEST_F(Conventions, StatusColorJsonDashboardAndInterruption) {
  TemporaryCluster c;
  const std::string wd = c.workdir().string();
  c.get().stop();

  // The server is down: both status commands say so and exit 4.
  const Finished server_status = run_pgslow({"--workdir", wd, "server", "status"});
  EXPECT_EQ(server_status.exit_code, kExitServerDown) << server_status.output;
  EXPECT_NE(server_status.output.find("stopped"), std::string::npos) << server_status.output;
  EXPECT_EQ(server_status.output.find("error"), std::string::npos) << server_status.output;
  const Finished status = run_pgslow({"--workdir", wd, "status"});
  EXPECT_EQ(status.exit_code, kExitServerDown) << status.output;

  // NO_COLOR: the warning `server conninfo` gives about a stopped cluster is colored on a
  // terminal, and not with NO_COLOR set; an empty NO_COLOR counts as unset.
  const std::vector<std::string> conninfo = {"--workdir", wd, "server", "conninfo"};
  const std::string colored = run_in_terminal(conninfo, {});
  ASSERT_NE(colored.find("the managed cluster is stopped"), std::string::npos) << colored;
  EXPECT_NE(colored.find("\033["), std::string::npos) << colored;
  const std::string plain = run_in_terminal(conninfo, {"NO_COLOR=1"});
  ASSERT_NE(plain.find("the managed cluster is stopped"), std::string::npos) << plain;
  EXPECT_EQ(plain.find('\033'), std::string::npos) << plain;
  EXPECT_NE(run_in_terminal(conninfo, {"NO_COLOR="}).find("\033["), std::string::npos);

  c.get().start();
  const Finished running = run_pgslow({"--workdir", wd, "server", "status"});
  EXPECT_EQ(running.exit_code, 0) << running.output;

  // `run --json -`: report.json's document alone on standard output, the table on standard
  // error; no file named `-`. `--dashboard PORT` listens on 127.0.0.1:PORT.
  const int port = free_port();
  const fs::path err = dir_ / "stderr";
  ProcessOptions o;
  o.cwd = dir_;
  o.timeout = std::chrono::seconds(300);
  const ProcessResult json_run =
      run_process({"/bin/sh", "-c",
                   fmt::format("exec '{}' --workdir '{}' run '{}' --out '{}' --json - "
                               "--dashboard {} 2>'{}'",
                               pgslow_binary().string(), wd, (dir_ / "tiny.yaml").string(),
                               (dir_ / "results").string(), port, err.string())},
                  o);
  const std::string err_text = [&] {
    std::ifstream in(err);
    return std::string(std::istreambuf_iterator<char>(in), {});
  }();
  ASSERT_TRUE(json_run.ok()) << json_run.describe_status() << "\n" << err_text;
  const nlohmann::json doc = nlohmann::json::parse(json_run.output, nullptr, false);
  ASSERT_FALSE(doc.is_discarded()) << json_run.output;
  EXPECT_EQ(doc.value("schema", ""), "pgslow-report") << json_run.output;
  EXPECT_EQ(doc.value("scenario", ""), "tiny") << json_run.output;
  EXPECT_NE(json_run.output.find("\"costly-pages\""), std::string::npos);
  EXPECT_NE(err_text.find("costly-pages"), std::string::npos) << err_text;  // the table
  EXPECT_NE(err_text.find(fmt::format("dashboard: http://127.0.0.1:{}", port)), std::string::npos)
      << err_text;
  EXPECT_FALSE(fs::exists(dir_ / "-"));
  EXPECT_TRUE(fs::exists(dir_ / "results" / "report.json"));

  // Ctrl-C while the second stage runs: the run stops, restores, and says so in one error.
  PgslowProcess run({"--workdir", wd, "run", (dir_ / "tiny.yaml").string(), "--out",
                     (dir_ / "interrupted").string()});
  ASSERT_TRUE(run.wait_for_output("stage 2/2", std::chrono::seconds(120))) << run.output();
  run.signal(SIGINT);
  run.wait();
  EXPECT_EQ(run.exit_code(), kExitInterrupted) << run.output();
  EXPECT_EQ(count(run.output(), "interrupted by SIGINT"), 1u) << run.output();
  EXPECT_EQ(count(run.output(), "error:"), 1u) << run.output();
  EXPECT_NE(run.output().find("results so far in"), std::string::npos) << run.output();
}

}  // namespace
}  // namespace pgslow::testing
