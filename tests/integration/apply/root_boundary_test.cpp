// Issue #20, the root boundary, proved on the real server with the built pgslow binary running
// as root: whatever the `postgres` user (or any other) plants, root writes, chowns, removes
// and runs nothing of theirs, and the configuration comes back byte for byte.

#include <fcntl.h>
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>

#include "apply/journal.h"
#include "apply/server_lock.h"
#include "common/errors.h"
#include "common/paths.h"
#include "common/process.h"
#include "common/safe_fs.h"
#include "common/strings.h"
#include "pg/connection.h"
#include "tests/support/cluster_fixture.h"
#include "tests/support/pgslow_process.h"

namespace pgslow::testing {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;

struct Owner {
  uid_t uid;
  gid_t gid;
};

std::optional<Owner> postgres_user() {
  std::optional<SystemUser> u = find_system_user("postgres");
  if (!u) return std::nullopt;
  return Owner{u->uid, u->gid};
}

struct stat stat_of(const fs::path& p) {
  struct stat st {};
  ::lstat(p.c_str(), &st);
  return st;
}

class RootBoundaryTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    original_ = new std::string(read_file(cluster_auto_conf()));
    dir_ = new fs::path(fs::temp_directory_path() /
                        ("pgslow-root-boundary-" + std::to_string(::getpid())));
    fs::create_directories(*dir_);
    std::ofstream(*dir_ / "reload.yaml") << "settings:\n  work_mem: 9MB\n";
    std::ofstream(*dir_ / "other.yaml") << "settings:\n  random_page_cost: 7.5\n";
  }
  static void TearDownTestSuite() {
    fs::remove_all(*dir_);
    delete original_;
    delete dir_;
  }
  void SetUp() override {
    if (::geteuid() != 0) GTEST_SKIP() << "needs root: the attacks are on root's pgslow";
    user_ = postgres_user();
    if (!user_) GTEST_SKIP() << "no postgres system user";
    work_mem_ = show_setting("work_mem");
    random_page_cost_ = show_setting("random_page_cost");
    victim_ = *dir_ / "victim";
    std::ofstream(victim_, std::ios::trunc) << "root's precious file\n";
    ::chmod(victim_.c_str(), 0600);
  }
  void TearDown() override {
    if (::geteuid() != 0 || !user_) return;
    // Every test leaves the server and the victim as it found them.
    EXPECT_FALSE(fs::exists(apply::journal_path(cluster_workdir()))) << "a journal was left behind";
    EXPECT_FALSE(fs::is_symlink(cluster_auto_conf())) << "postgresql.auto.conf is a symlink";
    EXPECT_EQ(read_file(cluster_auto_conf()), *original_) << "postgresql.auto.conf differs";
    expect_victim_untouched();
  }
  void expect_victim_untouched() const {
    EXPECT_EQ(read_file(victim_), "root's precious file\n") << "root wrote the victim";
    struct stat st = stat_of(victim_);
    EXPECT_EQ(st.st_uid, 0u) << "root gave the victim away";
    EXPECT_EQ(st.st_mode & 07777, 0600u);
  }
  // A symlink `link` -> `target`, owned by the postgres user, as that user would plant it.
  void plant_link(const fs::path& target, const fs::path& link) const {
    fs::create_symlink(target, link);
    ASSERT_EQ(::lchown(link.c_str(), user_->uid, user_->gid), 0);
  }
  // A file or folder `path`, handed to the postgres user as if it had made it there.
  void give_to_postgres(const fs::path& path) const {
    ASSERT_EQ(::lchown(path.c_str(), user_->uid, user_->gid), 0) << path;
    std::error_code ec;
    if (!fs::is_directory(fs::symlink_status(path))) return;
    for (const auto& e : fs::recursive_directory_iterator(path, ec)) {
      ASSERT_EQ(::lchown(e.path().c_str(), user_->uid, user_->gid), 0) << e.path();
    }
  }
  void plant_file(const fs::path& path, const std::string& text) const {
    std::ofstream(path) << text;
    give_to_postgres(path);
  }
  // A folder like /tmp: root's, sticky, anyone may create files in it.
  static fs::path shared_folder(const std::string& name) {
    const fs::path shared = *dir_ / name;
    fs::create_directories(shared);
    ::chmod(shared.c_str(), 01777);
    return shared;
  }
  // The built pgslow (or `binary`) run as root after `cd cwd`.
  static Finished run_pgslow_in(const fs::path& cwd, const std::vector<std::string>& args,
                                const fs::path& binary = pgslow_binary()) {
    std::vector<std::string> argv = {binary.string()};
    argv.insert(argv.end(), args.begin(), args.end());
    ProcessOptions o;
    o.cwd = cwd;
    o.timeout = 120s;
    ProcessResult r = run_process(argv, o);
    return Finished{r.exit_code, r.signal, r.output};
  }
  static std::vector<std::string> in_workdir(std::initializer_list<std::string> rest) {
    std::vector<std::string> out = {"--workdir", cluster_workdir().string()};
    out.insert(out.end(), rest.begin(), rest.end());
    return out;
  }
  static std::string file(const std::string& name) { return (*dir_ / name).string(); }

  static std::string* original_;
  static fs::path* dir_;
  std::optional<Owner> user_;
  fs::path victim_;
  std::string work_mem_, random_page_cost_;  // as the test found them
};

