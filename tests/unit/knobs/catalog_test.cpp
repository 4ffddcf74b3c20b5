// The catalog and preset loader, and the committed catalog itself (knobs/*.yaml).

#include "knobs/catalog.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <set>

#include "common/paths.h"
#include "knobs/docs.h"
#include "knobs/evidence_keys.h"

namespace pgslow::knobs {
namespace {

namespace fs = std::filesystem;

const char* kGoodKnob = R"(category: cache
description: Caches.
knobs:
  - name: shared_buffers
    since: 9
    healthy: 128MB
    slow: [8MB, 2MB]
    why: The cache.
    watch: [buffer_hit_ratio, read_syscalls]
    carryover: 60s
    pitfalls: ["128kB: fails"]
    refs: https://www.postgresql.org/docs/current/runtime-config-resource.html
    min_by_version: {15: 1MB, 17: 64kB}
)";

std::string joined(const std::vector<ConfigError>& problems) {
  std::string out;
  for (const auto& p : problems) out += p.str() + "\n";
  return out;
}

fs::path make_dir(const std::string& name, const std::map<std::string, std::string>& files) {
  const fs::path dir =
      fs::temp_directory_path() / ("pgslow-catalog-test-" + std::to_string(::getpid())) / name;
  fs::remove_all(dir);
  fs::create_directories(dir);
  for (const auto& [file, text] : files) std::ofstream(dir / file) << text;
  return dir;
}

TEST(Catalog, ParsesAKnobWithLocations) {
  std::vector<ConfigError> problems;
  CategoryInfo info;
  auto knobs = parse_category(kGoodKnob, "cache.yaml", problems, &info);
  ASSERT_TRUE(problems.empty()) << joined(problems);
  ASSERT_EQ(knobs.size(), 1u);
  const Knob& k = knobs[0];
  EXPECT_EQ(k.name, "shared_buffers");
  EXPECT_EQ(k.category, "cache");
  EXPECT_EQ(k.slow, (std::vector<std::string>{"8MB", "2MB"}));
  EXPECT_EQ(k.min_by_version.at(17), "64kB");
  EXPECT_EQ(k.where.line, 4);
  EXPECT_EQ(k.where.column, 5);
  EXPECT_EQ(info.description, "Caches.");
  EXPECT_DOUBLE_EQ(k.carryover_s, 60);
  EXPECT_FALSE(k.carryover_per_connection);
}

// `moves:`: the axes a knob is known to move, its own or else its category's; an entry that is
// not an axis is an error at its line, with the nearest axis.
TEST(Catalog, MovesComesFromTheKnobOrItsCategory) {
  std::string text = kGoodKnob;
  text.replace(text.find("knobs:"), 6, "moves: [blocks_read, read_syscalls]\nknobs:");
  text += R"(  - name: bgwriter_delay
    since: 9
    healthy: 200ms
    slow: [10s]
    why: The writer.
    watch: [buffers_backend]
    moves: [p99]
    carryover: 0s
    refs: https://www.postgresql.org/docs/current/runtime-config-resource.html
)";
  std::vector<ConfigError> problems;
  CategoryInfo info;
  auto knobs = parse_category(text, "cache.yaml", problems, &info);
  ASSERT_TRUE(problems.empty()) << joined(problems);
  ASSERT_EQ(knobs.size(), 2u);
  EXPECT_EQ(knobs[0].moves, (std::vector<std::string>{"blocks_read", "read_syscalls"}));
  EXPECT_EQ(knobs[1].moves, std::vector<std::string>{"p99"});

  std::string wrong = kGoodKnob;
  wrong.replace(wrong.find("knobs:"), 6, "moves: [blocks_red]\nknobs:");
  problems.clear();
  parse_category(wrong, "cache.yaml", problems, &info);
  EXPECT_NE(joined(problems).find(
                "cache.yaml:3:9: error: 'blocks_red' is not an axis (did you mean 'blocks_read'?)"),
            std::string::npos)
      << joined(problems);
}

TEST(Catalog, CarryoverIsADurationOrConnection) {
  std::vector<ConfigError> problems;
  auto knobs = parse_category(R"(category: x
knobs:
  - name: random_page_cost
    since: 9
    healthy: "4"
    slow: ["1e300"]
    why: w
    watch: [seq_scans]
    carryover: connection
    refs: https://www.postgresql.org/docs/current/runtime-config-query.html
  - name: work_mem
    since: 9
    healthy: 4MB
    slow: [64kB]
    why: w
    watch: [temp_files]
    carryover: soon
    refs: https://www.postgresql.org/docs/current/runtime-config-resource.html
)",
                              "x.yaml", problems);
  ASSERT_EQ(knobs.size(), 1u) << joined(problems);
  EXPECT_TRUE(knobs[0].carryover_per_connection);
  EXPECT_NE(joined(problems).find("x.yaml:17:16: error: carryover = 'soon' is neither a duration"),
            std::string::npos)
      << joined(problems);
}

