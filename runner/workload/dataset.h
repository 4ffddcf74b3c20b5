#pragma once
// Data reset (ARCHITECTURE.md "Data reset"): a workload is loaded once into a template
// database per (workload, scale), its fingerprint stored as the database's comment; every
// measured run starts on a fresh clone (CREATE DATABASE ... TEMPLATE ... STRATEGY FILE_COPY),
// so dead tuples and bloat from one run never slow the next.
//
// Also the COPY helpers loaders share: CopyWriter (buffered COPY FROM STDIN) and LoadMeter
// (the "rows and MB per second" progress line).

#include <cstdint>
#include <string>
#include <string_view>

#include "common/progress.h"
#include "pg/connection.h"
#include "workload/workload.h"

namespace pgslow::workload {

// Rows and bytes loaded, shown once a second: "load pgbench_accounts  1,200,000 rows  48 MB/s".
// Not thread-safe: one per loading thread, or guard it.
class LoadMeter {
 public:
  LoadMeter(Progress& progress, std::string label);
  void set_label(std::string label) { label_ = std::move(label); }
  void add(std::uint64_t rows, std::uint64_t bytes);
  // The closing line: totals and average rates.
  void finish();
  std::uint64_t rows() const { return rows_; }
  std::uint64_t bytes() const { return bytes_; }

 private:
  std::string line() const;
  Progress& progress_;
  std::string label_;
  std::int64_t start_us_;
  std::int64_t next_update_us_;
  std::uint64_t rows_ = 0;
  std::uint64_t bytes_ = 0;
};

// COPY FROM STDIN in 256 kB chunks. Append one text-format line per row (tab-separated,
// ending in '\n') to buffer(), then call row(). finish() ends the COPY and checks its result.
class CopyWriter {
 public:
  CopyWriter(pg::Connection& conn, const std::string& copy_sql, LoadMeter* meter = nullptr);
  CopyWriter(const CopyWriter&) = delete;
  CopyWriter& operator=(const CopyWriter&) = delete;
  ~CopyWriter();  // an unfinished COPY is aborted (never throws)

  std::string& buffer() { return buf_; }
  void row() {
    ++pending_rows_;
    if (buf_.size() >= kChunk) flush();
  }
  void finish();

 private:
  static constexpr std::size_t kChunk = 256 * 1024;
  void flush();
  pg::Connection& conn_;
  std::string sql_;
  LoadMeter* meter_;
  std::string buf_;
  std::uint64_t pending_rows_ = 0;
  bool open_ = true;
};

// How a stage's data is reset (docs/server.md, "Data reset"). Both are CREATE DATABASE ...
// TEMPLATE ... STRATEGY FILE_COPY: the server flushes the template (a checkpoint), copies its
// files and checkpoints again. kServerClone has PostgreSQL 18 copy each file as a
// copy-on-write clone (file_copy_method = clone), so the copy costs a block map, not the bytes.
enum class ResetMethod {
  kTemplateCopy,
  kServerClone,
};

// What the report's header says: "template copy (FILE_COPY)", "clone (PG18
// file_copy_method=clone)".
std::string reset_method_name(ResetMethod method);

struct ResetResult {
  std::string conninfo;  // the fresh clone
  double seconds = 0;    // drop of the old clone + CREATE DATABASE ... TEMPLATE
  ResetMethod method = ResetMethod::kTemplateCopy;
};

class Dataset {
 public:
  // `server_conninfo`: any database on the server (the template and clone names are
  // substituted); the role needs CREATEDB.
  Dataset(std::string server_conninfo, const Workload& workload, WorkloadParams params);

  const std::string& template_name() const { return template_; }  // pgslow_tpl_<workload>_<scale>
  const std::string& clone_name() const { return clone_; }        // pgslow_<workload>_<scale>
  std::string clone_conninfo() const;

  // True when the template exists and its fingerprint matches the parameters.
  bool template_ready();
  // Loads the template unless a matching one exists (or `force`); true when it loaded.
  bool load(Progress& progress, bool force = false);
  // A fresh clone of the template; drops the previous clone. Throws RuntimeError when the
  // template is missing or stale (run `pgslow load`). Returns once the checkpoints the copy
  // forced are counted in the server's statistics, so none of them lands in a window that
  // starts after it.
  ResetResult reset();
  // kServerClone only on a server of 18 or later whose data directory can clone files (the
  // caller probed it: common/reflink.h); the default is kTemplateCopy.
  void set_reset_method(ResetMethod method) { method_ = method; }
  ResetMethod reset_method() const { return method_; }
  // pg_database_size of the clone (of the template when there is no clone yet).
  std::uint64_t data_bytes();
  // Drops the clone and, with `with_template`, the template.
  void drop(bool with_template);

 private:
  pg::Connection admin();
  std::optional<std::string> stored_fingerprint(pg::Connection& conn);
  void disconnect_others(pg::Connection& conn, const std::string& db);
  void drop_database(pg::Connection& conn, const std::string& db);

  std::string conninfo_;
  const Workload& workload_;
  WorkloadParams params_;
  std::string fingerprint_;
  std::string template_;
  std::string clone_;
  ResetMethod method_ = ResetMethod::kTemplateCopy;
};

// The database names a (workload, scale) uses: lower case, '-' as '_'.
std::string template_database_name(std::string_view workload, int scale);
std::string clone_database_name(std::string_view workload, int scale);

}  // namespace pgslow::workload
