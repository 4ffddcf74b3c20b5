#include "server/server_log.h"

#include <fstream>
#include <sstream>

namespace pgslow::server {

std::uintmax_t log_size(const std::filesystem::path& log) {
  std::error_code ec;
  auto size = std::filesystem::file_size(log, ec);
  return ec ? 0 : size;
}

std::string read_log_since(const std::filesystem::path& log, std::uintmax_t offset) {
  std::ifstream in(log, std::ios::binary);
  if (!in) return "";
  in.seekg(static_cast<std::streamoff>(offset));
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

}  // namespace pgslow::server
