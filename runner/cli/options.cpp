#include "cli/options.h"

namespace pgslow::cli {

void add_protocol_option(CLI::App* cmd, driver::Protocol& protocol) {
  cmd->add_option_function<std::string>(
      "--protocol,-M",
      [&protocol](const std::string& v) {
        auto p = driver::parse_protocol(v);
        if (!p) throw CLI::ValidationError("--protocol", "use simple, extended or prepared");
        protocol = *p;
      },
      "how statements are sent, like pgbench -M: simple, extended or prepared (default)");
}

}  // namespace pgslow::cli
