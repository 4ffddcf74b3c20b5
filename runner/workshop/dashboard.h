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
#include <cstdint>
#include <filesystem>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "common/progress.h"
#include "results/cliff.h"
#include "workshop/dashboard_door.h"

namespace pgslow::workshop {

struct RoomPrediction {
  std::string name;    // as the participant typed it
  std::string answer;  // the first question's answer
};

// A laptop's measured result for the room (`pgslow lesson NAME --room URL`): the effect of the
// lesson's stage with its interval, and what kind of machine measured it. Nothing else travels:
// no conninfo, no paths, no settings beyond the stage's knobs.
struct RoomResult {
  std::string name;       // the participant, as the laptop sent it
  std::string lesson;     // "cache"
  std::string stage;      // the compared stage ...
  std::string reference;  // ... against this one
  double ratio = 0;       // stage TPS / reference TPS
  double low = 0;         // its 95% interval; 0 when unknown
  double high = 0;
  std::string text;  // "6.7x slower (95% interval ...; 1,234 vs 45,678 transactions)"
  std::uint64_t transactions = 0;
  std::string machine;   // "2 cores, 7.8 GB memory, Linux 6.1.0"
  std::string envelope;  // "memory 136MB, cpus 1"; "" without one
};

// The body a laptop posts to /result, and the dashboard's reading of it: nullopt with the
// reason when it is not one (unknown keys, a field of the wrong type, a ratio that is not a
// positive number, text that is not UTF-8), fields clipped to `max_field` bytes.
std::string room_result_body(const RoomResult& result);
std::optional<RoomResult> read_room_result(const std::string& body, std::size_t max_field,
                                           std::string* why);

// A guess of where a cliff begins, drawn as a marker on the cliff's curve.
struct CliffGuessMark {
  std::string name;  // the participant
  std::string text;  // as they wrote it: "160MB"
  double value = 0;  // in the search's base unit (the curve's x)
};

// Whether every result of `lesson` in `results` lies within every other's interval: the
// laptops agree on the effect, as far as their intervals can tell.
bool room_intervals_overlap(const std::vector<RoomResult>& results, const std::string& lesson);

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
  // A cliff lesson's curve: the effect against the searched value (log scale, from `from` to
  // `to`), each point with its interval as the search measures it (a point measured again
  // replaces its first look), and the room's guesses as markers.
  void open_cliff(const std::string& knob, const results::CliffPoint& from, const std::string& to,
                  double to_value);
  void add_cliff_point(const results::CliffPoint& point);
  void set_cliff_guesses(std::vector<CliffGuessMark> guesses);
  // The laptops' results posted to /result (each by a joined token; a token's later post
  // replaces its own), in the order they came.
  std::vector<RoomResult> room_results() const;
  // Reads evidence counters from the server once a second (its own connection; reconnects
  // after a restart). Stops with the dashboard. Called again with another server, it watches
  // that one from then on (each version of `run --versions` in turn). `data_dir`: a local
  // server's, so that the live wait line names commit_delay's unreported sleep as the report
  // does (evidence/wait_sampler.h).
  void watch_server(const std::string& conninfo,
                    std::optional<std::filesystem::path> data_dir = std::nullopt);

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
