#include "cli/commands.h"

namespace pgslow::cli {

void add_workload_commands(CLI::App& app, Context& ctx) {
  (void)app;
  (void)ctx;
}

}  // namespace pgslow::cli
