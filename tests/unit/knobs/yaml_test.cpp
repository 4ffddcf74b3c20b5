// The shared YAML reader: every bad input becomes a located ConfigError, never a crash.

#include "common/yaml.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

namespace pgslow::yaml {
namespace {

namespace fs = std::filesystem;

std::string first_problem(Reader& r) {
  return r.problems().empty() ? std::string() : r.problems().front().str();
}

fs::path temp_file(const std::string& name, const std::string& contents) {
  const fs::path dir =
      fs::temp_directory_path() / ("pgslow-yaml-test-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  const fs::path p = dir / name;
  std::ofstream(p, std::ios::binary) << contents;
  return p;
}

TEST(Yaml, MalformedYamlReportsTheParsersLineAndColumn) {
  Reader r("bad.yaml");
  EXPECT_FALSE(r.load_string("a: 1\nb: [1, 2\nc: 3\n"));
  ASSERT_EQ(r.problems().size(), 1u);
  const auto& p = r.problems().front();
  EXPECT_EQ(p.where.file, "bad.yaml");
  EXPECT_GE(p.where.line, 2);
  EXPECT_GT(p.where.column, 0);
  EXPECT_NE(p.message.find("malformed YAML"), std::string::npos);
}

TEST(Yaml, LocationsAreOneBased) {
  Reader r("f.yaml");
  auto root = r.load_string("first: 1\nsecond:\n  inner: 2\n");
  ASSERT_TRUE(root);
  Fields f = r.fields(*root, "the file");
  EXPECT_EQ(r.where(f.key_node("second")).line, 2);
  EXPECT_EQ(r.where(f.key_node("second")).column, 1);
  EXPECT_EQ(r.where(f.get("second")["inner"]).line, 3);
  EXPECT_EQ(r.where(f.get("second")["inner"]).column, 10);
}

TEST(Yaml, DuplicateKeysAreErrors) {
  Reader r("dup.yaml");
  auto root = r.load_string("shared_buffers: 8MB\nwork_mem: 1MB\nshared_buffers: 2MB\n");
  ASSERT_TRUE(root);
  Fields f = r.fields(*root, "settings");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(first_problem(r),
            "dup.yaml:3:1: error: duplicate key 'shared_buffers' in settings (first given at "
            "line 1; keep one)");
  EXPECT_EQ(f.get("shared_buffers").Scalar(), "8MB");  // the first one stays
}

TEST(Yaml, UnknownFieldsSuggestTheClosest) {
  Reader r("k.yaml");
  auto root = r.load_string("name: x\nsicne: 9\n");
  ASSERT_TRUE(root);
  r.fields(*root, "a knob", {"name", "since", "until"});
  EXPECT_EQ(first_problem(r),
            "k.yaml:2:1: error: unknown field 'sicne' in a knob (did you mean 'since'?)");
}

TEST(Yaml, WrongShapesAreErrorsNotExceptions) {
  Reader r("s.yaml");
  auto root = r.load_string("settings: [1, 2]\nname: {a: b}\nlist: 3\n");
  ASSERT_TRUE(root);
  r.fields((*root)["settings"], "settings");
  EXPECT_FALSE(r.string((*root)["name"], "name"));
  EXPECT_FALSE(r.integer((*root)["list"].IsDefined() ? (*root)["name"] : (*root)["list"], "n"));
  EXPECT_TRUE(r.string_list((*root)["list"], "list"));  // a scalar is a list of one
  EXPECT_FALSE(r.is_sequence((*root)["name"], "name"));
  ASSERT_GE(r.problems().size(), 3u);
  EXPECT_EQ(r.problems()[0].str(),
            "s.yaml:1:11: error: settings must be a map (key: value lines), not a list");
  EXPECT_NE(r.problems()[1].message.find("'name' must be a single value, not a map"),
            std::string::npos);
}

TEST(Yaml, TypedGetters) {
  Reader r("t.yaml");
  auto root = r.load_string("i: 42\nneg: -3\nbad: 4x\nf: 1e300\nb: Yes\nreq:\n");
  ASSERT_TRUE(root);
  EXPECT_EQ(r.integer((*root)["i"], "i"), 42);
  EXPECT_EQ(r.integer((*root)["neg"], "neg"), -3);
  EXPECT_FALSE(r.integer((*root)["bad"], "bad"));
  EXPECT_EQ(r.number((*root)["f"], "f"), 1e300);
  EXPECT_EQ(r.boolean((*root)["b"], "b"), true);
  EXPECT_FALSE(r.string((*root)["req"], "req", /*required=*/true, *root));
  EXPECT_FALSE(r.string((*root)["absent"], "absent"));  // absent and optional: no error
  EXPECT_EQ(r.problems().size(), 2u);
}

TEST(Yaml, EmptyAndCommentOnlyFilesAreRefused) {
  for (const char* text : {"", "\n\n", "# nothing here\n", "---\n", "~\n"}) {
    Reader r("e.yaml");
    EXPECT_FALSE(r.load_string(text)) << text;
    EXPECT_NE(first_problem(r).find("empty"), std::string::npos) << text;
  }
}

TEST(Yaml, BinaryFilesAreRefused) {
  Reader r("b.yaml");
  EXPECT_FALSE(r.load_string(std::string("a: 1\nb\0c", 9)));
  EXPECT_EQ(first_problem(r).rfind("b.yaml:2:2: error: file contains a NUL byte", 0), 0u)
      << first_problem(r);
  Reader r2("u.yaml");
  EXPECT_FALSE(r2.load_string("a: \xc3\x28\n"));
  EXPECT_NE(first_problem(r2).find("not valid UTF-8"), std::string::npos);
  Reader r3("ok.yaml");
  EXPECT_TRUE(r3.load_string("a: \xc3\xa9t\xc3\xa9\n"));  // real UTF-8 is fine
}

TEST(Yaml, A50MegabyteFileIsRefusedWithoutReadingIt) {
  const fs::path big = temp_file("big.yaml", std::string(50 * 1024 * 1024, 'a'));
  Reader r(big.string());
  EXPECT_FALSE(r.load_file(big));
  EXPECT_NE(first_problem(r).find("file is too large (50.0 MB; the limit is 1.00 MB)"),
            std::string::npos)
      << first_problem(r);
  fs::remove(big);
}

TEST(Yaml, MissingFilesAndFoldersAreRefused) {
  Reader r("x");
  EXPECT_FALSE(r.load_file("/nonexistent/pgslow.yaml"));
  EXPECT_NE(first_problem(r).find("file not found"), std::string::npos);
  Reader r2("dir");
  EXPECT_FALSE(r2.load_file(fs::temp_directory_path()));
  EXPECT_NE(first_problem(r2).find("not a regular file"), std::string::npos);
}

TEST(Yaml, DeepNestingAndAliasBombsAreRefused) {
  Reader r("deep.yaml");
  EXPECT_FALSE(r.load_string("a: " + std::string(5000, '[') + std::string(5000, ']') + "\n"));
  EXPECT_FALSE(r.ok());
  std::string bomb = "a: &a [1,1,1,1,1,1,1,1,1,1]\n";
  std::string prev = "a";
  for (char c = 'b'; c <= 'j'; ++c) {
    std::string items;
    for (int i = 0; i < 10; ++i) items += (i ? ",*" : "*") + prev;
    bomb += std::string(1, c) + ": &" + c + " [" + items + "]\n";
    prev = std::string(1, c);
  }
  Reader r2("bomb.yaml");
  EXPECT_FALSE(r2.load_string(bomb));
  EXPECT_NE(first_problem(r2).find("too large"), std::string::npos) << first_problem(r2);
}

TEST(Yaml, MoreThanOneDocumentIsAnError) {
  Reader r("two.yaml");
  EXPECT_FALSE(r.load_string("a: 1\n---\nb: 2\n"));
  EXPECT_NE(first_problem(r).find("more than one YAML document"), std::string::npos);
}

TEST(Yaml, PrintableEscapesAndTruncates) {
  EXPECT_EQ(printable("a\nb"), "'a\\nb'");
  EXPECT_EQ(printable(std::string_view("\0", 1)), "'\\x00'");
  EXPECT_EQ(printable(std::string(100, 'x'), 3), "'xxx...'");
}

}  // namespace
}  // namespace pgslow::yaml
