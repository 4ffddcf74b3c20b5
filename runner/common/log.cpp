#include "common/log.h"

#include <spdlog/sinks/stdout_color_sinks.h>

namespace pgslow {

void init_logging(Verbosity verbosity) {
  auto logger = spdlog::stderr_color_mt("pgslow");
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
