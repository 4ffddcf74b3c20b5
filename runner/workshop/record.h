#pragma once
// The instructor's record (`--record DIR`, docs/workshop.md): every lesson and mystery of a
// session added to DIR/record.json, and DIR/record.md written anew from it, so the record can be
// handed out after the session and compared with the next room's.

#include <filesystem>
#include <functional>

#include "report/workshop.h"

namespace pgslow::workshop {

// Reads DIR/record.json (an empty record when there is none), lets `add` extend it, writes
// record.json and record.md back. A record.json pgslow cannot read is an InputError naming it;
// a DIR another user could write (safe_fs.h: require_trusted_path) is refused, naming its owner.
report::SessionRecord add_to_record(const std::filesystem::path& dir,
                                    const std::function<void(report::SessionRecord&)>& add);

}  // namespace pgslow::workshop
