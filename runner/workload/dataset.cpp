#include "workload/dataset.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <thread>

#include "common/clock.h"
#include "common/format.h"
#include "common/strings.h"

namespace pgslow::workload {

namespace {
constexpr std::string_view kCommentPrefix = "pgslow template: ";

std::string db_word(std::string_view workload) {
  std::string out;
  for (char c : to_lower(workload)) out += (c == '-' || c == ' ') ? '_' : c;
  return out;
}
// The requested checkpoints the server has counted (pg_stat_checkpointer from 17, before it
// pg_stat_bgwriter).
std::int64_t requested_checkpoints(pg::Connection& conn) {
  auto v =
      conn.query_value(conn.major_version() >= 17 ? "SELECT num_requested FROM pg_stat_checkpointer"
                                                  : "SELECT checkpoints_req FROM pg_stat_bgwriter");
  return v ? std::stoll(*v) : 0;
}

// FILE_COPY requests two checkpoints and waits for both (before the copy, to flush the
// template's pages; after it, so the new database survives a crash).
constexpr std::int64_t kResetCheckpoints = 2;
}  // namespace

std::string reset_method_name(ResetMethod method) {
  switch (method) {
    case ResetMethod::kServerClone:
      return "clone (PG18 file_copy_method=clone)";
    case ResetMethod::kTemplateCopy:
      break;
  }
  return "template copy (FILE_COPY)";
}

std::string template_database_name(std::string_view workload, int scale) {
  return fmt::format("pgslow_tpl_{}_{}", db_word(workload), scale);
}

std::string clone_database_name(std::string_view workload, int scale) {
  return fmt::format("pgslow_{}_{}", db_word(workload), scale);
}

// ---- LoadMeter ----

LoadMeter::LoadMeter(Progress& progress, std::string label)
    : progress_(progress),
      label_(std::move(label)),
      start_us_(now_us()),
      next_update_us_(start_us_ + 1'000'000) {}

std::string LoadMeter::line() const {
  double secs = std::max(1e-6, static_cast<double>(now_us() - start_us_) / 1e6);
  return fmt::format("{}  {:.1f} s  {} rows  {}  {:.0f} rows/s  {}/s", label_, secs,
                     format_count(rows_), format_size(static_cast<double>(bytes_)),
                     static_cast<double>(rows_) / secs,
                     format_size(static_cast<double>(bytes_) / secs));
}

void LoadMeter::add(std::uint64_t rows, std::uint64_t bytes) {
  rows_ += rows;
  bytes_ += bytes;
  std::int64_t now = now_us();
  if (now >= next_update_us_) {
    next_update_us_ = now + 1'000'000;
    progress_.update(line());
  }
}

void LoadMeter::finish() {
  progress_.note(line());
}

// ---- CopyWriter ----

CopyWriter::CopyWriter(pg::Connection& conn, const std::string& copy_sql, LoadMeter* meter)
    : conn_(conn), sql_(copy_sql), meter_(meter) {
  conn_.exec(copy_sql);  // PGRES_COPY_IN
  buf_.reserve(kChunk + 4096);
}

CopyWriter::~CopyWriter() {
  if (open_ && conn_.raw()) {
    PQputCopyEnd(conn_.raw(), "aborted by pgslow");
    while (PGresult* r = PQgetResult(conn_.raw())) PQclear(r);
  }
}

void CopyWriter::flush() {
  if (buf_.empty()) return;
  if (PQputCopyData(conn_.raw(), buf_.data(), static_cast<int>(buf_.size())) != 1)
    pg::check_result(pg::Result(), conn_.raw(), sql_);
  if (meter_) meter_->add(pending_rows_, buf_.size());
  pending_rows_ = 0;
  buf_.clear();
}

void CopyWriter::finish() {
  flush();
  open_ = false;
  if (PQputCopyEnd(conn_.raw(), nullptr) != 1) pg::check_result(pg::Result(), conn_.raw(), sql_);
  pg::Result last;
  while (PGresult* r = PQgetResult(conn_.raw())) {
    pg::Result res(r);
    if (!last || res.status() == PGRES_FATAL_ERROR) last = std::move(res);
  }
  pg::check_result(last, conn_.raw(), sql_);
}

// ---- Dataset ----

Dataset::Dataset(std::string server_conninfo, const Workload& workload, WorkloadParams params)
    : conninfo_(std::move(server_conninfo)),
      workload_(workload),
      params_(std::move(params)),
      fingerprint_(workload.data_fingerprint(params_)),
      template_(template_database_name(workload.name(), params_.scale)),
      clone_(clone_database_name(workload.name(), params_.scale)) {}

std::string Dataset::clone_conninfo() const {
  return pg::with_database(conninfo_, clone_);
}

pg::Connection Dataset::admin() {
  return pg::Connection::open(conninfo_);
}

std::optional<std::string> Dataset::stored_fingerprint(pg::Connection& conn) {
  pg::Result r = conn.exec_params(
      "SELECT coalesce(shobj_description(oid, 'pg_database'), '') FROM pg_database "
      "WHERE datname = $1",
      {template_});
  if (r.rows() == 0) return std::nullopt;
  std::string comment(r.get(0, 0));
  if (!starts_with(comment, kCommentPrefix)) return std::string();
  return comment.substr(kCommentPrefix.size());
}

bool Dataset::template_ready() {
  pg::Connection conn = admin();
  auto fp = stored_fingerprint(conn);
  return fp && *fp == fingerprint_;
}

void Dataset::disconnect_others(pg::Connection& conn, const std::string& db) {
  // CREATE DATABASE ... TEMPLATE fails while anyone is connected to the template; sessions
  // left there are ours (a loader or check that died), so end them.
  conn.exec_params(
      "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
      "WHERE datname = $1 AND pid <> pg_backend_pid()",
      {db});
}

void Dataset::drop(bool with_template) {
  pg::Connection conn = admin();
  drop_database(conn, clone_);
  if (with_template) drop_database(conn, template_);
}

void Dataset::drop_database(pg::Connection& conn, const std::string& db) {
  std::string q = conn.quote_identifier(db);
  disconnect_others(conn, db);
  if (conn.major_version() >= 13)
    conn.exec(fmt::format("DROP DATABASE IF EXISTS {} WITH (FORCE)", q));
  else
    conn.exec(fmt::format("DROP DATABASE IF EXISTS {}", q));
}

bool Dataset::load(Progress& progress, bool force) {
  pg::Connection conn = admin();
  auto fp = stored_fingerprint(conn);
  if (!force && fp && *fp == fingerprint_) {
    progress.note(
        fmt::format("template {} is up to date ({}): not reloaded", template_, fingerprint_));
    return false;
  }
  if (fp) {
    progress.note(fmt::format("template {} {}: reloading", template_,
                              force ? "reload forced" : "is stale or incomplete"));
  }
  drop_database(conn, template_);
  // The comment is written last: a load that dies half-way leaves no fingerprint and is
  // redone next time.
  conn.exec(fmt::format("CREATE DATABASE {} TEMPLATE template0", conn.quote_identifier(template_)));
  std::int64_t t0 = now_us();
  workload_.load(pg::with_database(conninfo_, template_), params_, progress);
  disconnect_others(conn, template_);
  conn.exec(fmt::format("COMMENT ON DATABASE {} IS {}", conn.quote_identifier(template_),
                        conn.quote_literal(std::string(kCommentPrefix) + fingerprint_)));
  auto size =
      conn.query_value(fmt::format("SELECT pg_database_size({})", conn.quote_literal(template_)));
  progress.note(fmt::format("loaded {} into {} in {} ({})", workload_.name(), template_,
                            format_latency_us(static_cast<double>(now_us() - t0)),
                            format_size(size ? std::stod(*size) : 0)));
  return true;
}

ResetResult Dataset::reset() {
  pg::Connection conn = admin();
  auto fp = stored_fingerprint(conn);
  if (!fp || *fp != fingerprint_) {
    throw RuntimeError(fmt::format(
        "no {0} template for {1} at {2} {3}: run `pgslow load --workload {1} --{2} {3}` first",
        fp ? "up-to-date" : "loaded", workload_.name(), workload_.size_name(), params_.scale));
  }
  const std::int64_t checkpoints_before = requested_checkpoints(conn);
  std::int64_t t0 = now_us();
  drop_database(conn, clone_);
  // Set in this session only: the server's own configuration (and what pgslow measures) stays.
  if (method_ == ResetMethod::kServerClone) conn.exec("SET file_copy_method = clone");
  // PostgreSQL 15 defaults to WAL_LOG, which writes the whole database to WAL; FILE_COPY
  // copies the files after a checkpoint (the only strategy before 15).
  std::string create = fmt::format("CREATE DATABASE {} TEMPLATE {}{}",
                                   conn.quote_identifier(clone_), conn.quote_identifier(template_),
                                   conn.major_version() >= 15 ? " STRATEGY FILE_COPY" : "");
  for (int attempt = 1;; ++attempt) {
    disconnect_others(conn, template_);
    try {
      conn.exec(create);
      break;
    } catch (const pg::Error& e) {
      // 55006: a session connected to the template between our terminate and the CREATE.
      if (e.sqlstate() != "55006" || attempt >= 5) {
        throw RuntimeError(
            fmt::format("cannot clone {} into {}: {} (close other sessions on {} and retry)",
                        template_, clone_, e.server_message(), template_));
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(100 * attempt));
    }
  }
  ResetResult r;
  r.conninfo = clone_conninfo();
  r.seconds = static_cast<double>(now_us() - t0) / 1e6;
  r.method = method_;
  // The checkpointer counts a checkpoint just after it wakes the CREATE DATABASE that waited
  // for it: a window opened at once could still see the reset's second checkpoint arrive. Wait
  // (bounded) until both are counted; outside the reset's own time, which is the copy's.
  const std::int64_t deadline = now_us() + 2'000'000;
  while (requested_checkpoints(conn) < checkpoints_before + kResetCheckpoints) {
    if (now_us() >= deadline) {
      spdlog::debug("the reset's checkpoints are not all counted after 2 s; going on");
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  return r;
}

std::uint64_t Dataset::data_bytes() {
  pg::Connection conn = admin();
  auto v = conn.query_value(fmt::format(
      "SELECT pg_database_size(coalesce((SELECT datname FROM pg_database WHERE datname = {}), {}))",
      conn.quote_literal(clone_), conn.quote_literal(template_)));
  return v ? std::stoull(*v) : 0;
}

}  // namespace pgslow::workload
