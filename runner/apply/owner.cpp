#include "apply/owner.h"

#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "common/process.h"
#include "common/strings.h"
#include "pg/error.h"

namespace pgslow::apply {

namespace {
std::string read_small_file(const std::string& path) {
  std::ifstream in(path);
  if (!in) return {};
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

std::string boot_id() {
  return trim(read_small_file("/proc/sys/kernel/random/boot_id"));
}

// The state letter (field 3) of /proc/<pid>/stat, or 0.
char parse_state(const std::string& stat_line) {
  std::size_t close = stat_line.rfind(')');
  if (close == std::string::npos || close + 2 >= stat_line.size()) return 0;
  return stat_line[close + 2];
}
}  // namespace

std::optional<std::uint64_t> parse_start_time(const std::string& stat_line) {
  // "pid (comm) state ppid ..." where comm may contain ") ": the fields after the last ')'
  // are fixed. starttime is field 22 overall, the 20th after the command name.
  std::size_t close = stat_line.rfind(')');
  if (close == std::string::npos) return std::nullopt;
  std::istringstream rest(stat_line.substr(close + 1));
  std::string field;
  for (int i = 0; i < 20; ++i) {
    if (!(rest >> field)) return std::nullopt;
  }
  try {
    std::size_t used = 0;
    std::uint64_t value = std::stoull(field, &used);
    if (used != field.size()) return std::nullopt;
    return value;
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

std::optional<std::uint64_t> process_start_time(int pid) {
  if (pid <= 0) return std::nullopt;
  std::string stat = read_small_file("/proc/" + std::to_string(pid) + "/stat");
  if (stat.empty()) return std::nullopt;
  if (parse_state(stat) == 'Z' || parse_state(stat) == 'X') return std::nullopt;
  return parse_start_time(stat);
}

ProcessIdentity current_process() {
  ProcessIdentity me;
  me.pid = static_cast<int>(::getpid());
  me.start_time = process_start_time(me.pid).value_or(0);
  me.boot_id = boot_id();
  return me;
}

bool is_alive(const ProcessIdentity& who) {
  if (who.pid <= 0) return false;
  // A different boot: the machine restarted (power loss), every process of then is gone.
  if (!who.boot_id.empty() && who.boot_id != boot_id()) return false;
  std::optional<std::uint64_t> started = process_start_time(who.pid);
  if (!started) return false;
  // No recorded start time (an older journal): the pid alone has to do.
  return who.start_time == 0 || *started == who.start_time;
}

std::string this_command_line() {
  std::vector<std::string> argv = split(read_small_file("/proc/self/cmdline"), '\0');
  while (!argv.empty() && argv.back().empty()) argv.pop_back();
  if (argv.empty()) return "pgslow";
  argv[0] = std::filesystem::path(argv[0]).filename().string();
  // The line goes into the journal, the lock file and messages: no password may go with it
  // (--conninfo "host=db password=..." or a URI with user:password@).
  for (std::string& arg : argv) arg = pg::redact_conninfo(arg);
  // A mystery's --seed names its answer to anyone who reruns it: `pgslow status`, warnings and
  // the lock file show "--seed [hidden]"; the seed itself stays in the sealed mystery file.
  if (std::find(argv.begin(), argv.end(), "mystery") != argv.end()) {
    for (std::size_t i = 0; i < argv.size(); ++i) {
      if (argv[i] == "--seed" && i + 1 < argv.size()) {
        argv[++i] = "[hidden]";
      } else if (starts_with(argv[i], "--seed=")) {
        argv[i] = "--seed=[hidden]";
      }
    }
  }
  return shell_quote(argv);
}

}  // namespace pgslow::apply
