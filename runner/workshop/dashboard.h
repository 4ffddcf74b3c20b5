#pragma once
// The live dashboard of workshop mode (docs/workshop.md): a local web page that charts a
// running workload from the run's own per-second progress events (never from its printed
// output), marks each stage with the knobs it changed, shows server evidence counters as they
// move, and collects the room's predictions by name. Served with cpp-httplib; the page is
// self-contained (no CDN: workshop rooms often have no internet) and polls /state.
//
//   Dashboard board("127.0.0.1:0", "pgslow run quick");   // port 0: any free port
//   TeeProgress progress(console, board);                 // charts what the console prints
//   board.watch_server(server.conninfo());                // evidence counters once a second

#include <atomic>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "common/progress.h"
#include "workshop/dashboard_door.h"

namespace pgslow::workshop {

struct RoomPrediction {
  std::string name;    // as the participant typed it
  std::string answer;  // the first question's answer
};

class Dashboard final : public Progress {
 public:
  // `address`: "HOST:PORT", "HOST" (port 8080) or ":PORT" (127.0.0.1). Binding to anything
  // but a loopback address is the caller's explicit choice (exposure_warning() says who can
  // reach it). Throws InputError when the address cannot be bound.
  Dashboard(const std::string& address, std::string title, DashboardLimits limits = {});
  ~Dashboard() override;
  Dashboard(const Dashboard&) = delete;
  Dashboard& operator=(const Dashboard&) = delete;

  std::string url() const;
  std::string host() const;
  int port() const;

  void update(const std::string& line) override;
  void note(const std::string& line) override;
  void tick(const ProgressTick& t) override;
  void stage_started(const StageMarker& m) override;
  // Each run of a stage restarts the evidence counters (the report's evidence window, live)
  // and reads the workload's table counters in that run's database.
  void measuring(const std::string& stage, const std::string& database) override;

  // The workshop step the page shows ("explain", "predict", "run", "reveal") and its text.
  void set_step(const std::string& step, const std::string& text);
  // Opens the prediction form with this question; predictions() returns what came in.
  void open_predictions(const std::string& question);
  void close_predictions();
  std::vector<RoomPrediction> predictions() const;
  // The reveal as text, shown under the charts.
  void set_reveal(const std::string& text);
  // Reads evidence counters from the server once a second (its own connection; reconnects
  // after a restart). Stops with the dashboard. Called again with another server, it watches
  // that one from then on (each version of `run --versions` in turn).
  void watch_server(const std::string& conninfo);

  // The state as JSON (what /state serves): a snapshot built once after each change and
  // shared by every request until the next, so serving it costs no lock held while sending.
  std::string state_json() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// The page (HTML, CSS and script in one string).
const std::string& dashboard_page();

}  // namespace pgslow::workshop
