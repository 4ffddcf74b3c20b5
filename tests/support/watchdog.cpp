#include "tests/support/watchdog.h"

#include <fcntl.h>
#include <unistd.h>

namespace pgslow::testing {

int start_watchdog_script(const std::string& script, const std::string& name,
                          const std::vector<std::string>& args) {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) return -1;
  std::vector<std::string> all = {"sh", "-c", script, name};
  all.insert(all.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (auto& a : all) argv.push_back(a.data());
  argv.push_back(nullptr);
  pid_t pid = ::fork();
  if (pid == 0) {
    ::setsid();  // a Ctrl-C or a killed process group must not take the watchdog along
    ::dup2(fds[0], 0);
    int devnull = ::open("/dev/null", O_WRONLY);
    ::dup2(devnull, 1);
    ::dup2(devnull, 2);
    ::execv("/bin/sh", argv.data());
    ::_exit(127);
  }
  ::close(fds[0]);
  if (pid < 0) {
    ::close(fds[1]);
    return -1;
  }
  return fds[1];
}

}  // namespace pgslow::testing
