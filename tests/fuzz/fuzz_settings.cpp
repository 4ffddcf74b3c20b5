// libFuzzer target for the YAML-to-settings path (tests/fuzz/settings_entry.h).
// Built and run for a bounded time by the ctest entry fuzz_settings_smoke (needs clang).

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "tests/fuzz/settings_entry.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  pgslow::testing::run_settings_input(std::string_view(reinterpret_cast<const char*>(data), size));
  return 0;
}
