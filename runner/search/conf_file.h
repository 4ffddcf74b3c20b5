#pragma once
// postgresql.conf-style files as PostgreSQL reads them (src/backend/utils/misc/guc-file.l):
// `name = value` lines (the `=` is optional), `#` comments, single-quoted values with ''
// and backslash escapes, unquoted values with units (8MB, 1e300, 30s), and the include,
// include_if_exists and include_dir directives, resolved relative to the including file.
// A later setting of the same parameter wins. Every problem is reported with file:line.

#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "common/errors.h"
#include "knobs/catalog.h"

namespace pgslow::search {

// The settings of `path` and everything it includes, one per parameter (the last one written
// wins and keeps its location), in the order of those last occurrences. Throws InputError
// carrying every problem (syntax, missing include, include cycle, binary file).
std::vector<knobs::Setting> load_conf_file(const std::filesystem::path& path);

// Same for text; includes are resolved relative to `dir`. Problems are appended, not thrown.
std::vector<knobs::Setting> parse_conf(std::string_view text, const std::string& file,
                                       const std::filesystem::path& dir,
                                       std::vector<ConfigError>& problems);

// Whether a file looks like postgresql.conf rather than YAML (by name: *.conf, or no
// extension but `name = value` lines). Used to pick the reader for --good/--bad.
bool looks_like_conf_file(const std::filesystem::path& path);

}  // namespace pgslow::search
