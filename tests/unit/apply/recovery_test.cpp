#include "apply/recovery.h"

#include <gtest/gtest.h>

#include <string>

#include "server/target.h"

namespace pgslow::apply {
namespace {

// A journal of the managed cluster of PostgreSQL `version` (0: the default cluster) in /tmp/x,
// as describe_server records it.
Journal managed_journal(int version) {
  const std::string cluster = version ? "cluster-" + std::to_string(version) : "cluster";
  Journal j;
  j.server.kind = "managed";
  j.server.description = "managed cluster in /tmp/x/" + cluster + " (port 5999)";
  j.server.data_dir = "/tmp/x/" + cluster + "/data";
  j.server.target = {{"kind", "managed"}, {"workdir", "/tmp/x"}};
  if (version) j.server.target["pg_version"] = std::to_string(version);
  return j;
}

server::TargetSpec managed(std::optional<int> version, const std::string& workdir = "/tmp/x") {
  server::TargetSpec spec;
  spec.workdir = workdir;
  spec.pg_version = version;
  return spec;
}

TEST(JournalMatchesTarget, AVersionedClusterIsOnlyTheSameVersionsOfTheSameWorkdir) {
  const Journal j = managed_journal(18);
  EXPECT_TRUE(journal_matches_target(j, managed(18)));
  std::string why;
  EXPECT_FALSE(journal_matches_target(j, managed(std::nullopt), &why));
  EXPECT_EQ(why, "it protects the managed cluster of PostgreSQL 18");
  EXPECT_FALSE(journal_matches_target(j, managed(17), &why));
  EXPECT_EQ(why, "it protects the managed cluster of PostgreSQL 18");
  EXPECT_FALSE(journal_matches_target(j, managed(18, "/tmp/y"), &why));
  EXPECT_EQ(why, "it protects the managed cluster of another workdir");
}

TEST(JournalMatchesTarget, TheDefaultClusterIsNotAVersionedOne) {
  const Journal j = managed_journal(0);
  EXPECT_TRUE(journal_matches_target(j, managed(std::nullopt)));
  std::string why;
  EXPECT_FALSE(journal_matches_target(j, managed(15), &why));
  EXPECT_EQ(why, "it protects the workdir's default managed cluster");
}

TEST(JournalMatchesTarget, ARecordedVersionWhoseDataDirectoryIsElsewhereIsRefused) {
  // A journal claiming version 18 but naming another data directory (edited or planted).
  Journal j = managed_journal(18);
  j.server.data_dir = "/srv/other/data";
  std::string why;
  EXPECT_FALSE(journal_matches_target(j, managed(18), &why));
  EXPECT_EQ(why, "it protects the data directory /srv/other/data");
}

TEST(CommandFor, AVersionedClusterIsNamedBeforeTheSubcommand) {
  EXPECT_EQ(command_for(managed_journal(18), "recover"), "pgslow --pg-version 18 recover");
  EXPECT_EQ(command_for(managed_journal(0), "restore"), "pgslow restore");
  Journal planted = managed_journal(18);
  planted.server.target["pg_version"] = "18; rm -rf /";
  EXPECT_EQ(command_for(planted, "recover"), "pgslow --pg-version '18; rm -rf /' recover");
  Journal pgctl;
  pgctl.server.kind = "pgctl";
  pgctl.server.data_dir = "/srv/pg";
  EXPECT_EQ(command_for(pgctl, "restore"), "pgslow restore --data-dir /srv/pg");
}

}  // namespace
}  // namespace pgslow::apply
