// `pgslow cliff`'s checks before anything changes (experiment::cliff_space), against a live
// server's pg_settings rows written out here: the values' range and unit, the knob's type, and the
// server's current value as the default baseline.

#include <gtest/gtest.h>

#include "common/errors.h"
#include "experiment/cliff_experiment.h"
#include "knobs/catalog.h"

namespace pgslow::experiment {
namespace {

knobs::ServerSettings server() {
  knobs::ServerSettings s;
  s.version_num = 170002;
  s.major = 17;
  knobs::ServerSetting wm;
  wm.name = "work_mem";
  wm.setting = "4096";
  wm.unit = "kB";
  wm.vartype = "integer";
  wm.context = "user";
  wm.min_val = "64";
  wm.max_val = "2147483647";
  wm.boot_val = wm.reset_val = "4096";
  s.by_name["work_mem"] = wm;
  knobs::ServerSetting wl;
  wl.name = "wal_level";
  wl.setting = "replica";
  wl.vartype = "enum";
  wl.context = "postmaster";
  wl.enumvals = {"minimal", "replica", "logical"};
  s.by_name["wal_level"] = wl;
  return s;
}

std::string error_of(const CliffExperimentOptions& o) {
  try {
    cliff_space(o, knobs::Catalog::load_default(), server());
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

TEST(CliffSpace, ReadsBothValuesInTheKnobsUnit) {
  CliffExperimentOptions o;
  o.knob = "work_mem";
  o.from = "64MB";
  o.to = "64kB";
  const search::CliffSpace s = cliff_space(o, knobs::Catalog::load_default(), server());
  EXPECT_EQ(s.from, 65536);
  EXPECT_EQ(s.to, 64);
  EXPECT_TRUE(s.integer);
  EXPECT_EQ(search::cliff_value_text(s, 2048), "2MB");
}

// `cliff work_mem --set work_mem=1MB`: every point sets work_mem, so the fixed value would be
// dropped without a word; it is refused, pointing at --from.
TEST(CliffSpace, AFixedSettingOfTheSearchedKnobIsRefused) {
  CliffExperimentOptions o;
  o.knob = "work_mem";
  o.from = "64MB";
  o.to = "64kB";
  o.settings = {{"work_mem", "1MB", {}}};
  const std::string e = error_of(o);
  EXPECT_NE(e.find("work_mem=1MB"), std::string::npos) << e;
  EXPECT_NE(e.find("--from 1MB"), std::string::npos) << e;
  // Another knob fixed is fine.
  o.settings = {{"shared_buffers", "16MB", {}}};
  EXPECT_EQ(error_of(o), "");
}

TEST(CliffSpace, NoFromIsTheServersCurrentValue) {
  CliffExperimentOptions o;
  o.knob = "work_mem";
  o.to = "64kB";
  const search::CliffSpace s = cliff_space(o, knobs::Catalog::load_default(), server());
  EXPECT_EQ(s.from, 4096);
}

TEST(CliffSpace, AValueOutOfRangeNamesTheOptionAndTheRange) {
  CliffExperimentOptions o;
  o.knob = "work_mem";
  o.from = "64MB";
  o.to = "8kB";
  const std::string e = error_of(o);
  EXPECT_NE(e.find("--to"), std::string::npos) << e;
  EXPECT_NE(e.find("below this server's minimum 64kB"), std::string::npos) << e;
  o.to = "64kB";
  o.from = "64 parsecs";
  EXPECT_NE(error_of(o).find("--from"), std::string::npos) << error_of(o);
}

TEST(CliffSpace, ANonNumericOrUnknownKnobIsRefused) {
  CliffExperimentOptions o;
  o.knob = "wal_level";
  o.from = "replica";
  o.to = "minimal";
  EXPECT_NE(error_of(o).find("steps through numbers"), std::string::npos) << error_of(o);
  o.knob = "work_mme";
  EXPECT_NE(error_of(o).find("has no parameter 'work_mme'"), std::string::npos) << error_of(o);
  o.knob = "work_mem";
  o.from = "4MB";
  o.to = "4096kB";
  EXPECT_NE(error_of(o).find("the same value"), std::string::npos) << error_of(o);
}

}  // namespace
}  // namespace pgslow::experiment
