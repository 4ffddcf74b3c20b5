// The scenario library: a path that is not there is named as a missing file, and the list
// `pgslow scenarios` prints is made without a server.

#include "scenario/library.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>

#include "common/errors.h"
#include "knobs/catalog.h"

namespace pgslow::scenario {
namespace {

std::string error_of(const std::string& arg) {
  try {
    resolve_scenario(arg);
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

TEST(Library, AMissingPathIsNamedAsAMissingFile) {
  EXPECT_EQ(error_of("nothere.yaml").rfind("no such file: nothere.yaml", 0), 0u)
      << error_of("nothere.yaml");
  EXPECT_EQ(error_of("gone/here.yml").rfind("no such file: gone/here.yml", 0), 0u)
      << error_of("gone/here.yml");
  // A name of the library as a .yaml file name still finds it; a bare name is not a file.
  EXPECT_NO_THROW(resolve_scenario("quick.yaml"));
  EXPECT_NE(error_of("quik").find("did you mean 'quick'"), std::string::npos);
  EXPECT_EQ(error_of("quik").find("no such file"), std::string::npos);
}

TEST(Library, EveryScenarioIsListedWithItsTimeAndNeeds) {
  const knobs::Catalog catalog = knobs::Catalog::load_default();
  const std::vector<LibraryScenario> all = library_scenarios(catalog);
  auto find = [&](const std::string& name) {
    auto it = std::find_if(all.begin(), all.end(), [&](const auto& s) { return s.name == name; });
    EXPECT_NE(it, all.end()) << name;
    return it == all.end() ? LibraryScenario{} : *it;
  };
  for (const LibraryScenario& s : all) {
    EXPECT_EQ(s.problem, "") << s.name;
    EXPECT_FALSE(s.description.empty()) << s.name;
    EXPECT_GT(s.estimated_seconds, 0) << s.name;
  }
  // quick: about 238 s on a server (`pgslow plan quick`), its switchback included.
  EXPECT_GT(find("quick").estimated_seconds, 150);
  EXPECT_LT(find("quick").estimated_seconds, 300);
  auto needs = [&](const std::string& name, const std::string& what) {
    const auto n = find(name).needs;
    return std::any_of(n.begin(), n.end(), [&](const auto& x) { return x.starts_with(what); });
  };
  EXPECT_TRUE(needs("pooler-knobs", "PgBouncer"));
  EXPECT_TRUE(needs("pool-too-small", "PgBouncer"));
  EXPECT_TRUE(needs("tiny-cache-envelope", "root"));
  EXPECT_TRUE(needs("replay-42000x", "PG 18+"));
  EXPECT_TRUE(find("tiny-cache").needs.empty());
}

}  // namespace
}  // namespace pgslow::scenario
