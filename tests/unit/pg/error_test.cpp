#include "pg/error.h"

#include <gtest/gtest.h>

namespace pgslow::pg {
namespace {

TEST(ClassifySqlstate, MapsEachClass) {
  struct Case {
    const char* sqlstate;
    ErrorClass expected;
  } cases[] = {
      {"40001", ErrorClass::kSerialization},
      {"40P01", ErrorClass::kDeadlock},
      {"53300", ErrorClass::kTooManyConnections},
      {"08006", ErrorClass::kConnectionLost},
      {"08003", ErrorClass::kConnectionLost},
      {"57P01", ErrorClass::kConnectionLost},
      {"57P02", ErrorClass::kConnectionLost},
      {"57P03", ErrorClass::kConnectionLost},
      {"57014", ErrorClass::kQueryCanceled},
      {"23505", ErrorClass::kOther},
      {"42P01", ErrorClass::kOther},
      {"", ErrorClass::kConnectionLost},
  };
  for (const auto& c : cases) {
    EXPECT_EQ(classify_sqlstate(c.sqlstate), c.expected) << c.sqlstate;
  }
}

TEST(ClassifySqlstate, OnlySerializationAndDeadlockAreRetryable) {
  EXPECT_TRUE(is_retryable(ErrorClass::kSerialization));
  EXPECT_TRUE(is_retryable(ErrorClass::kDeadlock));
  EXPECT_FALSE(is_retryable(ErrorClass::kTooManyConnections));
  EXPECT_FALSE(is_retryable(ErrorClass::kConnectionLost));
  EXPECT_FALSE(is_retryable(ErrorClass::kOther));
}

TEST(ClassifyConnectFailure, RecognisesTooManyClients) {
  EXPECT_EQ(classify_connect_failure("FATAL:  sorry, too many clients already"),
            ErrorClass::kTooManyConnections);
  EXPECT_EQ(classify_connect_failure(
                "FATAL:  remaining connection slots are reserved for non-replication superuser "
                "connections"),
            ErrorClass::kTooManyConnections);
  EXPECT_EQ(classify_connect_failure("could not connect to server: Connection refused"),
            ErrorClass::kConnectionLost);
}

TEST(Error, CarriesSqlstateMessageAndStatement) {
  Error e(ErrorClass::kDeadlock, "40P01", "deadlock detected", "payment_update_warehouse");
  EXPECT_EQ(e.sqlstate(), "40P01");
  EXPECT_EQ(e.statement(), "payment_update_warehouse");
  EXPECT_EQ(e.code(), kExitRuntime);
  std::string what = e.what();
  EXPECT_NE(what.find("deadlock detected"), std::string::npos);
  EXPECT_NE(what.find("40P01"), std::string::npos);
  EXPECT_NE(what.find("payment_update_warehouse"), std::string::npos);
}

TEST(RedactConninfo, KeywordForm) {
  EXPECT_EQ(redact_conninfo("host=/tmp port=5433 password=s3cret user=bob"),
            "host=/tmp port=5433 password=*** user=bob");
  EXPECT_EQ(redact_conninfo("password = 'it\\'s secret' dbname=x"), "password = *** dbname=x");
  EXPECT_EQ(redact_conninfo("host=a"), "host=a");
  // Not the keyword: a database called "mypassword=1" stays as it is.
  EXPECT_EQ(redact_conninfo("dbname=nopassword"), "dbname=nopassword");
}

TEST(RedactConninfo, UriForm) {
  EXPECT_EQ(redact_conninfo("postgresql://bob:s3cret@db.example:5432/app"),
            "postgresql://bob:***@db.example:5432/app");
  EXPECT_EQ(redact_conninfo("postgres://db/app?user=bob&password=x&sslmode=disable"),
            "postgres://db/app?user=bob&password=***&sslmode=disable");
  EXPECT_EQ(redact_conninfo("postgresql://bob@db/app"), "postgresql://bob@db/app");
}

TEST(RedactConninfo, EverySecretKeyWithAnySpacing) {
  EXPECT_EQ(redact_conninfo("host=a sslpassword=k3y user=b"), "host=a sslpassword=*** user=b");
  EXPECT_EQ(redact_conninfo("host=a password\t=\ts3cret user=b"), "host=a password\t=\t*** user=b");
  EXPECT_EQ(redact_conninfo("password='a b c'"), "password=***");
  EXPECT_EQ(redact_conninfo("postgresql://u:pw@h/db?sslpassword=k&x=1"),
            "postgresql://u:***@h/db?sslpassword=***&x=1");
  EXPECT_EQ(redact_conninfo("postgresql://u:pw@h?password=pw"),
            "postgresql://u:***@h?password=***");
}

TEST(ConninfoWithoutSecrets, NoPasswordKeyAtAll) {
  for (const char* c :
       {"host=/tmp password=s3cret user=bob", "host=/tmp password \t= s3cret user=bob",
        "host=/tmp user=bob sslpassword=s3cret", "postgresql://bob:s3cret@/tmp?host=/tmp",
        "postgresql://bob@/tmp?password=s3cret&host=/tmp"}) {
    SCOPED_TRACE(c);
    std::string out = conninfo_without_secrets(c);
    EXPECT_EQ(out.find("s3cret"), std::string::npos) << out;
    EXPECT_EQ(out.find("password"), std::string::npos) << out;
    EXPECT_NE(out.find("user='bob'"), std::string::npos) << out;
    EXPECT_NE(out.find("host='/tmp'"), std::string::npos) << out;
  }
  EXPECT_EQ(conninfo_without_secrets("dbname='it\\'s'"), "dbname='it\\'s'");
}

}  // namespace
}  // namespace pgslow::pg