TEST(Catalog, ReportsEveryProblemOfAKnob) {
  std::vector<ConfigError> problems;
  auto knobs = parse_category(R"(category: x
knobs:
  - name: Bad-Name
    sicne: 9
    healthy: 1
    slow: {a: b}
    why: w
    watch: [buffer_hit_ration]
    refs: docs
)",
                              "x.yaml", problems);
  EXPECT_TRUE(knobs.empty());
  const std::string all = joined(problems);
  EXPECT_NE(all.find("x.yaml:4:5: error: unknown field 'sicne' in a knob (did you mean 'since'?)"),
            std::string::npos)
      << all;
  EXPECT_NE(all.find("'since' is required"), std::string::npos) << all;
  EXPECT_NE(all.find("is not a parameter name"), std::string::npos) << all;
  EXPECT_NE(all.find("'slow' must be a list"), std::string::npos) << all;
  EXPECT_NE(all.find("x.yaml:8:13: error: 'buffer_hit_ration' is not an evidence key (did you "
                     "mean 'buffer_hit_ratio'?)"),
            std::string::npos)
      << all;
  EXPECT_NE(all.find("'refs' must be a link"), std::string::npos) << all;
}

TEST(Catalog, LoadsADirectoryExpandsPresetsAndRejectsCycles) {
  const fs::path dir = make_dir("good", {{"cache.yaml", kGoodKnob}, {"presets.yaml", R"(presets:
  - name: base
    description: d
    settings: {shared_buffers: 8MB}
  - name: worse
    description: d
    includes: [base]
    settings:
      shared_buffers: 2MB
)"}});
  Catalog c = Catalog::load(dir);
  ASSERT_NE(c.find("shared_buffers"), nullptr);
  ASSERT_NE(c.find_preset("worse"), nullptr);
  auto s = c.expand(*c.find_preset("worse"));
  ASSERT_EQ(s.size(), 1u);
  EXPECT_EQ(s[0].value, "2MB");  // later wins
  EXPECT_EQ(s[0].where.line, 9);
  EXPECT_EQ(c.categories(), std::vector<std::string>{"cache"});

  const fs::path bad = make_dir("cycle", {{"cache.yaml", kGoodKnob}, {"presets.yaml", R"(presets:
  - name: a
    description: d
    includes: [b]
  - name: b
    description: d
    includes: [a]
  - name: c
    description: d
    settings: {sahred_buffers: 1MB}
)"}});
  try {
    Catalog::load(bad);
    FAIL() << "expected an InputError";
  } catch (const InputError& e) {
    const std::string all = joined(e.problems());
    EXPECT_NE(all.find("cycle: a -> b -> a"), std::string::npos) << all;
    EXPECT_NE(all.find("presets.yaml:10:16: error: preset 'c' sets 'sahred_buffers', which is not "
                       "in the catalog (did you mean 'shared_buffers'?)"),
              std::string::npos)
        << all;
  }
}

TEST(Catalog, DuplicateKnobsAcrossFilesAreErrors) {
  const fs::path dir = make_dir("dup", {{"cache.yaml", kGoodKnob}, {"memory.yaml", kGoodKnob}});
  EXPECT_THROW(Catalog::load(dir), InputError);
}

TEST(Catalog, SettingsFilesPlainOrPreset) {
  std::vector<ConfigError> problems;
  auto plain = parse_settings("shared_buffers: 8MB\nlog_destination: [stderr, jsonlog]\n", "p.yaml",
                              problems);
  ASSERT_TRUE(problems.empty()) << joined(problems);
  ASSERT_EQ(plain.settings.size(), 2u);
  EXPECT_EQ(plain.settings[1].value, "stderr,jsonlog");
  EXPECT_EQ(plain.settings[1].where.line, 2);
  auto preset = parse_settings("name: mine\ndescription: d\nsettings:\n  work_mem: 64kB\n",
                               "m.yaml", problems);
  ASSERT_TRUE(problems.empty()) << joined(problems);
  EXPECT_EQ(preset.name, "mine");
  ASSERT_EQ(preset.settings.size(), 1u);
  EXPECT_EQ(preset.settings[0].where.line, 4);

  for (const char* bad : {"[1, 2]\n", "settings: [1]\n", "work_mem:\n", "work_mem: {a: 1}\n",
                          "settings: {}\nextra: 1\n", "'work mem': 1\n", "work_mem: \"1\\n2\"\n"}) {
    std::vector<ConfigError> p;
    parse_settings(bad, "b.yaml", p);
    EXPECT_TRUE(has_errors(p)) << bad;
    for (const auto& e : p) EXPECT_GT(e.where.line, 0) << bad << ": " << e.str();
  }
}

// ---- the committed catalog -----------------------------------------------------------------

const Catalog& real_catalog() {
  static const Catalog c = Catalog::load(fs::path(PGSLOW_SOURCE_DIR) / "knobs");
  return c;
}

TEST(RealCatalog, LoadsWithoutProblemsAndCoversTheIssue) {
  const Catalog& c = real_catalog();
  EXPECT_GE(c.knobs().size(), 45u);
  for (const char* cat : {"cache", "autovacuum", "wal", "checkpoint", "planner", "io", "logging",
                          "locking", "connections"}) {
    const auto cats = c.categories();
    EXPECT_NE(std::find(cats.begin(), cats.end(), cat), cats.end()) << cat;
  }
  // The 32 settings of the published run (docs: SLOW_POSTGRES.md).
  for (const char* name : {"shared_buffers",
                           "autovacuum_vacuum_insert_threshold",
                           "autovacuum_vacuum_threshold",
                           "autovacuum_vacuum_scale_factor",
                           "autovacuum_vacuum_max_threshold",
                           "autovacuum_naptime",
                           "vacuum_cost_limit",
                           "vacuum_cost_page_dirty",
                           "vacuum_cost_page_hit",
                           "vacuum_cost_page_miss",
                           "autovacuum_analyze_threshold",
                           "autovacuum_analyze_scale_factor",
                           "maintenance_work_mem",
                           "log_autovacuum_min_duration",
                           "logging_collector",
                           "log_destination",
                           "wal_writer_flush_after",
                           "wal_writer_delay",
                           "min_wal_size",
                           "max_wal_size",
                           "checkpoint_timeout",
                           "checkpoint_flush_after",
                           "wal_sync_method",
                           "wal_level",
                           "wal_log_hints",
                           "summarize_wal",
                           "track_wal_io_timing",
                           "checkpoint_completion_target",
                           "random_page_cost",
                           "cpu_index_tuple_cost",
                           "io_method",
                           "io_workers"}) {
    EXPECT_NE(c.find(name), nullptr) << name;
  }
  EXPECT_EQ(c.find("summarize_wal")->since, 17);
  EXPECT_EQ(c.find("io_method")->since, 18);
  EXPECT_EQ(c.find("autovacuum_vacuum_max_threshold")->since, 18);
  for (const char* preset :
       {"tiny-cache", "vacuum-storm", "wal-hell", "checkpoint-storm", "planner-sabotage",
        "memory-starved", "logging-flood", "io-starved", "connection-starved", "the-42000x"}) {
    EXPECT_NE(c.find_preset(preset), nullptr) << preset;
  }
  for (const auto& k : c.knobs()) {
    EXPECT_FALSE(k.why.empty()) << k.name;
    EXPECT_FALSE(k.watch.empty()) << k.name;
    for (const auto& w : k.watch) EXPECT_TRUE(is_evidence_key(w)) << k.name << ": " << w;
  }
}

// One evidence catalog for the engine and the views: every key once, each with a label and a
// family, and an unknown key (a newer runner's) still shown under its own name.
TEST(EvidenceCatalog, EveryKeyOnceWithWhatTheViewsNeed) {
  std::set<std::string_view> seen;
  for (const EvidenceInfo& e : evidence_catalog()) {
    EXPECT_TRUE(seen.insert(e.key).second) << e.key << " is listed twice";
    EXPECT_FALSE(e.label.empty()) << e.key;
    EXPECT_FALSE(e.family.empty()) << e.key;
    EXPECT_TRUE(is_evidence_key(e.key)) << e.key;
    EXPECT_EQ(evidence_info(e.key).label, e.label) << e.key;
  }
  EXPECT_EQ(evidence_key_names().size(), evidence_catalog().size());
  EXPECT_FALSE(is_evidence_key("wal_fpis"));
  EXPECT_EQ(evidence_info("wal_fpis").label, "wal_fpis");
  EXPECT_EQ(evidence_info("wal_fpis").scale, EvidenceScale::kPerTransaction);
  EXPECT_EQ(ordered_keys({{"zzz", 1}, {"wal_fpi", 2}, {"buffer_hit_ratio", 3}}),
            (std::vector<std::string>{"buffer_hit_ratio", "wal_fpi", "zzz"}));
}

TEST(RealCatalog, DocsKnobsMdIsNotStale) {
  const fs::path committed = fs::path(PGSLOW_SOURCE_DIR) / "docs" / "knobs.md";
  ASSERT_TRUE(fs::exists(committed)) << "run: pgslow knobs docs -o docs/knobs.md";
  EXPECT_TRUE(read_file(committed) == render_markdown(real_catalog()))
      << "docs/knobs.md is stale; regenerate it with: pgslow knobs docs -o docs/knobs.md";
}

}  // namespace
}  // namespace pgslow::knobs
