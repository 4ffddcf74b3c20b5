#pragma once
// The TPC-C schema (clause 1.3): the nine tables, then their keys and indexes. Keys are built
// after COPY, which is several times faster than maintaining the indexes row by row.

#include <string>
#include <vector>

namespace pgslow::workload::tpcc {

// CREATE TABLE statements, without keys.
std::vector<std::string> table_ddls();
// One statement per table (primary key and secondary indexes of that table together), so
// the loader can build different tables' indexes on different connections at once.
std::vector<std::string> index_ddls();

}  // namespace pgslow::workload::tpcc
