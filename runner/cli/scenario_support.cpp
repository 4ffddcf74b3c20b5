// --dashboard and --linger (cli/scenario_support.h), shared by run, lesson and mystery start.
// The scenario helpers of the same header live with `pgslow run` in run_commands.cpp.

#include "cli/scenario_support.h"

#include <fmt/format.h>

#include <chrono>
#include <cstdio>
#include <iostream>
#include <thread>

#include "apply/interrupt.h"
#include "common/clock.h"

namespace pgslow::cli {

namespace {
constexpr const char* kDefaultAddress = "127.0.0.1:8080";
}

std::shared_ptr<DashboardArgs> add_dashboard_options(CLI::App* cmd) {
  auto args = std::make_shared<DashboardArgs>();
  cmd->add_option("--dashboard", args->address,
                  "serve a live page while it runs, on ADDR: HOST:PORT, HOST (port 8080) or "
                  "PORT (on 127.0.0.1); default 127.0.0.1:8080; another address, e.g. "
                  "0.0.0.0:8080 for a room, is your explicit choice")
      ->expected(0, 1);
  cmd->add_option("--room-size", args->room_size,
                  "with --dashboard: predictions the page accepts, one per browser (default 100)")
      ->check(CLI::Range(1, 1000));
  cmd->add_option("--room-per-address", args->per_address,
                  "with --dashboard: places one network address may take (default 2; raise it "
                  "for a room behind one NAT address)")
      ->check(CLI::Range(1, 1000));
  cmd->add_option("--linger", args->linger_s,
                  "keep the dashboard up this many seconds after the end");
  return args;
}

std::unique_ptr<workshop::Dashboard> open_dashboard(CLI::App* cmd, const DashboardArgs& args,
                                                    const std::string& title) {
  if (cmd->count("--dashboard") == 0) return nullptr;
  workshop::DashboardLimits limits;
  limits.room_size = args.room_size;
  limits.per_address = args.per_address;
  auto board = std::make_unique<workshop::Dashboard>(
      args.address.empty() ? kDefaultAddress : args.address, title, limits);
  if (auto warning = workshop::exposure_warning(board->host(), board->port())) {
    std::cout << *warning << std::endl;
  }
  std::fprintf(stderr, "dashboard: %s\n", board->url().c_str());
  std::fflush(stderr);
  return board;
}

void linger(workshop::Dashboard* board, const DashboardArgs& args) {
  if (board == nullptr || args.linger_s <= 0) return;
  std::fflush(stdout);  // what was printed is complete: a reader (or a test) sees it now
  std::cout.flush();
  std::fprintf(stderr, "dashboard: open for %.0f more seconds (Ctrl-C closes it)\n", args.linger_s);
  const std::int64_t end = now_us() + static_cast<std::int64_t>(args.linger_s * 1e6);
  while (now_us() < end && !apply::InterruptGuard::interrupted())
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
}

}  // namespace pgslow::cli
