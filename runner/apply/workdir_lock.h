#pragma once
// One pgslow process per workdir: two at once would fight over the same server and journal.
// The lock is flock(2) on <workdir>/pgslow.lock, which the kernel releases when its holder
// exits in any way (kill -9 included), so a dead owner's lock is taken over without a stale
// file problem; the file also records the holder's pid and command for the refusal message.

#include <filesystem>
#include <optional>
#include <string>

#include "apply/owner.h"

namespace pgslow::apply {

struct LockHolder {
  ProcessIdentity who;
  std::string command;
};

class WorkdirLock {
 public:
  // Takes the lock or throws RuntimeError naming the pid and command of the process holding
  // it. Creates the workdir when it does not exist.
  static WorkdirLock acquire(const std::filesystem::path& workdir, const std::string& command);
  // Takes the lock if free; nullopt (with `holder` filled when known) if another process has it.
  static std::optional<WorkdirLock> try_acquire(const std::filesystem::path& workdir,
                                                const std::string& command,
                                                std::optional<LockHolder>* holder = nullptr);

  WorkdirLock(WorkdirLock&& other) noexcept;
  WorkdirLock& operator=(WorkdirLock&& other) noexcept;
  WorkdirLock(const WorkdirLock&) = delete;
  WorkdirLock& operator=(const WorkdirLock&) = delete;
  ~WorkdirLock();

  const std::filesystem::path& path() const { return path_; }
  // The previous holder's pid when this lock was taken over from a process that is gone.
  std::optional<int> taken_over_from() const { return taken_over_from_; }

 private:
  WorkdirLock(int fd, std::filesystem::path path) : fd_(fd), path_(std::move(path)) {}
  int fd_ = -1;
  std::filesystem::path path_;
  std::optional<int> taken_over_from_;
};

std::filesystem::path lock_path(const std::filesystem::path& workdir);

// Who holds the lock of `workdir` right now, or nullopt when nobody does (or no lock file).
std::optional<LockHolder> lock_holder(const std::filesystem::path& workdir);

// The contents of the lock file and back ("pid start_time boot_id\ncommand\n").
std::string format_lock_file(const LockHolder& holder);
std::optional<LockHolder> parse_lock_file(const std::string& text);

// Holds the workdir lock for the rest of this process (idempotent for the same workdir): every
// command takes it in repair_before_command (before_command.h), and a later Applier in the same
// process does not take it twice (a second flock on another descriptor of this process would
// refuse).
void hold_workdir_lock_for_process(const std::filesystem::path& workdir,
                                   const std::string& command);
// Same, but gives up (false, `holder` filled when known) instead of throwing when another
// process holds it: for commands that only read.
bool try_hold_workdir_lock_for_process(const std::filesystem::path& workdir,
                                       const std::string& command,
                                       std::optional<LockHolder>* holder = nullptr);
// Whether this process holds the lock of `workdir`.
bool process_holds_workdir_lock(const std::filesystem::path& workdir);

}  // namespace pgslow::apply