std::string* RootBoundaryTest::original_ = nullptr;
fs::path* RootBoundaryTest::dir_ = nullptr;

// Finding 1: the temporary copy of postgresql.auto.conf under a name the server's user can
// guess. Links planted for the next few thousand pids lead nowhere now.
TEST_F(RootBoundaryTest, LinksPlantedForEveryPidNeverLetRootWriteOrChownAFile) {
  std::ifstream last_pid_file("/proc/sys/kernel/ns_last_pid");
  int last_pid = 0;
  last_pid_file >> last_pid;
  ASSERT_GT(last_pid, 0);
  for (int pid = last_pid; pid < last_pid + 2000; ++pid) {
    plant_link(victim_, cluster_data_dir() / fmt::format("postgresql.auto.conf.pgslow.{}", pid));
  }
  Finished applied = run_pgslow(in_workdir({"apply", file("reload.yaml")}));
  ASSERT_EQ(applied.exit_code, 0) << applied.output;
  EXPECT_EQ(show_setting("work_mem"), "9MB");
  Finished restored = run_pgslow(in_workdir({"restore"}));
  ASSERT_EQ(restored.exit_code, 0) << restored.output;
  EXPECT_EQ(show_setting("work_mem"), work_mem_);
  expect_victim_untouched();
  // The restored file is a file of the postgres user, not a link to someone else's.
  struct stat st = stat_of(cluster_auto_conf());
  EXPECT_TRUE(S_ISREG(st.st_mode));
  EXPECT_EQ(st.st_uid, user_->uid);
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(cluster_data_dir(), ec)) {
    if (e.path().filename().string().starts_with("postgresql.auto.conf.pgslow."))
      fs::remove(e.path(), ec);
  }
}

