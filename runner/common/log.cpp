#include "common/log.h"

#include <spdlog/pattern_formatter.h>
#include <spdlog/sinks/stdout_color_sinks.h>
#include <unistd.h>

#include <cstdlib>
#include <memory>

#include "common/text_width.h"

namespace pgslow {

namespace {

// The message of an info line wrapped to the output's width after its "info: " ("%*" in the
// pattern). Warnings and errors stay whole: scripts and tests match their phrases.
class WrappedInfo final : public spdlog::custom_flag_formatter {
 public:
  void format(const spdlog::details::log_msg& msg, const std::tm&,
              spdlog::memory_buf_t& dest) override {
    std::string text(msg.payload.data(), msg.payload.size());
    if (msg.level == spdlog::level::info) {
      constexpr std::size_t kPrefix = 6;  // "info: "
      const std::size_t columns = output_columns(STDERR_FILENO);
      text = wrapped(text, columns > kPrefix ? columns - kPrefix : columns, "  ");
    }
    dest.append(text.data(), text.data() + text.size());
  }
  std::unique_ptr<custom_flag_formatter> clone() const override {
    return std::make_unique<WrappedInfo>();
  }
};

}  // namespace

bool no_color() {
  const char* value = std::getenv("NO_COLOR");
  return value != nullptr && *value != '\0';
}

void init_logging(Verbosity verbosity) {
  // spdlog colors the level on a color terminal; NO_COLOR (https://no-color.org) turns it off.
  auto logger = spdlog::stderr_color_mt(
      "pgslow", no_color() ? spdlog::color_mode::never : spdlog::color_mode::automatic);
  auto formatter = std::make_unique<spdlog::pattern_formatter>();
  formatter->add_flag<WrappedInfo>('*').set_pattern("%^%l%$: %*");
  logger->set_formatter(std::move(formatter));
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
