#include "pg/data_dir.h"

#include <spdlog/spdlog.h>

#include <cstdlib>
#include <vector>

#include "common/errors.h"
#include "common/safe_fs.h"
#include "common/strings.h"

namespace pgslow::pg {

std::optional<PostmasterPidFile> read_postmaster_pid(const std::filesystem::path& data_dir) {
  std::optional<std::string> text;
  try {
    UniqueFd data = open_folder(data_dir);
    text = read_file_in(data.get(), "postmaster.pid", data_dir / "postmaster.pid", kMaxServerFile);
  } catch (const RuntimeError& e) {
    spdlog::debug("{}", e.what());
  }
  if (!text) return std::nullopt;
  const std::vector<std::string> lines = split(*text, '\n');
  auto line = [&](std::size_t i) { return i < lines.size() ? trim(lines[i]) : std::string(); };
  PostmasterPidFile f;
  f.pid = std::atoi(line(0).c_str());
  f.start_epoch = std::atoll(line(2).c_str());
  f.port = line(3);
  f.socket_dir = line(4);
  return f;
}

}  // namespace pgslow::pg