// Finding 1, second form: postgresql.auto.conf itself replaced by a link. Refused before any
// change; nothing read through it or written.
TEST_F(RootBoundaryTest, AnAutoConfThatIsALinkIsRefusedBeforeAnyChange) {
  const fs::path saved = *dir_ / "auto.conf.saved";
  fs::rename(cluster_auto_conf(), saved);
  plant_link(victim_, cluster_auto_conf());
  Finished r = run_pgslow(in_workdir({"apply", file("reload.yaml")}));
  fs::remove(cluster_auto_conf());
  fs::copy_file(saved, cluster_auto_conf());
  ASSERT_EQ(::chown(cluster_auto_conf().c_str(), user_->uid, user_->gid), 0);
  ::chmod(cluster_auto_conf().c_str(), 0600);
  EXPECT_NE(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("symbolic link"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("postgresql.auto.conf"), std::string::npos) << r.output;
  EXPECT_EQ(show_setting("work_mem"), work_mem_);
}

// Round three, finding 2: postgresql.auto.conf is the server user's to make any size (a sparse
// 1 GB one took apply to 5.9 GB and became the journal's "original"). Larger than pgslow reads
// (1 MiB), it is refused before any change, naming the file and the cap: no journal, no claim,
// the file as it was. Comment lines, so the server itself reads it as before.
TEST_F(RootBoundaryTest, AnOversizeAutoConfIsRefusedBeforeAnyChange) {
  std::string padded = *original_;
  while (padded.size() <= (std::size_t{2} << 20)) padded += "# planted by the server's user\n";
  std::ofstream(cluster_auto_conf(), std::ios::binary | std::ios::trunc) << padded;
  Finished r = run_pgslow(in_workdir({"apply", file("reload.yaml")}));
  const std::string after = read_file(cluster_auto_conf());
  const bool claimed = apply::server_claimed_by(cluster_data_dir()).has_value();
  std::ofstream(cluster_auto_conf(), std::ios::binary | std::ios::trunc) << *original_;
  EXPECT_NE(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find(cluster_auto_conf().string()), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("1048576 bytes (1 MiB)"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("Nothing was changed"), std::string::npos) << r.output;
  EXPECT_EQ(after, padded) << "the planted file was changed";
  EXPECT_FALSE(claimed) << "a claim was written";
  EXPECT_EQ(show_setting("work_mem"), work_mem_);
}

// Finding 1, third form: the data directory itself swapped for a link (its parent is the
// postgres user's). Root follows no link of theirs to reach a folder.
TEST_F(RootBoundaryTest, AFolderOfThePostgresUserThatIsALinkIsNotFollowed) {
  const fs::path theirs = *dir_ / "theirs";
  fs::create_directories(theirs / "inner");
  ASSERT_EQ(::chown(theirs.c_str(), user_->uid, user_->gid), 0);
  plant_link(victim_.parent_path(), theirs / "data");
  EXPECT_THROW(open_folder(theirs / "data"), RuntimeError);
  // The same link in a folder only root may write is followed.
  fs::create_symlink(theirs / "inner", *dir_ / "root-link");
  EXPECT_NO_THROW(open_folder(*dir_ / "root-link"));
}

// Finding 2: the state file with pg_bin= was the postgres user's to replace. It lives in the
// workdir now, and `server status` runs the server's programs as the server's user.
TEST_F(RootBoundaryTest, APlantedStateFileMakesRootRunNothing) {
  TemporaryCluster own;
  own.get().stop();
  const fs::path evil_bin = *dir_ / "evil-bin";
  const fs::path marker = *dir_ / "ran-as-root";
  fs::create_directories(evil_bin);
  for (const char* program : {"postgres", "pg_ctl", "initdb"}) {
    std::ofstream(evil_bin / program)
        << "#!/bin/sh\nid -u > " << marker.string() << "\necho 'postgres (PostgreSQL) 99.9'\n";
    fs::permissions(evil_bin / program, fs::perms::all);
  }
  const fs::path cluster_dir = own.get().cluster_dir();
  // The old place, written as the postgres user would.
  std::ofstream(cluster_dir / "state") << "port=5999\npg_bin=" << evil_bin.string() << "\n";
  ASSERT_EQ(::chown((cluster_dir / "state").c_str(), user_->uid, user_->gid), 0);
  Finished r = run_pgslow({"--workdir", own.workdir().string(), "server", "status"});
  EXPECT_EQ(r.exit_code, kExitServerDown) << r.output;  // stopped above
  if (fs::exists(marker)) {
    EXPECT_NE(trim(read_file(marker)), "0") << "root ran pg_bin's program";
  }
  EXPECT_EQ(r.output.find("99.9"), std::string::npos) << r.output;

  // A state file in the workdir that is not root's is refused, naming its owner.
  const fs::path state = own.workdir() / (cluster_dir.filename().string() + ".state");
  fs::remove(state);
  std::ofstream(state) << "port=5999\npg_bin=" << evil_bin.string() << "\n";
  ASSERT_EQ(::chown(state.c_str(), user_->uid, user_->gid), 0);
  r = run_pgslow({"--workdir", own.workdir().string(), "server", "status"});
  EXPECT_NE(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("uid " + std::to_string(user_->uid)), std::string::npos) << r.output;
  EXPECT_FALSE(fs::exists(marker) && trim(read_file(marker)) == "0");
  fs::remove(state);
}

// Finding 5: a workdir that is a link of someone else's, or a .pgslow planted in a shared
// folder, steers root nowhere: refused, the folder it points to untouched.
TEST_F(RootBoundaryTest, AWorkdirLinkOfAnotherUserIsRefusedAndItsTargetUntouched) {
  const fs::path target = *dir_ / "root-private";
  fs::create_directories(target);
  ::chmod(target.c_str(), 0700);
  const fs::path link = *dir_ / "workdir-link";
  fs::create_symlink(target, link);
  std::optional<SystemUser> nobody = find_system_user("nobody");
  ASSERT_TRUE(nobody.has_value());
  ASSERT_EQ(::lchown(link.c_str(), nobody->uid, nobody->gid), 0);
  // The link sits in a sticky, world-writable folder, where its owner could have put it.
  const fs::path shared = *dir_ / "shared";
  fs::create_directories(shared);
  ::chmod(shared.c_str(), 01777);
  fs::rename(link, shared / ".pgslow");

  for (const fs::path& wd : {shared / ".pgslow", shared / ".pgslow" / "sub"}) {
    Finished r = run_pgslow({"--workdir", wd.string(), "server", "start"});
    EXPECT_NE(r.exit_code, 0) << r.output;
    EXPECT_NE(r.output.find("refuses the workdir"), std::string::npos) << r.output;
    EXPECT_NE(r.output.find("symbolic link of uid " + std::to_string(nobody->uid)),
              std::string::npos)
        << r.output;
  }
  EXPECT_EQ(stat_of(target).st_mode & 07777, 0700u) << "root changed the folder's mode";
  EXPECT_TRUE(fs::is_empty(target)) << "root created a cluster in it";

  // Root's own link in a folder only root writes is fine.
  fs::create_symlink(target, *dir_ / "own-link");
  EXPECT_NO_THROW(require_trusted_workdir(*dir_ / "own-link"));
}

// Round three, finding 1: root run in a folder of another user's (`cd /home/mallory && pgslow
// server start`) made `.pgslow` there and chmodded whatever that user swapped in for it. Now
// nothing is made in such a folder, by any command that makes the workdir or the results.
TEST_F(RootBoundaryTest, RootMakesNoWorkdirOrResultsInAFolderAnotherUserOwns) {
  const fs::path home = *dir_ / "mallory";
  fs::create_directories(home);
  give_to_postgres(home);
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"server", "start"},
        std::vector<std::string>{"--workdir", cluster_workdir().string(), "run", "quick", "--out",
                                 (home / "results").string()}}) {
    Finished r = run_pgslow_in(home, args);
    EXPECT_NE(r.exit_code, 0) << r.output;
    EXPECT_NE(r.output.find("pgslow refuses to create"), std::string::npos) << r.output;
    EXPECT_NE(r.output.find("belongs to uid " + std::to_string(user_->uid)), std::string::npos)
        << r.output;
  }
  EXPECT_TRUE(fs::is_empty(home)) << "root made something in another user's folder";
}

