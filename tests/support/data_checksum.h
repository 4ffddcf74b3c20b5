#pragma once
// Whether two databases hold the same data, as stored: every user table's rows hashed in their
// physical order (ctid). A copy of the files (FILE_COPY, a clone) keeps each tuple where it was,
// so the template and its copy hash alike; a dump and reload would not.

#include <map>
#include <string>

namespace pgslow::testing {

// Table name ("public.item") -> md5 of its rows in ctid order.
std::map<std::string, std::string> table_checksums(const std::string& conninfo);

}  // namespace pgslow::testing
