#include "tests/support/data_checksum.h"

#include <fmt/format.h>

#include "pg/connection.h"

namespace pgslow::testing {

std::map<std::string, std::string> table_checksums(const std::string& conninfo) {
  pg::Connection c = pg::Connection::open(conninfo);
  pg::Result tables =
      c.exec("SELECT format('%I.%I', schemaname, relname) FROM pg_stat_user_tables ORDER BY 1");
  std::map<std::string, std::string> out;
  for (int i = 0; i < tables.rows(); ++i) {
    const std::string t(tables.get(i, 0));
    out[t] = c.query_value(fmt::format("SELECT md5(coalesce(string_agg(x::text, E'\\n' ORDER BY "
                                       "ctid), '')) FROM {} x",
                                       t))
                 .value_or("");
  }
  return out;
}

}  // namespace pgslow::testing
