#include "apply/trust.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "common/errors.h"

namespace pgslow::apply {

namespace fs = std::filesystem;

namespace {

bool trusted_owner(uid_t uid) {
  return uid == ::geteuid() || uid == 0;
}

std::string mode_text(mode_t mode) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "%04o", static_cast<unsigned>(mode & 07777));
  return buf;
}

// The refusal, shared by the folder and the files in it.
void check(const struct stat& st, const fs::path& path, const char* what, const char* fix) {
  if (!trusted_owner(st.st_uid)) {
    throw RuntimeError("pgslow refuses the " + std::string(what) + " " + path.string() +
                       ": it belongs to uid " + std::to_string(st.st_uid) + ", not to you (uid " +
                       std::to_string(::geteuid()) +
                       ") or root, so its owner could make pgslow run their commands or write "
                       "their paths. Nothing was read from it. " +
                       fix);
  }
  if ((st.st_mode & (S_IWGRP | S_IWOTH)) != 0) {
    throw RuntimeError("pgslow refuses the " + std::string(what) + " " + path.string() +
                       ": others may write it (mode " + mode_text(st.st_mode) +
                       "), so anyone could plant a journal or lock in it. Nothing was read from "
                       "it. Run `chmod go-w " +
                       path.string() + "` if its contents are yours, or " + fix);
  }
}

}  // namespace

void require_trusted_workdir(const fs::path& workdir) {
  struct stat st {};
  if (::stat(workdir.c_str(), &st) != 0) {
    if (errno == ENOENT) return;
    throw RuntimeError("cannot read the workdir " + workdir.string() + ": " + std::strerror(errno));
  }
  if (!S_ISDIR(st.st_mode))
    throw RuntimeError("the workdir " + workdir.string() + " is not a folder");
  check(st, workdir, "workdir", "use a workdir of your own (--workdir, e.g. ~/.pgslow).");
}

void require_trusted_fd(int fd, const fs::path& path) {
  struct stat st {};
  if (::fstat(fd, &st) != 0)
    throw RuntimeError("cannot read " + path.string() + ": " + std::strerror(errno));
  if (!S_ISREG(st.st_mode))
    throw RuntimeError("pgslow refuses " + path.string() +
                       ": it is not a regular file. Remove it if it is not yours.");
  check(st, path, "file", "remove it, or use a workdir of your own (--workdir).");
}

int open_trusted_file(const fs::path& path, int flags, mode_t mode) {
  int fd = ::open(path.c_str(), flags | O_NOFOLLOW | O_CLOEXEC, mode);
  if (fd < 0) {
    int err = errno;
    if (err == ENOENT && (flags & O_CREAT) == 0) return -1;
    if (err == ELOOP)
      throw RuntimeError("pgslow refuses " + path.string() +
                         ": it is a symbolic link, which would make pgslow read or write "
                         "whatever it points to. Remove the link.");
    throw RuntimeError("cannot open " + path.string() + ": " + std::strerror(err));
  }
  try {
    require_trusted_fd(fd, path);
  } catch (...) {
    ::close(fd);
    throw;
  }
  return fd;
}

void create_workdir(const fs::path& workdir) {
  std::error_code ec;
  if (fs::is_directory(workdir, ec)) return;
  fs::path parent = workdir.parent_path();
  if (!parent.empty() && parent != workdir) create_workdir(parent);
  if (::mkdir(workdir.c_str(), 0755) != 0) {
    if (errno == EEXIST) return;
    throw RuntimeError("cannot create the workdir " + workdir.string() + ": " +
                       std::strerror(errno));
  }
  // mkdir applies the umask, which may leave group write (umask 002); the folder pgslow just
  // made must not be writable by others.
  ::chmod(workdir.c_str(), 0755);
}

}  // namespace pgslow::apply
