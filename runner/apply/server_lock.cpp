#include "apply/server_lock.h"

#include <fcntl.h>
#include <spdlog/spdlog.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <map>
#include <mutex>
#include <sstream>
#include <variant>

#include "apply/journal.h"
#include "apply/sql.h"
#include "common/errors.h"
#include "common/printable.h"
#include "common/safe_fs.h"
#include "common/strings.h"
#include "pg/connection.h"
#include "pg/error.h"

namespace pgslow::apply {

namespace fs = std::filesystem;

namespace {

const std::string kClaimFile = "pgslow.owner";
// A claim is one workdir's path and a newline; the server's user could make the file any size.
constexpr std::size_t kMaxClaimBytes = 4096;

}  // namespace

// One server's lock: the flock'ed data directory, or the session holding the advisory lock.
struct ServerLock::Held {
  UniqueFd folder;
  pg::Connection session;
};

namespace {

// This process's locks, by data directory or conninfo; shared, released by the last holder.
struct HeldLocks {
  std::mutex mutex;
  std::map<std::string, std::weak_ptr<ServerLock::Held>> by_server;
};

HeldLocks& held_locks() {
  static HeldLocks* locks = new HeldLocks;  // never destroyed: outlives every ServerLock
  return *locks;
}

std::string key_of(const fs::path& p) {
  return fs::absolute(p).lexically_normal().string();
}

bool same_workdir(const fs::path& a, const fs::path& b) {
  std::error_code ec;
  if (fs::equivalent(a, b, ec)) return true;
  return key_of(a) == key_of(b);
}

// Whether the workdir a claim names still holds a journal for the server in `data_dir`. The
// claim file is in the server user's folder, so its contents are only a hint: the journal
// itself, in a workdir that passes the trust checks, decides.
bool claim_is_live(const fs::path& claimed, const fs::path& data_dir) {
  try {
    std::optional<Journal> j = load_journal(claimed);
    return j && j->server.data_dir && key_of(*j->server.data_dir) == key_of(data_dir);
  } catch (const Error& e) {
    spdlog::debug("ignoring the claim of {} on {}: {}", claimed.string(), data_dir.string(),
                  e.what());
    return false;
  }
}

void require_unclaimed(const fs::path& data_dir, const fs::path& workdir) {
  std::optional<fs::path> claimed = server_claimed_by(data_dir);
  if (!claimed || same_workdir(*claimed, workdir) || !claim_is_live(*claimed, data_dir)) return;
  throw RuntimeError(fmt::format(
      "the server in {} is changed by pgslow from another workdir, {}, whose journal holds its "
      "original configuration: restore it there first (`pgslow --workdir {} restore`), then "
      "run this again. One server has one owner at a time, or each would record the other's "
      "change as the original.",
      data_dir.string(), printable(claimed->string()), printable(claimed->string())));
}

UniqueFd lock_data_dir(const fs::path& data_dir) {
  UniqueFd folder = open_folder(data_dir);
  if (::flock(folder.get(), LOCK_EX | LOCK_NB) != 0) {
    if (errno != EWOULDBLOCK)
      throw RuntimeError(
          fmt::format("cannot lock {}: {}", data_dir.string(), std::strerror(errno)));
    std::optional<int> pid = flock_holder(data_dir);
    throw RuntimeError(fmt::format(
        "another pgslow process{} is changing the server in {} (perhaps from another "
        "workdir): wait for it to finish, or stop it (Ctrl-C or kill{}: it restores the server "
        "before it exits). One server has one owner at a time.",
        pid ? fmt::format(" (pid {})", *pid) : "", data_dir.string(),
        pid ? fmt::format(" {}", *pid) : " <pid>"));
  }
  return folder;
}

pg::Connection lock_by_connection(const std::string& conninfo) {
  pg::Connection conn = pg::Connection::open(conninfo);
  auto r = conn.exec_params("SELECT pg_try_advisory_lock($1)",
                            pg::make_params(std::to_string(kServerAdvisoryLockKey)));
  if (r.get(0, 0) != "t") {
    std::optional<std::string> pid = conn.query_value(fmt::format(
        "SELECT pid::text FROM pg_catalog.pg_locks WHERE locktype = 'advisory' AND granted "
        "AND ((classid::bigint << 32) | objid::bigint) = {} LIMIT 1",
        kServerAdvisoryLockKey));
    throw RuntimeError(fmt::format(
        "another pgslow is changing this server (its session{} holds pgslow's advisory lock "
        "{}): wait for it to finish, or stop it. One server has one owner at a time.",
        pid ? " of backend pid " + *pid : "", kServerAdvisoryLockKey));
  }
  return conn;
}

}  // namespace

ServerLock lock_server(server::ServerControl& server, const fs::path& workdir) {
  HeldLocks& locks = held_locks();
  std::lock_guard<std::mutex> guard(locks.mutex);
  std::optional<fs::path> data_dir = server.data_dir();
  const std::string key = data_dir ? key_of(*data_dir) : server.conninfo();
  std::shared_ptr<ServerLock::Held> held = locks.by_server[key].lock();
  // A restart ends the locking session, and its lock with it: take it again on a new one.
  if (held && !data_dir && !held->session.is_open()) held->session = lock_by_connection(key);
  if (!held) {
    held = std::make_shared<ServerLock::Held>();
    if (data_dir) {
      held->folder = lock_data_dir(*data_dir);
    } else {
      held->session = lock_by_connection(key);
    }
    locks.by_server[key] = held;
  }
  if (data_dir) require_unclaimed(*data_dir, workdir);
  return ServerLock(std::move(held));
}

std::optional<fs::path> server_claimed_by(const fs::path& data_dir) {
  try {
    UniqueFd folder = open_folder(data_dir);
    const fs::path path = data_dir / kClaimFile;
    UniqueFd fd = open_file_in(folder.get(), kClaimFile, O_RDONLY, path);
    if (!fd) return std::nullopt;
    struct stat st {};
    if (::fstat(fd.get(), &st) != 0)
      throw RuntimeError(fmt::format("cannot read {}: {}", path.string(), std::strerror(errno)));
    if (st.st_size > static_cast<off_t>(kMaxClaimBytes)) {
      // Only a hint (the journal decides): ignored, and replaced by this workdir's claim.
      spdlog::warn(
          "ignoring {}: it is {} bytes, more than the {} a claim (one workdir's path) takes, so "
          "pgslow did not read it; the journal decides who changes this server",
          path.string(), st.st_size, kMaxClaimBytes);
      return std::nullopt;
    }
    const std::string text = trim(read_all(fd.get(), path, kMaxClaimBytes));
    if (text.empty()) return std::nullopt;
    return fs::path(text);
  } catch (const Error& e) {
    spdlog::debug("cannot read the claim on {}: {}", data_dir.string(), e.what());
    return std::nullopt;
  }
}

void claim_server(const server::ServerControl& server, const fs::path& workdir) {
  std::optional<fs::path> data_dir = server.data_dir();
  if (!data_dir) return;
  try {
    UniqueFd folder = open_folder(*data_dir);
    replace_file_in(folder.get(), kClaimFile, key_of(workdir) + "\n",
                    FileOwnership{::geteuid(), ::getegid(), 0644}, *data_dir / kClaimFile,
                    kClaimFile + ".tmp.");
  } catch (const Error& e) {
    // The flock still keeps a second process off while this one runs.
    spdlog::warn("cannot record this workdir's claim on {}: {}", data_dir->string(), e.what());
  }
}

void release_server_claim(const std::optional<fs::path>& data_dir, const fs::path& workdir) {
  if (!data_dir) return;
  std::optional<fs::path> claimed = server_claimed_by(*data_dir);
  if (!claimed || !same_workdir(*claimed, workdir)) return;
  try {
    UniqueFd folder = open_folder(*data_dir);
    remove_file_in(folder.get(), kClaimFile, *data_dir / kClaimFile);
  } catch (const Error& e) {
    spdlog::warn("cannot remove this workdir's claim on {}: {}", data_dir->string(), e.what());
  }
}

std::string server_claim_text(const fs::path& workdir) {
  char host[256] = {};
  if (::gethostname(host, sizeof host - 1) != 0) host[0] = '\0';
  return fmt::format("{}:{}", host, key_of(workdir));
}

std::optional<std::string> read_server_claim(pg::Connection& conn) {
  std::optional<std::string> value;
  try {
    // The file, not the value in effect: a claim written but not yet reloaded counts.
    value = conn.query_value(fmt::format(
        "SELECT setting FROM pg_catalog.pg_file_settings WHERE name = '{}' AND sourcefile LIKE "
        "'%/postgresql.auto.conf' AND error IS NULL ORDER BY seqno DESC LIMIT 1",
        kServerClaimParameter));
  } catch (const pg::Error& e) {
    spdlog::debug("cannot read pg_file_settings ({}); reading the claim in effect",
                  e.server_message());
    value =
        conn.query_value(fmt::format("SELECT current_setting('{}', true)", kServerClaimParameter));
  }
  if (!value || trim(*value).empty()) return std::nullopt;
  return trim(*value);
}

void require_server_unclaimed(pg::Connection& conn, const fs::path& workdir) {
  std::optional<std::string> claim = read_server_claim(conn);
  const std::string mine = server_claim_text(workdir);
  if (!claim || *claim == mine) return;
  const std::size_t colon = claim->find(':');
  const std::string host = colon == std::string::npos ? std::string() : claim->substr(0, colon);
  const std::string claimed = colon == std::string::npos ? *claim : claim->substr(colon + 1);
  const std::string here = mine.substr(0, mine.find(':'));
  if (host == here) {
    if (!claimed.empty() && same_workdir(claimed, workdir)) return;
    // The journal in a trusted workdir decides, as for the claim file.
    bool live = false;
    try {
      live = !claimed.empty() && load_journal(claimed).has_value();
    } catch (const Error& e) {
      spdlog::debug("the claim of {} names no usable journal: {}", printable(claimed), e.what());
    }
    if (!live) {
      spdlog::warn("the server carried a claim of {}, whose journal is gone: replacing it",
                   printable(*claim));
      return;
    }
    throw RuntimeError(fmt::format(
        "this server carries a change by pgslow from another workdir, {}, whose journal holds "
        "its original configuration (the server's parameter {}): restore it there first "
        "(`pgslow --workdir {} restore`), then run this again. One server has one owner at a "
        "time, or each would record the other's change as the original.",
        printable(claimed), kServerClaimParameter, printable(claimed)));
  }
  throw RuntimeError(fmt::format(
      "this server carries a change by pgslow on host {}, workdir {} (the server's parameter "
      "{}): restore it there first, then run this again. If that workdir is gone for good, "
      "clear the claim on the server (ALTER SYSTEM RESET {}; SELECT pg_reload_conf();) and put "
      "the original configuration back by hand: pgslow here does not know it.",
      printable(host), printable(claimed), kServerClaimParameter, kServerClaimParameter));
}

namespace {
// Before PostgreSQL 17, ALTER SYSTEM knows a custom parameter only once the session has one.
void make_claim_known(pg::Connection& conn) {
  conn.exec(fmt::format("SELECT pg_catalog.set_config('{}', '', false)", kServerClaimParameter));
}
}  // namespace

void write_server_claim(pg::Connection& conn, const fs::path& workdir) {
  try {
    make_claim_known(conn);
    conn.exec(alter_system_set_value(conn, kServerClaimParameter, server_claim_text(workdir)));
  } catch (const pg::Error& e) {
    spdlog::warn(
        "the server refused pgslow's claim ({}): {}; another workdir reaching it will not see "
        "this one's change once this run ends",
        kServerClaimParameter, e.server_message());
  }
}

void release_server_marker(pg::Connection& conn, const fs::path& workdir) {
  std::optional<std::string> claim = read_server_claim(conn);
  if (!claim || *claim != server_claim_text(workdir)) return;
  make_claim_known(conn);
  conn.exec(alter_system_reset(kServerClaimParameter));
}

std::optional<int> flock_holder(const fs::path& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return std::nullopt;
  // "1: FLOCK  ADVISORY  WRITE 1234 fd:01:123456 0 EOF": pid, then major:minor:inode.
  const std::string want = fmt::format("{:02x}:{:02x}:{}", major(st.st_dev), minor(st.st_dev),
                                       static_cast<unsigned long long>(st.st_ino));
  std::ifstream in("/proc/locks");
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream words(line);
    std::string n, kind, advisory, mode, pid, where;
    if (!(words >> n >> kind >> advisory >> mode >> pid >> where)) continue;
    if (kind == "FLOCK" && where == want) return std::atoi(pid.c_str());
  }
  return std::nullopt;
}

}  // namespace pgslow::apply
