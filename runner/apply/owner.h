#pragma once
// Who owns a journal or a lock: a process id is not enough, because the kernel reuses pids
// (after a kill -9 a new, unrelated process may get the same number) and a reboot (power
// loss) starts counting again. A process is the same one only when the boot id and its start
// time (clock ticks since boot, /proc/<pid>/stat field 22) match as well.

#include <cstdint>
#include <optional>
#include <string>

namespace pgslow::apply {

struct ProcessIdentity {
  int pid = 0;
  std::uint64_t start_time = 0;  // clock ticks after boot
  std::string boot_id;           // /proc/sys/kernel/random/boot_id
  bool operator==(const ProcessIdentity&) const = default;
};

// This process.
ProcessIdentity current_process();

// The start time of `pid` from /proc/<pid>/stat, or nullopt when there is no such process.
std::optional<std::uint64_t> process_start_time(int pid);

// Parses the contents of /proc/<pid>/stat (the command name may hold spaces and parentheses).
std::optional<std::uint64_t> parse_start_time(const std::string& stat_line);

// Whether the process that `who` describes is still alive: same boot, a process with that pid,
// started at the same tick. A zombie counts as gone.
bool is_alive(const ProcessIdentity& who);

// This process's command line as one line ("pgslow apply tiny-cache --allow-changes"), the
// program shown by its name only, every password redacted (and a mystery's --seed); for the
// journal and the lock file.
std::string this_command_line();

}  // namespace pgslow::apply
