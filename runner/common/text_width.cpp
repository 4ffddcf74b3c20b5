#include "common/text_width.h"

#include <sys/ioctl.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>

namespace pgslow {

std::size_t display_width(const std::string& s) {
  std::size_t n = 0;
  for (unsigned char c : s) {
    if ((c & 0xC0) != 0x80) ++n;  // count lead bytes, not continuation bytes
  }
  return n;
}

std::string cut_to_width(const std::string& s, std::size_t width) {
  if (display_width(s) <= width) return s;
  if (width == 0) return "";
  std::string out;
  std::size_t columns = 0;
  for (std::size_t i = 0; i < s.size(); ++i) {
    const auto c = static_cast<unsigned char>(s[i]);
    if ((c & 0xC0) != 0x80) {
      if (columns + 1 == width) break;  // room for the ellipsis alone
      ++columns;
    }
    out += s[i];
  }
  while (!out.empty() && out.back() == ' ') out.pop_back();
  return out + "…";
}

std::vector<std::string> wrap_text(const std::string& text, std::size_t width,
                                   const std::string& hanging) {
  std::vector<std::string> lines;
  std::string line;
  std::size_t start = 0;
  while (start < text.size()) {
    std::size_t end = text.find(' ', start);
    if (end == std::string::npos) end = text.size();
    const std::string word = text.substr(start, end - start);
    start = end + 1;
    if (word.empty()) continue;
    if (!line.empty() && display_width(line) + 1 + display_width(word) <= width) {
      line += " " + word;
      continue;
    }
    if (!line.empty()) lines.push_back(line);
    line = cut_to_width((lines.empty() ? "" : hanging) + word, width);
  }
  if (!line.empty()) lines.push_back(line);
  return lines;
}

std::size_t output_columns() {
  constexpr std::size_t kDefault = 100;
  constexpr std::size_t kNarrowest = 40;
  if (const char* env = std::getenv("COLUMNS"); env != nullptr && *env != '\0') {
    char* end = nullptr;
    const unsigned long n = std::strtoul(env, &end, 10);
    if (end != env && *end == '\0' && n > 0) return std::max<std::size_t>(n, kNarrowest);
  }
  winsize ws{};
  if (::isatty(STDOUT_FILENO) != 0 && ::ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0)
    return std::max<std::size_t>(ws.ws_col, kNarrowest);
  return kDefault;
}

}  // namespace pgslow
