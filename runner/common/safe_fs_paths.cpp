#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <climits>
#include <cstring>
#include <deque>
#include <string>

#include "common/errors.h"
#include "common/safe_fs.h"
#include "common/safe_fs_steps.h"

// Paths walked from / one step at a time (the trust of folders pgslow keeps its state in, the
// files it takes instructions from, and the folders it makes); the descriptor steps inside
// one folder are in safe_fs.cpp.

namespace pgslow {

namespace fs = std::filesystem;

namespace {

// How far a walk trusts what it meets.
enum class Walk {
  kOwnedAllTheWay,  // every step placed by root or the invoking user (their own folders)
  kNoForeignLinks,  // any folder, but no symlink that someone else could have placed
};

// What a walk does at a step that does not exist.
enum class AtMissing {
  kFail,    // an error naming the step
  kStop,    // an empty UniqueFd, once the folder the step is missing from is fit to create in
  kCreate,  // mkdirat from that folder's descriptor, then go on into what was made
};

// Refuses (RuntimeError) to make anything in the folder `parent` (fstat'ed, shown as `shown`)
// unless only root or the invoking user can put a name there: theirs and writable by nobody
// else, or theirs and sticky (/tmp), where no one else can move what root makes. Anywhere else
// its owner could rename a new folder away and plant a link under its name between root's
// mkdir and root's next step by path.
void require_fit_to_create_in(const struct stat& parent, const fs::path& shown,
                              const fs::path& path, const std::string& what) {
  const bool theirs_alone = trusted_owner(parent.st_uid) &&
                            (!others_may_write(parent) || (parent.st_mode & S_ISVTX) != 0);
  if (theirs_alone) return;
  const std::string why = trusted_owner(parent.st_uid)
                              ? "others may write it (mode " + mode_text(parent.st_mode) + ")"
                              : "it belongs to uid " + std::to_string(parent.st_uid) +
                                    ", not to you (uid " + std::to_string(::geteuid()) +
                                    ") or root";
  throw RuntimeError("pgslow refuses to create " + what + " " + path.string() + " in " +
                     shown.string() + ": " + why +
                     ", so they could swap what pgslow makes there for a link to a folder of "
                     "root's. Nothing was created. Use a folder of your own (e.g. --workdir "
                     "/var/tmp/pgslow, --out /var/tmp/results).");
}

// Makes the folder `step` in `here` (mode 0700, then 0755 through its descriptor once it is
// known to be what mkdirat made: a folder of ours, reached without a link). False when it was
// there already (made by someone else meanwhile: the walk then judges it as any other step).
bool make_step(int here, const std::string& step, const fs::path& shown, const std::string& what) {
  if (::mkdirat(here, step.c_str(), 0700) != 0) {
    if (errno == EEXIST) return false;
    throw RuntimeError("cannot create " + what + " " + shown.string() + ": " +
                       std::strerror(errno));
  }
  UniqueFd made(::openat(here, step.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
  struct stat st {};
  if (!made || ::fstat(made.get(), &st) != 0 || !S_ISDIR(st.st_mode) || st.st_uid != ::geteuid())
    throw RuntimeError("pgslow refuses " + what + " " + shown.string() +
                       ": the folder it just made was replaced before it could be checked. "
                       "Nothing else was changed.");
  // mkdirat applies the umask (002 leaves group write): never writable by others.
  if (::fchmod(made.get(), 0755) != 0) fail("set the mode of", shown, errno);
  return true;
}

// Walks `path` from / one step at a time with O_PATH | O_NOFOLLOW, following a symlink only as
// `rule` allows, and returns the last folder reached. `at_missing` says what a step that does
// not exist does (AtMissing).
UniqueFd walk(const fs::path& path, Walk rule, const std::string& what, AtMissing at_missing) {
  fs::path abs = fs::absolute(path).lexically_normal();
  std::deque<std::string> steps;
  for (const auto& part : abs.relative_path()) {
    if (!part.empty()) steps.push_back(part.string());
  }
  UniqueFd here(::open("/", O_PATH | O_DIRECTORY | O_CLOEXEC));
  if (!here) fail("open", "/", errno);
  fs::path shown = "/";
  int links_followed = 0;
  int steps_looked_at_again = 0;  // a name that comes and goes under the walk
  while (!steps.empty()) {
    if (steps_looked_at_again > 64)
      throw RuntimeError("pgslow refuses " + what + " " + path.string() +
                         ": a folder on the way (" + shown.string() +
                         ") keeps changing under it. Nothing was changed.");
    std::string step = steps.front();
    steps.pop_front();
    struct stat parent {};
    struct stat child {};
    if (::fstat(here.get(), &parent) != 0) fail("read", shown, errno);
    fs::path next_shown = (shown / step).lexically_normal();
    if (::fstatat(here.get(), step.c_str(), &child, AT_SYMLINK_NOFOLLOW) != 0) {
      if (errno != ENOENT || at_missing == AtMissing::kFail) fail("reach", next_shown, errno);
      if (rule == Walk::kOwnedAllTheWay) require_fit_to_create_in(parent, shown, path, what);
      if (at_missing == AtMissing::kStop) return UniqueFd();
      make_step(here.get(), step, next_shown, what);
      steps.push_front(step);  // judged as any step that was there
      ++steps_looked_at_again;
      continue;
    }
    bool placed_safely = step == ".." || placed_by_trusted(parent, child);
    if (S_ISLNK(child.st_mode)) {
      if (!placed_safely) {
        throw RuntimeError("pgslow refuses " + what + " " + path.string() + ": on the way, " +
                           next_shown.string() + " is a symbolic link of uid " +
                           std::to_string(child.st_uid) + " in a folder others may write (" +
                           shown.string() + ", uid " + std::to_string(parent.st_uid) + ", mode " +
                           mode_text(parent.st_mode) +
                           "), so they choose where it leads. Use the real path, or remove the "
                           "link.");
      }
      if (++links_followed > 40) fail("resolve", path, ELOOP);
      std::string target(PATH_MAX, '\0');
      ssize_t n = ::readlinkat(here.get(), step.c_str(), target.data(), target.size());
      if (n < 0) fail("read the link", next_shown, errno);
      target.resize(static_cast<std::size_t>(n));
      fs::path to(target);
      std::deque<std::string> more;
      for (const auto& part : to.relative_path()) {
        if (!part.empty() && part != ".") more.push_back(part.string());
      }
      steps.insert(steps.begin(), more.begin(), more.end());
      if (to.is_absolute()) {
        here = UniqueFd(::open("/", O_PATH | O_DIRECTORY | O_CLOEXEC));
        shown = "/";
      }
      continue;
    }
    if (rule == Walk::kOwnedAllTheWay && !placed_safely) {
      throw RuntimeError("pgslow refuses " + what + " " + path.string() + ": " +
                         next_shown.string() + " (uid " + std::to_string(child.st_uid) +
                         ") is in " + shown.string() + ", a folder of uid " +
                         std::to_string(parent.st_uid) + " with mode " + mode_text(parent.st_mode) +
                         " that others may write, so they could replace it. Use a folder of "
                         "your own (e.g. under /var/tmp or your home).");
    }
    UniqueFd next(
        ::openat(here.get(), step.c_str(), O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
    if (!next) {
      if (errno == ENOENT && at_missing != AtMissing::kFail) {
        steps.push_front(step);  // gone between the look and the open: look again
        ++steps_looked_at_again;
        continue;
      }
      fail("reach", next_shown, errno == ELOOP ? ENOTDIR : errno);
    }
    // The step may have been swapped between the look and the open: it must be what was seen.
    struct stat opened {};
    if (::fstat(next.get(), &opened) != 0 || opened.st_ino != child.st_ino ||
        opened.st_dev != child.st_dev) {
      throw RuntimeError("pgslow refuses " + what + " " + path.string() + ": " +
                         next_shown.string() + " changed while pgslow looked at it");
    }
    here = std::move(next);
    shown = next_shown;
  }
  return here;
}

}  // namespace

void require_trusted_path(const fs::path& path, const std::string& what, const std::string& fix) {
  UniqueFd last = walk(path, Walk::kOwnedAllTheWay, what, AtMissing::kStop);
  if (!last) return;
  struct stat st {};
  if (::fstat(last.get(), &st) != 0) fail("read", path, errno);
  check(st, path, what,
        fix.empty() ? "use a folder of your own (--workdir, e.g. /var/tmp/pgslow)." : fix.c_str());
}

void require_output_folder(const fs::path& folder, const std::string& what,
                           const std::string& fix) {
  UniqueFd last = walk(folder, Walk::kOwnedAllTheWay, what, AtMissing::kStop);
  if (!last) return;
  struct stat st {};
  if (::fstat(last.get(), &st) != 0) fail("read", folder, errno);
  if ((st.st_mode & S_ISVTX) != 0 && trusted_owner(st.st_uid)) return;
  check(st, folder, what, fix.c_str());
}

void require_trusted_workdir(const fs::path& workdir) {
  struct stat st {};
  if (::lstat(workdir.c_str(), &st) == 0 && !S_ISDIR(st.st_mode) && !S_ISLNK(st.st_mode))
    throw RuntimeError("the workdir " + workdir.string() + " is not a folder");
  require_trusted_path(workdir, "the workdir");
}

namespace {
constexpr const char* kDataFix =
    "copy it into a folder that only you (or root) can write, e.g. under your home, read it, "
    "and give that path.";
}  // namespace

std::string read_trusted_file(const fs::path& path, const std::string& what, const std::string& fix,
                              std::size_t max_bytes) {
  const char* to_do = fix.empty() ? kDataFix : fix.c_str();
  fs::path p = fs::absolute(path).lexically_normal();
  for (int links = 0;; ++links) {
    if (links > 40) fail("resolve", path, ELOOP);
    const std::string name = p.filename().string();
    if (name.empty()) fail("read", p, EISDIR);
    UniqueFd folder = walk(p.parent_path(), Walk::kOwnedAllTheWay, what, AtMissing::kFail);
    struct stat parent {};
    struct stat st {};
    if (::fstat(folder.get(), &parent) != 0) fail("read", p.parent_path(), errno);
    if (::fstatat(folder.get(), name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0)
      fail("read", p, errno);
    if (!placed_by_trusted(parent, st)) {
      throw RuntimeError("pgslow refuses " + what + " " + p.string() + ": it belongs to uid " +
                         std::to_string(st.st_uid) + " and is in " + p.parent_path().string() +
                         " (a folder of uid " + std::to_string(parent.st_uid) + ", mode " +
                         mode_text(parent.st_mode) +
                         "), which others may write, so anyone could have put it there. Nothing "
                         "was read from it. " +
                         std::string(1, static_cast<char>(std::toupper(to_do[0]))) + (to_do + 1));
    }
    if (S_ISLNK(st.st_mode)) {
      std::string target(PATH_MAX, '\0');
      ssize_t n = ::readlinkat(folder.get(), name.c_str(), target.data(), target.size());
      if (n < 0) fail("read the link", p, errno);
      target.resize(static_cast<std::size_t>(n));
      p = (p.parent_path() / target).lexically_normal();
      continue;
    }
    UniqueFd fd(::openat(folder.get(), name.c_str(),
                         O_RDONLY | O_NOFOLLOW | O_NOCTTY | O_CLOEXEC | O_NONBLOCK));
    if (!fd) fail("open", p, errno);
    struct stat opened {};
    if (::fstat(fd.get(), &opened) != 0) fail("read", p, errno);
    if (opened.st_ino != st.st_ino || opened.st_dev != st.st_dev)
      throw RuntimeError("pgslow refuses " + what + " " + p.string() +
                         ": it changed while pgslow looked at it");
    if (!S_ISREG(opened.st_mode))
      throw RuntimeError("pgslow refuses " + what + " " + p.string() +
                         ": it is not a regular file");
    check(opened, p, what, to_do);
    return read_all(fd.get(), p, max_bytes);
  }
}

bool is_trusted_folder(const fs::path& folder, std::string& why) {
  try {
    UniqueFd last = walk(folder, Walk::kOwnedAllTheWay, "the folder", AtMissing::kFail);
    struct stat st {};
    if (::fstat(last.get(), &st) != 0) fail("read", folder, errno);
    check(st, folder, "the folder", "use a folder of your own.");
    return true;
  } catch (const std::exception& e) {
    why = e.what();
    return false;
  }
}

UniqueFd create_trusted_folders(const fs::path& path, const std::string& what) {
  UniqueFd last = walk(path, Walk::kOwnedAllTheWay, what, AtMissing::kCreate);
  UniqueFd folder(::openat(last.get(), ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (!folder) fail("open", path, errno);
  return folder;
}

UniqueFd create_output_folders(const fs::path& path, const std::string& what) {
  require_output_folder(path, what,
                        "write it into a folder that only you (or root) can write (--out DIR, "
                        "or run pgslow from a folder of your own).");
  return create_trusted_folders(path, what);
}

UniqueFd create_workdir(const fs::path& workdir) {
  // Judged before anything is made: a link or folder of someone else's on the way would
  // otherwise have root create folders wherever it leads.
  require_trusted_workdir(workdir);
  UniqueFd folder = create_trusted_folders(workdir, "the workdir");
  struct stat st {};
  if (::fstat(folder.get(), &st) != 0) fail("read", workdir, errno);
  check(st, workdir, "the workdir", "use a folder of your own (--workdir, e.g. /var/tmp/pgslow).");
  return folder;
}

UniqueFd open_folder(const fs::path& path) {
  UniqueFd last = walk(path, Walk::kNoForeignLinks, "the folder", AtMissing::kFail);
  UniqueFd folder(::openat(last.get(), ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (!folder) fail("open the folder", path, errno);
  return folder;
}

}  // namespace pgslow
