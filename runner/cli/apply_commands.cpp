#include "cli/commands.h"

namespace pgslow::cli {

void add_apply_commands(CLI::App& app, Context& ctx) {
  (void)app;
  (void)ctx;
}

}  // namespace pgslow::cli

namespace pgslow::cli {

void before_command(Context& ctx, const std::string& command) {
  (void)ctx;
  (void)command;
}

}  // namespace pgslow::cli
