#include "common/progress.h"

#include <unistd.h>

#include <cstdio>

namespace pgslow {

namespace {
bool stderr_is_terminal() {
  static const bool is_tty = isatty(STDERR_FILENO) != 0;
  return is_tty;
}
}  // namespace

void ConsoleProgress::update(const std::string& line) {
  if (stderr_is_terminal()) {
    std::fprintf(stderr, "\r\033[K%s", line.c_str());
  } else {
    std::fprintf(stderr, "%s\n", line.c_str());
  }
  std::fflush(stderr);
}

void ConsoleProgress::note(const std::string& line) {
  if (stderr_is_terminal()) std::fprintf(stderr, "\r\033[K");
  std::fprintf(stderr, "%s\n", line.c_str());
  std::fflush(stderr);
}

}  // namespace pgslow
