#include "common/log.h"

#include <spdlog/sinks/stdout_color_sinks.h>

#include <cstdlib>

namespace pgslow {

bool no_color() {
  const char* value = std::getenv("NO_COLOR");
  return value != nullptr && *value != '\0';
}

void init_logging(Verbosity verbosity) {
  // spdlog colors the level on a color terminal; NO_COLOR (https://no-color.org) turns it off.
  auto logger = spdlog::stderr_color_mt(
      "pgslow", no_color() ? spdlog::color_mode::never : spdlog::color_mode::automatic);
  logger->set_pattern("%^%l%$: %v");
  switch (verbosity) {
    case Verbosity::kQuiet:
      logger->set_level(spdlog::level::warn);
      break;
    case Verbosity::kNormal:
      logger->set_level(spdlog::level::info);
      break;
    case Verbosity::kVerbose:
      logger->set_level(spdlog::level::debug);
      break;
  }
  spdlog::set_default_logger(logger);
}

}  // namespace pgslow
