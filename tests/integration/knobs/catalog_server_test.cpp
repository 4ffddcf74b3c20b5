// Every catalog entry and every preset validated against the managed PostgreSQL server, so
// the catalog cannot rot unnoticed; and the `knobs`/`presets`/`check` commands end to end.

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>

#include "knobs/catalog.h"
#include "knobs/validate.h"
#include "pg/connection.h"
#include "tests/support/cluster_fixture.h"

namespace pgslow::knobs {
namespace {

namespace fs = std::filesystem;

const Catalog& catalog() {
  static const Catalog c = Catalog::load(fs::path(PGSLOW_SOURCE_DIR) / "knobs");
  return c;
}

const ServerSettings& server() {
  static const ServerSettings s = [] {
    pg::Connection conn = pg::Connection::open(testing::conninfo());
    return ServerSettings::read(conn);
  }();
  return s;
}

std::string errors_of(const std::vector<SettingVerdict>& verdicts) {
  std::string out;
  for (const auto& p : all_problems(verdicts)) {
    if (p.severity == ConfigError::Severity::kError) out += p.str() + "\n";
  }
  return out;
}

TEST(KnobsOnServer, ReadsPgSettings) {
  const auto& s = server();
  EXPECT_GE(s.major, 13);
  EXPECT_EQ(s.version_num / 10000, s.major);
  const ServerSetting* sb = s.find("shared_buffers");
  ASSERT_NE(sb, nullptr);
  EXPECT_EQ(sb->unit, "8kB");
  EXPECT_EQ(sb->context, "postmaster");
  EXPECT_FALSE(s.find("wal_level")->enumvals.empty());
  EXPECT_NE(s.find("SHARED_BUFFERS"), nullptr);  // names are case-insensitive
}

TEST(KnobsOnServer, EveryKnobsValuesAreValidOrSkippedThroughSince) {
  const auto& s = server();
  for (const auto& k : catalog().knobs()) {
    std::vector<std::string> values = k.slow;
    values.push_back(k.healthy);
    for (const auto& value : values) {
      const auto v = validate({Setting{k.name, value, k.where}}, catalog(), s);
      ASSERT_EQ(v.size(), 1u);
      if (!k.exists_in(s.major)) {
        EXPECT_EQ(v[0].verdict, Verdict::kSkipped) << k.name << " = " << value;
        EXPECT_NE(v[0].reason.find("PostgreSQL"), std::string::npos) << k.name;
        continue;
      }
      // The server must know every knob the catalog says exists on this version.
      EXPECT_NE(s.find(k.name), nullptr) << k.name << ": fix 'since' in " << k.where.str();
      // A value this version refuses must be one the catalog explains by a later minimum.
      if (v[0].verdict == Verdict::kError) {
        bool explained = false;
        for (const auto& [version, min] : k.min_by_version) explained |= version > s.major;
        EXPECT_TRUE(explained) << k.name << " = " << value << ": " << errors_of(v);
      }
    }
  }
}

TEST(KnobsOnServer, CurrentValuesReadBackAsMatches) {
  const auto& s = server();
  for (const auto& k : catalog().knobs()) {
    const ServerSetting* now = s.find(k.name);
    if (!now || now->context == "internal") continue;
    const auto v = validate({Setting{k.name, now->setting, k.where}}, catalog(), s);
    if (v[0].verdict == Verdict::kError) continue;  // e.g. a cross rule of the current config
    EXPECT_TRUE(effective_value_matches(*now, v[0]))
        << k.name << ": now " << now->setting << ", expected " << v[0].expected_setting;
  }
}

TEST(KnobsOnServer, EveryPresetValidates) {
  const auto& s = server();
  for (const auto& p : catalog().presets()) {
    const auto verdicts = validate(catalog().expand(p), catalog(), s);
    for (const auto& v : verdicts) {
      if (v.verdict != Verdict::kError) continue;
      // The one error the published run carries on a version before 17.
      const bool known = v.setting.name == "maintenance_work_mem" && s.major < 17;
      EXPECT_TRUE(known) << p.name << ": " << errors_of({v});
    }
  }
}

TEST(KnobsOnServer, The42000xPresetOnThisServer) {
  const auto& s = server();
  const Preset* p = catalog().find_preset("the-42000x");
  ASSERT_NE(p, nullptr);
  const auto verdicts = validate(catalog().expand(*p), catalog(), s);
  const auto verdict_of = [&](const std::string& name) -> const SettingVerdict* {
    for (const auto& v : verdicts) {
      if (v.setting.name == name) return &v;
    }
    return nullptr;
  };
  const std::array<std::pair<const char*, int>, 4> absent = {
      {{"summarize_wal", 17},
       {"autovacuum_vacuum_max_threshold", 18},
       {"io_method", 18},
       {"io_workers", 18}}};
  for (const auto& [name, since] : absent) {
    const SettingVerdict* v = verdict_of(name);
    ASSERT_NE(v, nullptr) << name;
    if (s.major < since) {
      EXPECT_EQ(v->verdict, Verdict::kSkipped) << name;
      EXPECT_EQ(v->reason, "needs PostgreSQL " + std::to_string(since)) << name;
    } else {
      EXPECT_NE(v->verdict, Verdict::kSkipped) << name;
    }
  }
  const SettingVerdict* mwm = verdict_of("maintenance_work_mem");
  ASSERT_NE(mwm, nullptr);
  if (s.major < 17) {
    EXPECT_EQ(mwm->verdict, Verdict::kError);
    EXPECT_NE(mwm->reason.find("maintenance_work_mem = 128kB is below this server's minimum 1MB "
                               "(PostgreSQL " +
                               std::to_string(s.major) + "; 17 and later accept 64kB)"),
              std::string::npos)
        << mwm->reason;
  }
  EXPECT_EQ(verdict_of("shared_buffers")->verdict, Verdict::kRestart);
  EXPECT_EQ(verdict_of("shared_buffers")->expected_setting, "1024");  // 8MB wins over 2MB
}

// ---- the commands, end to end (skipped when the pgslow binary was not built) ----------------

struct Output {
  int status = -1;
  std::string text;
};

Output run(const std::string& args) {
  Output out;
  const std::string cmd = testing::pgslow_binary().string() + " " + args + " 2>&1";
  FILE* pipe = ::popen(cmd.c_str(), "r");
  if (!pipe) return out;
  char buf[4096];
  std::size_t n = 0;
  while ((n = std::fread(buf, 1, sizeof buf, pipe)) > 0) out.text.append(buf, n);
  const int rc = ::pclose(pipe);
  out.status = WIFEXITED(rc) ? WEXITSTATUS(rc) : -1;
  return out;
}

class Commands : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!fs::exists(testing::pgslow_binary())) GTEST_SKIP() << "pgslow not built";
    conn_ = "--conninfo '" + testing::conninfo() + "'";
  }
  std::string conn_;
};