// Round three, low: a deep workdir's socket folder was /tmp/pgslow-<hash>-socket, a name
// anyone could take first and so block root's server for good. As root it is made in
// /run/pgslow, where only root makes names, and the server works through it.
TEST_F(RootBoundaryTest, ADeepWorkdirsSocketIsInAFolderOnlyRootMakesNamesIn) {
  fs::path deep = *dir_;
  while (deep.string().size() < 120) deep /= "a-long-folder-name";
  fs::create_directories(deep);
  TemporaryCluster own(deep, std::nullopt);
  const fs::path socket = own.get().socket_dir();
  EXPECT_EQ(socket.parent_path(), fs::path("/run/pgslow")) << socket;
  EXPECT_EQ(stat_of("/run/pgslow").st_uid, 0u);
  EXPECT_EQ(stat_of("/run/pgslow").st_mode & 07777, 0755u);
  EXPECT_EQ(stat_of(socket).st_uid, user_->uid);
  EXPECT_EQ(stat_of(socket).st_mode & 07777, 0700u);
  pg::Connection conn = pg::Connection::open(own.get().conninfo());
  EXPECT_EQ(conn.query_value("SELECT 1"), "1");
}

// Finding 6: two workdirs, one server. While one workdir's change is on the server, another
// workdir's apply through the data directory is refused (it would record the first one's
// value as its original), both while the first process runs and after it kept its change.
TEST_F(RootBoundaryTest, OneServerHasOneOwnerWhicheverWorkdirPgslowRunsFrom) {
  const fs::path w6 = *dir_ / "w6";
  const std::vector<std::string> through_data_dir = {
      "--workdir",        w6.string(),  "apply",
      file("other.yaml"), "--data-dir", cluster_data_dir().string(),
      "--conninfo",       conninfo(),   "--allow-changes"};

  // 1. The first process holds the server at the moment its change is applied.
  PgslowProcess first(in_workdir({"apply", file("reload.yaml")}),
                      {"PGSLOW_CRASH_AT=journal-written", "PGSLOW_CRASH_SIGNAL=STOP"});
  ASSERT_TRUE(first.wait_until_stopped()) << first.output();
  Finished second = run_pgslow(through_data_dir);
  EXPECT_NE(second.exit_code, 0) << second.output;
  EXPECT_NE(second.output.find("pid " + std::to_string(first.pid())), std::string::npos)
      << second.output;
  EXPECT_NE(second.output.find("one owner at a time"), std::string::npos) << second.output;
  EXPECT_FALSE(fs::exists(apply::journal_path(w6)));
  first.signal_and_continue(SIGCONT);
  first.wait();
  ASSERT_EQ(first.exit_code(), 0) << first.output();

  // 2. A kept change: its workdir's journal holds the original, named in the refusal.
  EXPECT_EQ(show_setting("work_mem"), "9MB");
  second = run_pgslow(through_data_dir);
  EXPECT_NE(second.exit_code, 0) << second.output;
  EXPECT_NE(second.output.find(cluster_workdir().string()), std::string::npos) << second.output;
  EXPECT_NE(second.output.find("restore"), std::string::npos) << second.output;
  EXPECT_EQ(show_setting("random_page_cost"), random_page_cost_);
  EXPECT_FALSE(fs::exists(apply::journal_path(w6)));

  // 3. Restored there, the server is free: the other workdir records the true original.
  Finished restored = run_pgslow(in_workdir({"restore"}));
  ASSERT_EQ(restored.exit_code, 0) << restored.output;
  EXPECT_FALSE(apply::server_claimed_by(cluster_data_dir()).has_value());
  second = run_pgslow(through_data_dir);
  ASSERT_EQ(second.exit_code, 0) << second.output;
  EXPECT_EQ(show_setting("random_page_cost"), "7.5");
  Finished back =
      run_pgslow({"--workdir", w6.string(), "restore", "--data-dir", cluster_data_dir().string(),
                  "--conninfo", conninfo(), "--allow-changes"});
  ASSERT_EQ(back.exit_code, 0) << back.output;
  EXPECT_EQ(show_setting("work_mem"), work_mem_);
  EXPECT_EQ(show_setting("random_page_cost"), random_page_cost_);
}

