// pgbench's expression language and script files (workload/script/): values, errors with
// their positions, the distributions' ranges, and the script parser.

#include "workload/script/script.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <limits>

#include "common/task.h"
#include "workload/registry.h"
#include "workload/script/expr.h"

namespace pgslow::workload::script {
namespace {

// Variables :x = 7 (slot 0) and :d = 2.5 (slot 1).
std::optional<int> lookup(std::string_view name) {
  if (name == "x") return 0;
  if (name == "d") return 1;
  return std::nullopt;
}

Value eval(std::string_view text, std::uint64_t seed = 1) {
  Random rng(seed);
  std::vector<Value> vars{Value::of_int(7), Value::of_double(2.5)};
  return parse_expression(text, lookup).evaluate(vars, rng);
}

std::string text(std::string_view expr) {
  return eval(expr).text();
}

TEST(Expr, IntegerArithmeticFollowsPgbench) {
  EXPECT_EQ(text("1 + 2 * 3"), "7");
  EXPECT_EQ(text("(1 + 2) * 3"), "9");
  EXPECT_EQ(text("7 / 2"), "3");
  EXPECT_EQ(text("-7 / 2"), "-3");  // truncates toward zero, as C
  EXPECT_EQ(text("-7 % 3"), "-1");
  EXPECT_EQ(text(":x * 10 - -1"), "71");
  EXPECT_EQ(text("1 << 4 | 1"), "17");
  EXPECT_EQ(text("5 # 1"), "4");
  EXPECT_EQ(text("~0"), "-1");
}

TEST(Expr, DoublesMixAndFormatLikePgbench) {
  EXPECT_EQ(text("1 + 0.5"), "1.5");
  EXPECT_EQ(text(":d * 2"), "5");
  EXPECT_EQ(eval(":d * 2").kind, Value::Kind::kDouble);
  EXPECT_EQ(text("int(:d * 3)"), "7");
  EXPECT_EQ(text("double(3) / 2"), "1.5");
  EXPECT_EQ(text("pi()"), "3.14159265358979");
  EXPECT_EQ(text("sqrt(16)"), "4");
  EXPECT_EQ(text("abs(-3)"), "3");
  EXPECT_EQ(text("abs(-3.5)"), "3.5");
  EXPECT_EQ(text("least(5, 2, 9)"), "2");
  EXPECT_EQ(text("greatest(5, 2.5, 1)"), "5");
  EXPECT_EQ(text("ln(exp(2))"), "2");
  EXPECT_EQ(text("mod(10, 3)"), "1");
  EXPECT_EQ(text("2e3"), "2000");
}

TEST(Expr, ComparisonsAndLogicGiveBooleans) {
  EXPECT_EQ(text("1 < 2"), "true");
  EXPECT_EQ(text(":x = 7"), "true");
  EXPECT_EQ(text(":x <> 7"), "false");
  EXPECT_EQ(text("1 + 1 >= 3 OR 2 > 1"), "true");
  EXPECT_EQ(text("not (1 < 2) and true"), "false");
  EXPECT_EQ(text("2.5 = :d"), "true");
}

TEST(Expr, HashesAreDeterministicAndSeeded) {
  EXPECT_EQ(text("hash(42)"), text("hash_murmur2(42)"));
  EXPECT_EQ(text("hash(42, 1)"), text("hash(42, 1)"));
  EXPECT_NE(text("hash(42, 1)"), text("hash(42, 2)"));
  EXPECT_NE(text("hash_fnv1a(42)"), text("hash_murmur2(42)"));
}

TEST(Expr, RuntimeErrorsSayWhat) {
  EXPECT_THROW(eval("1 / 0"), EvalError);
  EXPECT_THROW(eval("1 % 0"), EvalError);
  EXPECT_THROW(eval("9223372036854775807 + 1"), EvalError);
  EXPECT_THROW(eval("random(5, 1)"), EvalError);
  EXPECT_THROW(eval("random_gaussian(1, 10, 1.5)"), EvalError);
  EXPECT_THROW(eval("random_exponential(1, 10, 0)"), EvalError);
  EXPECT_THROW(eval("random_zipfian(1, 10, 1.0)"), EvalError);
  EXPECT_THROW(eval("sqrt(-1)"), EvalError);
}

struct BadExpr {
  const char* text;
  int column;
  const char* message;
};

TEST(Expr, ParseErrorsNameTheColumnAndTheReason) {
  for (const BadExpr& b : {
           BadExpr{"1 +", 4, "unterminated expression"},
           BadExpr{"(1 + 2", 7, "missing ')'"},
           BadExpr{"random(1)", 1, "random() takes 2 arguments, got 1"},
           BadExpr{"2 * randon(1, 2)", 5, "unknown function randon() (did you mean random()?)"},
           BadExpr{"1 + :nope", 5, "unknown variable :nope"},
           BadExpr{"1 2", 3, "unexpected '2'"},
           BadExpr{"", 1, "empty expression"},
           BadExpr{"pi(1)", 1, "pi() takes 0 arguments, got 1"},
           BadExpr{"1 < 2 < 3", 7, "comparisons do not chain"},
       }) {
    try {
      parse_expression(b.text, lookup);
      ADD_FAILURE() << b.text << ": no error";
    } catch (const ParseError& e) {
      EXPECT_EQ(e.column(), b.column) << b.text << ": " << e.what();
      EXPECT_NE(std::string(e.what()).find(b.message), std::string::npos)
          << b.text << ": " << e.what();
    }
  }
}

std::string repeat(std::string_view piece, int n) {
  std::string out;
  for (int i = 0; i < n; ++i) out += piece;
  return out;
}

std::string nested_parens(int depth) {
  return repeat("(", depth) + "1" + repeat(")", depth);
}

// A hostile expression is refused with its reason (and is no stack overflow): 10,000 levels of
// parentheses, of unary operators, of function calls, and a chain of 100,000 operators (a tree
// as deep as it is long).
TEST(Expr, DeepNestingIsRefusedNotACrash) {
  for (const std::string& text :
       {nested_parens(10'000), repeat("-", 10'000) + "1", repeat("+", 10'000) + "1",
        repeat("~", 10'000) + "1", repeat("not ", 10'000) + "true",
        repeat("abs(", 10'000) + "1" + repeat(")", 10'000), "1" + repeat(" + 1", 100'000),
        nested_parens(kMaxExpressionDepth), "1" + repeat(" + 1", kMaxExpressionDepth)}) {
    try {
      parse_expression(text, lookup);
      ADD_FAILURE() << text.substr(0, 40) << "...: no error";
    } catch (const ParseError& e) {
      EXPECT_TRUE(e.depth_exceeded()) << text.substr(0, 40) << ": " << e.what();
      EXPECT_NE(std::string(e.what()).find(
                    fmt::format("nests deeper than {} levels", kMaxExpressionDepth)),
                std::string::npos)
          << e.what();
    }
  }
}

// Up to the limit an expression parses and evaluates: evaluation recurses no deeper.
TEST(Expr, NestingUpToTheLimitEvaluates) {
  EXPECT_EQ(text(nested_parens(kMaxExpressionDepth - 1)), "1");
  EXPECT_EQ(text("1" + repeat(" + 1", kMaxExpressionDepth - 1)),
            std::to_string(kMaxExpressionDepth));
  EXPECT_EQ(text(repeat("-", kMaxExpressionDepth - 1) + "1"), "-1");  // 255 minus signs
  EXPECT_EQ(
      text(repeat("abs(", kMaxExpressionDepth - 2) + "-3" + repeat(")", kMaxExpressionDepth - 2)),
      "3");
}

// Every draw of each distribution stays in its range, and the skewed ones are skewed.
TEST(Expr, DistributionsStayInRangeAndHaveTheirShape) {
  Random rng(42);
  std::vector<Value> vars{Value::of_int(7), Value::of_double(2.5)};
  struct Case {
    const char* expr;
    double low_share_min;  // share of draws in the lowest tenth of [1, 1000]
    double low_share_max;
  };
  for (const Case& c :
       {Case{"random(1, 1000)", 0.07, 0.13}, Case{"random_uniform(1, 1000)", 0.07, 0.13},
        Case{"random_exponential(1, 1000, 5)", 0.35, 0.45},  // 1 - e^-0.5 = 39%
        Case{"random_gaussian(1, 1000, 2.5)", 0.0, 0.03},
        Case{"random_zipfian(1, 1000, 1.5)", 0.80, 1.0}}) {
    Expr e = parse_expression(c.expr, lookup);
    int low = 0;
    constexpr int kDraws = 20000;
    for (int i = 0; i < kDraws; ++i) {
      const Value v = e.evaluate(vars, rng);
      ASSERT_EQ(v.kind, Value::Kind::kInt) << c.expr;
      ASSERT_GE(v.i, 1) << c.expr;
      ASSERT_LE(v.i, 1000) << c.expr;
      low += v.i <= 100 ? 1 : 0;
    }
    const double share = static_cast<double>(low) / kDraws;
    EXPECT_GE(share, c.low_share_min) << c.expr;
    EXPECT_LE(share, c.low_share_max) << c.expr;
  }
}

// ---- scripts ----

ScriptSet parse(std::string_view text, std::vector<ConfigError>& problems) {
  ScriptSet set;
  parse_script(text, "t.sql", "t", 1, set, problems);
  return set;
}

TEST(Script, ParsesSetSleepAndMultiLineSql) {
  std::vector<ConfigError> problems;
  ScriptSet set = parse(
      "-- a comment\n"
      "\\set aid random(1, 100000 * :scale)\n"
      "\\set delta random(-5000, 5000)\n"
      "\\sleep 2 ms\n"
      "BEGIN;\n"
      "UPDATE pgbench_accounts SET abalance = abalance + :delta\n"
      "  WHERE aid = :aid;\n"
      "SELECT ':not_a_var', 1::int, $$ :nor; this $$; END;\n",
      problems);
  ASSERT_TRUE(problems.empty()) << problems[0].str();
  const auto& cmds = set.scripts[0].commands;
  ASSERT_EQ(cmds.size(), 7u);
  EXPECT_EQ(cmds[0].kind, Command::Kind::kSet);
  EXPECT_EQ(cmds[2].kind, Command::Kind::kSleep);
  EXPECT_EQ(cmds[2].sleep_value * cmds[2].sleep_unit_us, 2000);
  EXPECT_EQ(cmds[3].parameterised_sql(), "BEGIN");
  EXPECT_EQ(cmds[4].line, 6);
  EXPECT_EQ(cmds[4].parameterised_sql(),
            "UPDATE pgbench_accounts SET abalance = abalance + $1\n  WHERE aid = $2");
  EXPECT_EQ(cmds[5].parameterised_sql(), "SELECT ':not_a_var', 1::int, $$ :nor; this $$");
  EXPECT_EQ(cmds[6].parameterised_sql(), "END");
  EXPECT_EQ(set.variables.names.size(), 6u);  // 4 predefined + aid + delta
}

TEST(Script, ErrorsNameLineColumnAndReason) {
  struct Bad {
    const char* text;
    const char* where;
    const char* message;
  };
  for (const Bad& b : {
           Bad{"SELECT :aid;\n", "t.sql:1:8", "unknown variable :aid"},
           Bad{"\\set x 1 +\nSELECT 1;\n", "t.sql:1:11", "unterminated expression"},
           Bad{"\\set x random(1)\nSELECT 1;\n", "t.sql:1:8", "random() takes 2 arguments"},
           Bad{"\\set x foo(1)\nSELECT 1;\n", "t.sql:1:8", "unknown function foo()"},
           Bad{"\\sleep 10 days\nSELECT 1;\n", "t.sql:1:11", "unit 'days'"},
           Bad{"\\shell ls\nSELECT 1;\n", "t.sql:1:1", "not supported"},
           Bad{"\\set x 1\n", "t.sql:1:1", "no SQL command"},
           Bad{"", "t.sql:1:1", "no SQL command"},
           Bad{"SELECT 'open;\n", "t.sql:1:1", "unterminated quoted string"},
       }) {
    std::vector<ConfigError> problems;
    parse(b.text, problems);
    ASSERT_FALSE(problems.empty()) << b.text;
    EXPECT_EQ(problems[0].where.str(), b.where) << b.text << ": " << problems[0].str();
    EXPECT_NE(problems[0].message.find(b.message), std::string::npos)
        << b.text << ": " << problems[0].str();
  }
}

// The three faults of issue 20 in a script file: each is refused with file:line:column.
TEST(Script, RefusesTooDeepExpressionsHugeSleepsAndNulBytes) {
  struct Bad {
    std::string text;
    const char* where;
    const char* message;
  };
  const std::string max = std::to_string(std::numeric_limits<std::int64_t>::max());
  for (const Bad& b : {
           Bad{"SELECT 1;\n\\set x " + nested_parens(10'000) + "\nSELECT 1;\n", "t.sql:2:264",
               "nests deeper than 256 levels"},
           Bad{"\\sleep " + max + " s\nSELECT 1;\n", "t.sql:1:8", "out of range"},
           Bad{"\\sleep 9223372036854776 ms\nSELECT 1;\n", "t.sql:1:8", "out of range"},
           Bad{"\\sleep 99999999999999999999 us\nSELECT 1;\n", "t.sql:1:8", "out of range"},
           Bad{"\\sleep -1\nSELECT 1;\n", "t.sql:1:8", "out of range"},
           Bad{std::string("SELECT 1;\nSELECT 'a\0b';\n", 24), "t.sql:2:10", "NUL byte"},
           Bad{std::string("\0", 1), "t.sql:1:1", "NUL byte"},
       }) {
    std::vector<ConfigError> problems;
    parse(b.text, problems);
    ASSERT_EQ(problems.size(), 1u) << b.text.substr(0, 40);
    EXPECT_EQ(problems[0].where.str(), b.where) << problems[0].str().substr(0, 200);
    EXPECT_NE(problems[0].message.find(b.message), std::string::npos)
        << problems[0].str().substr(0, 200);
  }
  // The longest sleep that fits is accepted.
  std::vector<ConfigError> problems;
  ScriptSet set = parse("\\sleep " + max + " us\n\\sleep 9223372036854 s\nSELECT 1;\n", problems);
  ASSERT_TRUE(problems.empty()) << problems[0].str();
  EXPECT_EQ(set.scripts[0].commands[1].sleep_value, 9'223'372'036'854);
  EXPECT_EQ(sleep_us(9'223'372'036'854, 1'000'000), 9'223'372'036'854'000'000);
  EXPECT_EQ(sleep_us(9'223'372'036'855, 1'000'000), std::nullopt);
  EXPECT_EQ(sleep_us(-1, 1), std::nullopt);
}

// Records the sleeps; every statement succeeds.
class SleepingSession final : public Session {
 public:
  std::vector<std::int64_t> sleeps;
  Task<pg::Result> execute(const std::string&, const pg::Params&) override {
    co_return pg::Result();
  }
  Task<pg::Result> query(const std::string&) override { co_return pg::Result(); }
  Task<void> sleep(std::int64_t us) override {
    sleeps.push_back(us);
    co_return;
  }
};

// Through the workload, as `pgslow check`, `plan` and `run` reach a script: validate() names
// the file and line; a \sleep :variable too large for 64-bit microseconds stops the run with
// file:line instead of overflowing, and a negative one sleeps no time (as in pgbench).
TEST(Script, TheWorkloadRefusesThemAsCheckAndRunSeeThem) {
  const auto dir = std::filesystem::temp_directory_path() / "pgslow_script_limits_test";
  std::filesystem::create_directories(dir);
  std::ofstream(dir / "deep.sql") << "\\set x " << nested_parens(10'000) << "\nSELECT :x;\n";
  std::ofstream(dir / "huge.sql") << "\\set m -5\n\\sleep :m s\n"
                                     "\\set n 9223372036854775807\n\\sleep :n ms\nSELECT 1;\n";
  const Workload& w = find_workload("script");
  WorkloadParams params;
  params.base_dir = dir;
  params.options["scripts"] = "deep.sql";
  const auto problems = w.validate(params);
  ASSERT_TRUE(has_errors(problems));
  EXPECT_EQ(problems[0].where.str(), (dir / "deep.sql").string() + ":1:264");
  EXPECT_NE(problems[0].message.find("nests deeper"), std::string::npos) << problems[0].str();

  params.options["scripts"] = "huge.sql";
  ASSERT_FALSE(has_errors(w.validate(params)));
  auto client = w.make_client(params, 0);
  client->choose();
  SleepingSession session;
  try {
    run_synchronously(client->execute(session));
    FAIL() << "no error";
  } catch (const RuntimeError& e) {
    EXPECT_NE(std::string(e.what()).find((dir / "huge.sql").string() +
                                         ":4: \\sleep of "
                                         "9223372036854775807 ms is out of range"),
              std::string::npos)
        << e.what();
  }
  EXPECT_TRUE(session.sleeps.empty());
}

TEST(Script, SpecsTakeWeightsAndRejectBadOnes) {
  std::vector<ConfigError> problems;
  auto s = parse_script_spec("heavy.sql@5", "/scen", problems);
  ASSERT_TRUE(s);
  EXPECT_EQ(s->weight, 5);
  EXPECT_EQ(s->path, std::filesystem::path("/scen/heavy.sql"));
  EXPECT_EQ(parse_script_spec("/abs.sql", "/scen", problems)->weight, 1);
  EXPECT_TRUE(problems.empty());
  EXPECT_FALSE(parse_script_spec("x.sql@five", "", problems));
  EXPECT_FALSE(parse_script_spec("x.sql@-1", "", problems));
  ASSERT_EQ(problems.size(), 2u);
  EXPECT_NE(problems[0].message.find("bad weight 'five'"), std::string::npos);
}

TEST(Script, LoadNamesStatementsByFileAndLine) {
  const auto dir = std::filesystem::temp_directory_path() / "pgslow_script_test";
  std::filesystem::create_directories(dir);
  std::ofstream(dir / "a.sql") << "SELECT 1; SELECT 2;\nSELECT 3;\n";
  std::vector<ConfigError> problems;
  auto a = parse_script_spec("a.sql@0", dir, problems);
  auto missing = parse_script_spec("missing.sql", dir, problems);
  ScriptSet set = load_scripts({*a, *missing}, problems);
  ASSERT_EQ(problems.size(), 2u);
  EXPECT_NE(problems[0].message.find("cannot read script file"), std::string::npos);
  EXPECT_NE(problems[1].message.find("weight 0"), std::string::npos);
  const auto& cmds = set.scripts.at(0).commands;
  ASSERT_EQ(cmds.size(), 3u);
  EXPECT_EQ(cmds[0].statement, (dir / "a.sql").string() + ":1");
  EXPECT_EQ(cmds[1].statement, (dir / "a.sql").string() + ":1#2");
  EXPECT_EQ(cmds[2].statement, (dir / "a.sql").string() + ":2");
}

}  // namespace
}  // namespace pgslow::workload::script
