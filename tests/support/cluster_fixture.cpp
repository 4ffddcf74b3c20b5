#include "tests/support/cluster_fixture.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <mutex>

#include "common/errors.h"
#include "common/process.h"
#include "pg/connection.h"
#include "server/pg_versions.h"
#include "tests/support/watchdog.h"

namespace pgslow::testing {

namespace fs = std::filesystem;

namespace {

fs::path make_temporary_workdir(const fs::path& parent = {}) {
  const char* tmp = std::getenv("TMPDIR");
  std::string pattern = fmt::format(
      "{}/pgslow-test-XXXXXX", !parent.empty() ? parent.string() : (tmp && *tmp ? tmp : "/tmp"));
  std::vector<char> buf(pattern.begin(), pattern.end());
  buf.push_back('\0');
  if (::mkdtemp(buf.data()) == nullptr) {
    throw RuntimeError(
        fmt::format("cannot create a temporary workdir {}: {}", pattern, std::strerror(errno)));
  }
  return fs::path(buf.data());
}

// A process that outlives a crashed test binary: it waits for the end of a pipe only we hold
// open, then stops the server and removes the workdir. After a normal teardown it finds
// nothing to do.
int start_watchdog(const fs::path& pg_ctl, const fs::path& data_dir, const fs::path& workdir) {
  return start_watchdog_script(
      "cat >/dev/null\n"
      "if [ -n \"$4\" ]; then runuser -u \"$4\" -- \"$1\" stop -D \"$2\" -m immediate -w;\n"
      "else \"$1\" stop -D \"$2\" -m immediate -w; fi\n"
      "rm -rf \"$3\"\n",
      "pgslow-test-watchdog",
      {pg_ctl.string(), data_dir.string(), workdir.string(), running_as_root() ? "postgres" : ""});
}

std::mutex g_mutex;
TemporaryCluster* g_shared = nullptr;  // never deleted: the environment removes it at the end

class SharedClusterEnvironment : public ::testing::Environment {
 public:
  void TearDown() override {
    std::lock_guard lock(g_mutex);
    if (g_shared) g_shared->remove();
  }
};

// Registered when this file is linked, i.e. when a test uses cluster().
[[maybe_unused]] ::testing::Environment* const g_environment =
    ::testing::AddGlobalTestEnvironment(new SharedClusterEnvironment);

}  // namespace

TemporaryCluster::TemporaryCluster(std::vector<std::pair<std::string, std::string>> settings,
                                   server::Envelope envelope)
    : workdir_(make_temporary_workdir()) {
  server::ManagedOptions options;
  options.workdir = workdir_;
  options.settings = std::move(settings);
  options.envelope = std::move(envelope);
  // The version matrix (tests/CMakeLists.txt) runs a binary once per major version; pgslow
  // commands the tests start read the same variable, so they reach the same cluster.
  if (const char* version = std::getenv("PGSLOW_PG_VERSION"); version && *version)
    options.pg_version = server::parse_major_version(version);
  start(std::move(options));
}

TemporaryCluster::TemporaryCluster(const fs::path& parent, std::optional<int> pg_version)
    : workdir_(make_temporary_workdir(parent)) {
  server::ManagedOptions options;
  options.workdir = workdir_;
  options.pg_version = pg_version;
  if (const char* version = std::getenv("PGSLOW_PG_VERSION"); !pg_version && version && *version)
    options.pg_version = server::parse_major_version(version);
  start(std::move(options));
}

void TemporaryCluster::start(server::ManagedOptions options) {
  cluster_ = std::make_unique<server::ManagedCluster>(std::move(options));
  watchdog_fd_ = start_watchdog(cluster_->pg_bin() / "pg_ctl", *cluster_->data_dir(), workdir_);
  try {
    cluster_->start();
  } catch (...) {
    remove();
    throw;
  }
}

TemporaryCluster::~TemporaryCluster() {
  remove();
}

void TemporaryCluster::remove() {
  if (!cluster_) return;
  try {
    cluster_->destroy();
  } catch (const std::exception& e) {
    std::cerr << "cannot remove the test cluster in " << workdir_ << ": " << e.what() << "\n";
  }
  cluster_.reset();
  std::error_code ec;
  fs::remove_all(workdir_, ec);
  if (watchdog_fd_ >= 0) ::close(watchdog_fd_);
  watchdog_fd_ = -1;
}

TemporaryWorkdir::TemporaryWorkdir(const std::vector<int>& pg_versions, const fs::path& parent)
    : path_(make_temporary_workdir(parent)), pg_versions_(pg_versions) {
  for (int version : pg_versions_) {
    const server::ManagedCluster c = cluster(version);
    watchdog_fds_.push_back(start_watchdog(c.pg_bin() / "pg_ctl", *c.data_dir(), path_));
  }
}

TemporaryWorkdir::~TemporaryWorkdir() {
  for (int version : pg_versions_) {
    try {
      cluster(version).stop();
    } catch (const std::exception& e) {
      std::cerr << "cannot stop the PostgreSQL " << version << " cluster in " << path_ << ": "
                << e.what() << "\n";
    }
  }
  std::error_code ec;
  fs::remove_all(path_, ec);
  for (int fd : watchdog_fds_) {
    if (fd >= 0) ::close(fd);
  }
}

server::ManagedCluster TemporaryWorkdir::cluster(int pg_version) const {
  server::ManagedOptions options;
  options.workdir = path_;
  options.pg_version = pg_version;
  return server::ManagedCluster(std::move(options));
}

server::ManagedCluster& cluster() {
  std::lock_guard lock(g_mutex);
  if (!g_shared) g_shared = new TemporaryCluster();
  return g_shared->get();
}

std::string conninfo(const std::string& dbname) {
  return pg::with_database(cluster().conninfo(), dbname);
}

std::string clone_database(const std::string& template_db) {
  static std::atomic<int> counter{0};
  // Identifiers stop at 63 bytes; keep the template's name recognisable.
  std::string name = fmt::format("{}_copy{}", template_db.substr(0, 50), ++counter);
  auto conn = pg::Connection::open(conninfo());
  conn.exec(fmt::format("CREATE DATABASE {} TEMPLATE {} STRATEGY FILE_COPY",
                        conn.quote_identifier(name), conn.quote_identifier(template_db)));
  return conninfo(name);
}

std::filesystem::path cluster_workdir() {
  return cluster().cluster_dir().parent_path();
}

std::filesystem::path cluster_data_dir() {
  return *cluster().data_dir();
}

std::filesystem::path cluster_auto_conf() {
  return cluster_data_dir() / "postgresql.auto.conf";
}

std::string show_setting(const std::string& name) {
  return pg::Connection::open(conninfo()).query_value("SHOW " + name).value_or("?");
}

}  // namespace pgslow::testing