// Finding 7: a lesson's name becomes a results folder; a path in it is refused with the file
// and line, and nothing is written outside results/.
TEST_F(RootBoundaryTest, ALessonNameThatLeadsOutOfResultsIsRefusedWithItsLine) {
  const fs::path lesson_dir = *dir_ / "lessons";
  fs::create_directories(lesson_dir);
  std::ofstream(lesson_dir / "bad.yaml") << "title: escape\nlesson: \"x/../../../ESCAPED\"\n"
                                         << "minutes: 5\nscenario: nowhere.yaml\n";
  Finished r = run_pgslow(in_workdir({"lesson", (lesson_dir / "bad.yaml").string()}));
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("bad.yaml:2"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("path separator"), std::string::npos) << r.output;
  // results/lesson-x/../../../ESCAPED-<time> would land beside the current folder.
  std::error_code ec;
  for (const fs::path& near : {fs::current_path(), fs::current_path().parent_path()}) {
    for (const auto& e : fs::directory_iterator(near, ec)) {
      EXPECT_EQ(e.path().filename().string().find("ESCAPED"), std::string::npos) << e.path();
    }
  }
}

// Issue #36, finding 1: `quick` and `cache` are names of the library, never files of the current
// folder. The postgres user plants both (a scenario whose target's reload command records who
// ran it, a lesson) in a folder anyone may write, and root runs pgslow there.
// Finding 3 in the same folder: a `results` it plants as a link to root's folder is refused
// before anything is measured, and nothing is written through it.
TEST_F(RootBoundaryTest, NamesFromAFolderAnyoneMayWriteAreTheLibrarysAndItsResultsLinkIsRefused) {
  const fs::path shared = shared_folder("shared-cwd");
  const fs::path marker = *dir_ / "reload-ran-as";
  plant_file(shared / "quick",
             fmt::format("name: planted\ntarget:\n  kind: command\n  conninfo: \"{}\"\n"
                         "  reload: \"id -u > {}\"\n  allow_changes: true\n"
                         "workload: {{name: select-only, scale: 1, clients: 1}}\n"
                         "measure: {{warmup: 1s, duration: 1s, repeats: 1}}\n"
                         "stages:\n  - name: planted-stage\n    settings: {{work_mem: 9MB}}\n",
                         conninfo(), marker.string()));
  plant_file(shared / "cache",
             "lesson: planted\ntitle: planted\nminutes: 5\nscenario: ./quick\n"
             "compare: {stage: planted-stage}\n");
  const fs::path roots = *dir_ / "roots-results";
  fs::create_directories(roots);
  ::chmod(roots.c_str(), 0700);
  plant_link(roots, shared / "results");

  Finished plan = run_pgslow_in(shared, in_workdir({"plan", "quick"}));
  EXPECT_EQ(plan.exit_code, 0) << plan.output;
  EXPECT_EQ(plan.output.find("planted"), std::string::npos) << plan.output;
  EXPECT_NE(plan.output.find("log-everything"), std::string::npos) << plan.output;

  // The library's quick, stopped by the planted results link before it measures anything.
  Finished run = run_pgslow_in(shared, in_workdir({"run", "quick"}));
  EXPECT_NE(run.exit_code, 0) << run.output;
  EXPECT_NE(run.output.find("refuses the results folder results/quick-"), std::string::npos)
      << run.output;
  EXPECT_NE(run.output.find("symbolic link of uid " + std::to_string(user_->uid)),
            std::string::npos)
      << run.output;
  EXPECT_EQ(run.output.find("planted"), std::string::npos) << run.output;
  // The library's cache lesson names its results folder lesson-cache-<time>.
  Finished lesson = run_pgslow_in(shared, in_workdir({"lesson", "cache"}));
  EXPECT_NE(lesson.exit_code, 0) << lesson.output;
  EXPECT_NE(lesson.output.find("results/lesson-cache-"), std::string::npos) << lesson.output;
  EXPECT_EQ(lesson.output.find("planted"), std::string::npos) << lesson.output;

  // Named as a path, the planted file is refused with its owner and what to do.
  for (const char* path : {"./quick", "quick.yaml"}) {
    if (std::string(path) == "quick.yaml") fs::rename(shared / "quick", shared / "quick.yaml");
    Finished explicit_run = run_pgslow_in(shared, in_workdir({"run", path}));
    EXPECT_NE(explicit_run.exit_code, 0) << explicit_run.output;
    EXPECT_NE(explicit_run.output.find("refuses the file"), std::string::npos)
        << explicit_run.output;
    EXPECT_NE(explicit_run.output.find("uid " + std::to_string(user_->uid)), std::string::npos)
        << explicit_run.output;
    EXPECT_NE(explicit_run.output.find("only you (or root) can write"), std::string::npos)
        << explicit_run.output;
  }
  Finished explicit_lesson = run_pgslow_in(shared, in_workdir({"lesson", "./cache"}));
  EXPECT_NE(explicit_lesson.exit_code, 0) << explicit_lesson.output;
  EXPECT_NE(explicit_lesson.output.find("refuses"), std::string::npos) << explicit_lesson.output;

  EXPECT_FALSE(fs::exists(marker)) << "root ran the planted reload command";
  EXPECT_TRUE(fs::is_empty(roots)) << "root wrote through the planted results link";
  EXPECT_EQ(show_setting("work_mem"), work_mem_);
}

