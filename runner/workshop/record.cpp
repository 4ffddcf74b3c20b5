#include "workshop/record.h"

#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "common/errors.h"
#include "common/paths.h"
#include "report/registry.h"

namespace pgslow::workshop {

namespace fs = std::filesystem;

report::SessionRecord add_to_record(const fs::path& dir,
                                    const std::function<void(report::SessionRecord&)>& add) {
  const fs::path file = dir / "record.json";
  report::SessionRecord record;
  std::error_code ec;
  if (fs::exists(file, ec)) {
    try {
      record =
          report::record_from_json(nlohmann::ordered_json::parse(read_file(file)), file.string());
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
