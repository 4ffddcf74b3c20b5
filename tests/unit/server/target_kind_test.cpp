// The table of target kinds: which kind the options name, what the journal records, when a
// journal's record names the same server, and the JSON an apply command reads.
#include "server/target_kind.h"

#include <gtest/gtest.h>
#include <libpq-fe.h>

#include <map>
#include <nlohmann/json.hpp>

#include "server/target.h"

namespace pgslow::server {
namespace {

TargetSpec command_spec() {
  TargetSpec s;
  s.kind = TargetKind::kCommand;
  s.conninfo = "host=db port=5432 user=postgres";
  s.apply_command = "./apply.sh";
  return s;
}

TEST(TargetKind, TheOptionsNameTheKind) {
  TargetSpec s;
  EXPECT_EQ(infer_kind(s), TargetKind::kManaged);
  s.data_dir = "/var/lib/postgresql/15/main";
  EXPECT_EQ(infer_kind(s), TargetKind::kPgctl);
  s.conninfo = "host=/tmp";
  EXPECT_EQ(infer_kind(s), TargetKind::kPgctl);  // a data directory with its conninfo
  s.apply_command = "./apply.sh";
  EXPECT_EQ(infer_kind(s), TargetKind::kCommand);
  TargetSpec c;
  c.conninfo = "host=db";
  EXPECT_EQ(infer_kind(c), TargetKind::kCommand);
}

TEST(TargetKind, NamesAndFieldsComeFromOneTable) {
  EXPECT_EQ(target_kind_names(), "managed, pgctl or command");
  ASSERT_NE(find_target_kind("Command"), nullptr);
  EXPECT_EQ(find_target_kind("command")->kind, TargetKind::kCommand);
  EXPECT_EQ(find_target_kind("docker"), nullptr);
  EXPECT_EQ(to_string(TargetKind::kPgctl), "pgctl");
  for (const TargetField& f : target_fields()) {
    EXPECT_EQ(f.option.substr(0, 2), "--") << f.yaml;
    TargetSpec s;
    f.set(s, "x");
    EXPECT_EQ(f.get(s), "x") << f.yaml;
  }
}

// What the callers ask instead of comparing kind names: only the managed cluster lives in the
// workdir (one per major version), and only a command target keeps no postgresql.auto.conf.
TEST(TargetKind, TheTableSaysWhereEachKindLivesAndWhatTheJournalSaves) {
  EXPECT_TRUE(target_kind(TargetKind::kManaged).in_workdir);
  EXPECT_FALSE(target_kind(TargetKind::kPgctl).in_workdir);
  EXPECT_FALSE(target_kind(TargetKind::kCommand).in_workdir);
  EXPECT_TRUE(target_kind(TargetKind::kManaged).local);
  EXPECT_TRUE(target_kind(TargetKind::kPgctl).local);
  EXPECT_FALSE(target_kind(TargetKind::kCommand).local);
}

// A journal's commands run only for the user who names the same server with the same commands.
TEST(TargetKind, ARecordMatchesOnlyTheSameCommands) {
  TargetRecord r;
  r.kind = "command";
  r.conninfo = "host=db port=5432 user=postgres";
  r.target = {{"kind", "command"}, {"apply_command", "./apply.sh"}};
  std::string why;
  EXPECT_TRUE(record_matches(r, command_spec(), &why)) << why;
  TargetSpec other = command_spec();
  other.apply_command = "rm -rf /";
  EXPECT_FALSE(record_matches(r, other, &why));
  EXPECT_NE(why.find("apply command"), std::string::npos) << why;
  const std::vector<std::string> options = target_kind(TargetKind::kCommand).options(r);
  EXPECT_EQ(options,
            (std::vector<std::string>{"--conninfo", r.conninfo, "--apply-command", "./apply.sh"}));
}

TEST(TargetKind, TheApplyCommandReadsSettingsAsJson) {
  ParameterChange change;
  change.settings = {{"shared_buffers", "16MB"}, {"work_mem", std::nullopt}};
  change.restart_needed = true;
  nlohmann::json j = nlohmann::json::parse(parameter_change_json(change));
  EXPECT_EQ(j["settings"]["shared_buffers"], "16MB");
  EXPECT_TRUE(j["settings"]["work_mem"].is_null());
  EXPECT_TRUE(j["restart_needed"].get<bool>());
  EXPECT_FALSE(j["restore"].get<bool>());
}

// Issue #52: postmaster.pid's lines 5 and 4, which the server's user writes, never add a
// keyword: `x hostaddr=127.0.0.1` once sent root's ~/.pgpass entry to a listener there.
std::map<std::string, std::string> parsed(const std::string& conninfo) {
  std::map<std::string, std::string> out;
  PQconninfoOption* options = PQconninfoParse(conninfo.c_str(), nullptr);
  if (!options) return out;
  for (PQconninfoOption* o = options; o->keyword; ++o) {
    if (o->val) out[o->keyword] = o->val;
  }
  PQconninfoFree(options);
  return out;
}

TEST(PgctlConninfo, ThePidFilesLinesAreOneQuotedValueEach) {
  auto c = parsed(pgctl_socket_conninfo("/tmp/x hostaddr=127.0.0.1", "5433"));
  EXPECT_EQ(c["host"], "/tmp/x hostaddr=127.0.0.1");
  EXPECT_EQ(c.count("hostaddr"), 0u);
  EXPECT_EQ(c["port"], "5433");
  EXPECT_EQ(c["password"], "");  // sends none (pg::local_socket_conninfo)
  EXPECT_EQ(c["passfile"], "/dev/null/pgslow-no-passfile");
  EXPECT_EQ(pgctl_socket_conninfo("/tmp/x hostaddr=127.0.0.1", "5433"),
            "host='/tmp/x hostaddr=127.0.0.1' port=5433 user=postgres dbname=postgres "
            "password='' passfile=/dev/null/pgslow-no-passfile" +
                std::string(PQlibVersion() >= 160000 ? " require_auth=none" : ""));
  // A host name (TCP to wherever it names) or a port that is not a number: the defaults.
  c = parsed(pgctl_socket_conninfo("x hostaddr=127.0.0.1", "5432 hostaddr=127.0.0.1"));
  EXPECT_EQ(c["host"], "/var/run/postgresql");
  EXPECT_EQ(c["port"], "5432");
  EXPECT_EQ(c.count("hostaddr"), 0u);
  c = parsed(pgctl_socket_conninfo("prod-db.example.com", "99999"));
  EXPECT_EQ(c["host"], "/var/run/postgresql");
  EXPECT_EQ(c["port"], "5432");
  c = parsed(pgctl_socket_conninfo("/run/it's", "6543"));
  EXPECT_EQ(c["host"], "/run/it's");
  EXPECT_EQ(c["port"], "6543");
}

}  // namespace
}  // namespace pgslow::server