// Finding 2: a pgslow binary under a folder anyone may write (a clone in a shared temporary
// folder) does not take the knobs/ and scenarios/ another user put beside it.
TEST_F(RootBoundaryTest, ADataFolderPlantedBesideTheBinaryIsNotRead) {
  const fs::path clone = *dir_ / "clone";
  fs::create_directories(clone / "build");
  ::chmod(clone.c_str(), 0777);
  fs::copy_file(pgslow_binary(), clone / "build" / "pgslow");
  const fs::path data_dir = data_root();
  fs::copy(data_dir / "knobs", clone / "knobs", fs::copy_options::recursive);
  fs::create_directories(clone / "scenarios");
  std::ofstream(clone / "knobs" / "presets.yaml", std::ios::app)
      << "\n  - name: planted-preset\n    description: planted\n"
      << "    settings: {work_mem: 9MB}\n";
  std::ofstream(clone / "scenarios" / "quick.yaml")
      << "name: planted\nworkload: {name: select-only, scale: 1, clients: 1}\n"
      << "stages:\n  - name: planted-stage\n    settings: {work_mem: 9MB}\n";
  give_to_postgres(clone / "knobs");
  give_to_postgres(clone / "scenarios");

  Finished presets = run_pgslow_in("/", {"presets", "list"}, clone / "build" / "pgslow");
  EXPECT_EQ(presets.exit_code, 0) << presets.output;
  EXPECT_EQ(presets.output.find("planted-preset"), std::string::npos) << presets.output;
  EXPECT_NE(presets.output.find("tiny-cache"), std::string::npos) << presets.output;
  Finished plan = run_pgslow_in("/", in_workdir({"plan", "quick"}), clone / "build" / "pgslow");
  EXPECT_EQ(plan.exit_code, 0) << plan.output;
  EXPECT_EQ(plan.output.find("planted"), std::string::npos) << plan.output;

  // Named by PGSLOW_HOME, the same folder is an error that says why.
  ProcessOptions o;
  o.env = {"PGSLOW_HOME=" + clone.string()};
  ProcessResult home = run_process({pgslow_binary().string(), "presets", "list"}, o);
  EXPECT_NE(home.exit_code, 0) << home.output;
  EXPECT_NE(home.output.find("PGSLOW_HOME=" + clone.string() + " is not a data folder"),
            std::string::npos)
      << home.output;
  EXPECT_EQ(home.output.find("planted-preset"), std::string::npos) << home.output;
}

