#include "workload/registry.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "workload/dataset.h"

namespace pgslow::workload {
namespace {

TEST(Registry, KnowsTheBuiltInWorkloads) {
  auto names = workload_names();
  for (const char* n : {"tpcc-lite", "tpcb-like", "select-only", "range-aggregate", "script",
                        "insert", "update-spread", "update-hot-row"})
    EXPECT_NE(std::find(names.begin(), names.end(), n), names.end()) << n;
  EXPECT_EQ(find_workload("tpcb-like").name(), "tpcb-like");
}

TEST(Registry, UnknownNameListsTheNamesAndSuggestsTheClosest) {
  try {
    find_workload("tpcb-lik");
    FAIL() << "no error";
  } catch (const InputError& e) {
    std::string msg = e.what();
    EXPECT_NE(msg.find("unknown workload \"tpcb-lik\""), std::string::npos) << msg;
    EXPECT_NE(msg.find("did you mean \"tpcb-like\""), std::string::npos) << msg;
    EXPECT_NE(msg.find("select-only"), std::string::npos) << msg;
  }
}

TEST(Registry, EveryWorkloadDescribesItselfAndValidatesScale) {
  // The script workload runs script files: one for it.
  const auto script = std::filesystem::temp_directory_path() / "pgslow_registry_test.sql";
  std::ofstream(script) << "SELECT 1;\n";
  for (const auto& name : workload_names()) {
    const Workload& w = find_workload(name);
    WorkloadParams ok;
    if (name == "script") ok.options["scripts"] = script.string();
    EXPECT_FALSE(w.description().empty()) << name;
    EXPECT_FALSE(has_errors(w.validate(ok))) << name;
    EXPECT_FALSE(w.transaction_types(ok).empty()) << name;
    EXPECT_FALSE(w.statements(ok).empty()) << name;
    WorkloadParams bad = ok;
    bad.scale = 0;
    auto errors = w.validate(bad);
    ASSERT_TRUE(has_errors(errors)) << name;
    const std::string& msg = errors[0].message;
    EXPECT_TRUE(msg.find("scale") != std::string::npos ||
                msg.find("warehouses") != std::string::npos)
        << name << ": " << msg;
    WorkloadParams a = ok, b = ok;
    b.scale = 2;
    EXPECT_NE(w.data_fingerprint(a), w.data_fingerprint(b)) << name;
    EXPECT_NE(w.make_client(a, 0), nullptr) << name;
  }
}

TEST(Dataset, DatabaseNamesAreSafeIdentifiers) {
  EXPECT_EQ(template_database_name("tpcb-like", 10), "pgslow_tpl_tpcb_like_10");
  EXPECT_EQ(clone_database_name("update-hot-row", 1), "pgslow_update_hot_row_1");
}

}  // namespace
}  // namespace pgslow::workload