TEST_F(Commands, KnobsShowExplainsAndShowsTheLiveRow) {
  const Output o = run("knobs show shared_buffers " + conn_);
  EXPECT_EQ(o.status, 0) << o.text;
  for (const char* part : {"8MB", "pitfalls", "context", "pending_restart", "min"}) {
    EXPECT_NE(o.text.find(part), std::string::npos) << part << "\n" << o.text;
  }
}

TEST_F(Commands, PresetsShowThe42000x) {
  const Output o = run("presets show the-42000x " + conn_);
  EXPECT_EQ(o.status, 0) << o.text;
  // summarize_wal came in 17, io_method and autovacuum_vacuum_max_threshold in 18: a server
  // before those says so, one that has them does not.
  for (int version : {17, 18}) {
    const bool said = o.text.find(fmt::format("needs PostgreSQL {}", version)) != std::string::npos;
    EXPECT_EQ(said, server().major < version) << version << "\n" << o.text;
  }
}

TEST_F(Commands, CheckBadFilesExitsTwoNamingFileAndLine) {
  const fs::path dir = fs::temp_directory_path() / ("pgslow-check-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  const std::vector<std::pair<std::string, std::string>> files = {
      {"typo.yaml", "sahred_buffers: 8MB\n"},
      {"malformed.yaml", "a: [1\nb: 2\n"},
      {"dup.yaml", "work_mem: 1MB\nwork_mem: 2MB\n"},
      // Below the minimum of every version (1MB up to 16, 64kB from 17).
      {"range.yaml", "maintenance_work_mem: 32kB\n"},
      {"newline.yaml", "work_mem: \"1MB\\nfsync = off\"\n"},
  };
  for (const auto& [name, text] : files) {
    std::ofstream(dir / name) << text;
    const Output o = run("check " + (dir / name).string() + " " + conn_);
    EXPECT_EQ(o.status, 2) << name << "\n" << o.text;
    EXPECT_NE(o.text.find((dir / name).string() + ":"), std::string::npos) << o.text;
    EXPECT_NE(o.text.find("error:"), std::string::npos) << o.text;
  }
  std::ofstream(dir / "good.yaml") << "shared_buffers: 8MB\nrandom_page_cost: 1e300\n";
  const Output ok = run("check " + (dir / "good.yaml").string() + " " + conn_);
  EXPECT_EQ(ok.status, 0) << ok.text;
  fs::remove_all(dir);
}

}  // namespace
}  // namespace pgslow::knobs