// Low (log excerpts): what holds the server log is 0600, as server.log is (bind parameters are
// in it); the reports people share stay 0644.
TEST_F(RootBoundaryTest, LogExcerptsAndTheReportHoldingThemAreReadableByRootAlone) {
  std::ofstream(*dir_ / "tiny.yaml") << "name: tiny\nworkload: {name: select-only, scale: 1, "
                                        "clients: 1}\nmeasure: {warmup: 1s, duration: 1s, "
                                        "repeats: 1}\nstages:\n  - name: more-work-mem\n"
                                        "    settings: {work_mem: 9MB}\n";
  const fs::path out = *dir_ / "tiny-results";
  Finished r = run_pgslow(in_workdir({"run", file("tiny.yaml"), "--out", out.string()}));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  int logs = 0;
  for (const auto& e : fs::directory_iterator(out / "logs")) {
    EXPECT_EQ(stat_of(e.path()).st_mode & 07777, 0600u) << e.path();
    ++logs;
  }
  EXPECT_EQ(logs, 2);
  EXPECT_EQ(stat_of(out / "report.json").st_mode & 07777, 0600u);
  EXPECT_EQ(stat_of(out / "report.md").st_mode & 07777, 0644u);
}

// Finding 4: a descriptor root's pgslow inherited (`pgslow server start 9>>root-only-file`) does
// not reach the server, where the postgres user (COPY ... TO PROGRAM) could write through it.
TEST_F(RootBoundaryTest, ADescriptorRootInheritedNeverReachesTheServer) {
  TemporaryCluster own;
  own.get().stop();
  // No O_CLOEXEC, as a shell's redirection leaves it; a number no one else here uses.
  const int opened = ::open(victim_.c_str(), O_WRONLY | O_APPEND);
  ASSERT_GE(opened, 0);
  const int fd = ::fcntl(opened, F_DUPFD, 300);
  ::close(opened);
  ASSERT_GE(fd, 300);
  Finished started = run_pgslow({"--workdir", own.workdir().string(), "server", "start"});
  ::close(fd);
  ASSERT_EQ(started.exit_code, 0) << started.output;
  pg::Connection conn = pg::Connection::open(own.get().conninfo());
  const std::string backend = conn.query_value("SELECT pg_backend_pid()").value_or("0");
  std::error_code ec;
  for (const auto& e : fs::directory_iterator("/proc/" + backend + "/fd", ec)) {
    EXPECT_NE(fs::read_symlink(e.path(), ec), victim_) << "the server holds " << e.path();
  }
  EXPECT_FALSE(ec) << ec.message();
  try {
    conn.exec(fmt::format("COPY (SELECT 1) TO PROGRAM 'echo X >&{}'", fd));
  } catch (const std::exception&) {
    // sh: Bad file descriptor: the program fails, which is the point.
  }
  expect_victim_untouched();
}

}  // namespace
}  // namespace pgslow::testing
