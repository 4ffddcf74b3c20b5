#pragma once
// The YAML-to-settings path in one function, shared by the libFuzzer target
// (fuzz_settings.cpp) and the unit test that replays tests/fuzz/corpus on every build.
// It must never crash, hang or let an unsafe value through, whatever the bytes.

#include <cstdlib>
#include <string_view>
#include <vector>

#include "knobs/catalog.h"
#include "knobs/validate.h"
#include "knobs/value.h"
#include "tests/fuzz/pg15_settings.h"

namespace pgslow::testing {

inline void run_settings_input(std::string_view text) {
  static const knobs::ServerSettings server = pg15_settings();
  static const knobs::Catalog catalog = small_catalog();
  std::vector<ConfigError> problems;
  const knobs::SettingsFile file = knobs::parse_settings(text, "fuzz.yaml", problems);
  if (!has_errors(problems)) {
    for (const auto& v : knobs::validate(file.settings, catalog, server)) {
      const bool accepted =
          v.verdict == knobs::Verdict::kReload || v.verdict == knobs::Verdict::kRestart;
      // Nothing with a control character may ever be accepted for ALTER SYSTEM.
      if (accepted && knobs::unsafe_value_problem(v.setting.value)) std::abort();
      if (accepted) {
        const knobs::ServerSetting* now = server.find(v.setting.name);
        if (now == nullptr) std::abort();
        knobs::ServerSetting applied = *now;
        applied.setting = v.expected_setting;
        // What validation expects must read back as a match once applied.
        if (!knobs::effective_value_matches(applied, v)) std::abort();
      }
      for (const auto& p : v.problems) (void)p.str();
    }
  }
  (void)knobs::parse_category(text, "fuzz.yaml", problems);
  (void)knobs::parse_presets(text, "fuzz.yaml", problems);
  for (const auto& p : problems) (void)p.str();
}

}  // namespace pgslow::testing
