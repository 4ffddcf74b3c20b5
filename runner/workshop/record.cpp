#include "workshop/record.h"

#include <fcntl.h>
#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "common/errors.h"
#include "common/paths.h"
#include "common/safe_fs.h"
#include "report/registry.h"

namespace pgslow::workshop {

namespace fs = std::filesystem;

report::SessionRecord add_to_record(const fs::path& dir,
                                    const std::function<void(report::SessionRecord&)>& add) {
  const fs::path file = dir / "record.json";
  // Read back and written again by root, command after command: a folder of pgslow's own, that
  // nobody else (the server's user above all) can write, as the workdir is; the file itself is
  // opened without following a symlink and must be root's or the invoking user's.
  require_trusted_path(dir, "the --record folder",
                       "choose a --record folder that only you (or root) can write");
  create_trusted_folders(dir, "the --record folder");
  report::SessionRecord record;
  const UniqueFd fd(open_trusted_file(file, O_RDONLY | O_CLOEXEC));
  if (fd.get() >= 0) {
    const std::string text = read_all(fd.get(), file);
    try {
      record = report::record_from_json(nlohmann::ordered_json::parse(text), file.string());
    } catch (const std::exception& e) {
      throw InputError(fmt::format(
          "{}: not a session record pgslow can add to ({}); choose another --record folder",
          file.string(), e.what()));
    }
  }
  add(record);
  report::write_record(record, dir);
  return record;
}

}  // namespace pgslow::workshop
