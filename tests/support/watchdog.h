#pragma once
// A process that outlives a crashed test binary: `sh -c script name args...` runs once the end
// of a pipe only the test binary holds is closed (its exit, however it ends), so a fixture can
// clean up after a crash (stop a server, unmount a file system). After a normal teardown the
// script finds nothing to do.

#include <string>
#include <vector>

namespace pgslow::testing {

// Starts the watchdog; returns the pipe's end to keep open until the fixture's teardown (close
// it to run the script at once), or -1 when it could not start. `script` waits on `cat
// >/dev/null` first; `args` are its $1, $2, ...: arguments, never interpolated.
int start_watchdog_script(const std::string& script, const std::string& name,
                          const std::vector<std::string>& args);

}  // namespace pgslow::testing
