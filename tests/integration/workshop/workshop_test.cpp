// Workshop mode on a real server, through the built pgslow binary: a lesson scripted with an
// answers file, a mystery from start to reveal (the configuration back byte for byte, the
// answer never on a participant's screen), a mystery killed -9 and recovered, and the live
// dashboard driven by headless Chromium during a real run, and flooded during one.

#include <arpa/inet.h>
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <httplib.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <array>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <regex>
#include <thread>

#include "apply/bytes.h"
#include "apply/journal.h"
#include "common/paths.h"
#include "common/strings.h"
#include "knobs/catalog.h"
#include "pg/connection.h"
#include "report/json.h"
#include "tests/support/cluster_fixture.h"
#include "tests/support/pgslow_process.h"
#include "workshop/dashboard.h"
#include "workshop/mystery.h"

namespace pgslow::testing {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;
using json = nlohmann::json;

fs::path workdir() {
  return cluster().cluster_dir().parent_path();
}

std::vector<std::string> args(std::vector<std::string> rest) {
  std::vector<std::string> out = {"--workdir", workdir().string()};
  out.insert(out.end(), rest.begin(), rest.end());
  return out;
}

// postgresql.auto.conf's sha256 and every pg_settings value: "restored byte for byte".
struct Snapshot {
  std::string sha256;
  std::map<std::string, std::string> settings;
  bool operator==(const Snapshot&) const = default;
};

Snapshot snapshot() {
  Snapshot s;
  s.sha256 = apply::sha256_hex(read_file(*cluster().data_dir() / "postgresql.auto.conf"));
  pg::Connection conn = pg::Connection::open(conninfo());
  pg::Result r = conn.exec("SELECT name, setting FROM pg_settings");
  for (int i = 0; i < r.rows(); ++i)
    s.settings[std::string(r.get(i, 0))] = std::string(r.get(i, 1));
  return s;
}

// Whole-word occurrence (knob names are words of [A-Za-z0-9_], preset names also take '-').
bool mentions(const std::string& text, const std::string& word) {
  const std::regex re("(^|[^A-Za-z0-9_-])" + std::regex_replace(word, std::regex("[-]"), "\\-") +
                          "($|[^A-Za-z0-9_-])",
                      std::regex::icase);
  return std::regex_search(text, re);
}

// A small lesson around a reload-only degradation with a big effect (index access priced out).
fs::path write_lesson_files() {
  const fs::path dir = workdir() / "workshop-test";
  fs::create_directories(dir);
  std::ofstream(dir / "scenario.yaml") << "name: workshop-test\n"
                                          "workload: {name: select-only, scale: 1, clients: 2}\n"
                                          "measure: {warmup: 1s, duration: 3s}\n"
                                          "stages:\n"
                                          "  - name: no-index\n"
                                          "    presets: [planner-sabotage]\n";
  std::ofstream(dir / "lesson.yaml") << "lesson: test\n"
                                        "title: Test lesson\n"
                                        "minutes: 10\n"
                                        "scenario: scenario.yaml\n"
                                        "compare: {stage: no-index}\n"
                                        "explain:\n"
                                        "  knobs: [random_page_cost]\n"
                                        "  text: The planner prices index access.\n"
                                        "predict:\n"
                                        "  - id: tps\n"
                                        "    ask: How does throughput change?\n"
                                        "  - id: cause\n"
                                        "    ask: Which counter moves?\n"
                                        "    choices: [sequential scans, checkpoints]\n"
                                        "    answer: sequential scans\n"
                                        "reveal:\n"
                                        "  evidence: [seq_scans, seq_tup_read]\n"
                                        "  gap: Each lookup reads the whole table.\n"
                                        "diagnose:\n"
                                        "  - ask: How many rows per transaction?\n"
                                        "    evidence: [seq_tup_read]\n"
                                        "    answer: The whole table.\n";
  std::ofstream(dir / "answers.yaml") << "participants:\n"
                                         "  - name: Ann\n"
                                         "    answers: {tps: \"slower, about 3x\", cause: a}\n"
                                         "  - name: Bob\n"
                                         "    answers: {tps: \"no change\", cause: checkpoints}\n"
                                         // DEL, U+009B (CSI) and U+202E (right-to-left override)
                                         "  - name: \"Eve\\x7f\\u009b31m\\u202eevil\"\n"
                                         "    answers: {tps: faster}\n";
  return dir;
}

std::string section(const std::string& text, const std::string& from, const std::string& to) {
  const auto a = text.find(from);
  if (a == std::string::npos) return "";
  const auto b = text.find(to, a);
  return text.substr(a, b == std::string::npos ? std::string::npos : b - a);
}

TEST(Lesson, AnswersFileEndToEndRevealsPredictionsNextToTheMeasuredEffect) {
  const Snapshot before = snapshot();
  const fs::path dir = write_lesson_files();
  const Finished r = run_pgslow(
      args({"lesson", (dir / "lesson.yaml").string(), "--answers", (dir / "answers.yaml").string(),
            "--out", (dir / "out").string(), "--record", (dir / "record").string()}));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  for (const char* step : {"== EXPLAIN", "== PREDICT", "== RUN", "== REVEAL", "== DIAGNOSE"})
    EXPECT_NE(r.output.find(step), std::string::npos) << step << "\n" << r.output;
  // Explain shows the knob's catalog text with the live server's value.
  EXPECT_TRUE(std::regex_search(r.output, std::regex("random_page_cost: now 4 on this server")))
      << r.output;
  const std::string reveal = section(r.output, "== REVEAL", "== DIAGNOSE");
  // The measured effect with its interval and transaction counts, then each prediction.
  EXPECT_TRUE(std::regex_search(
      reveal,
      std::regex("no-index against baseline: [0-9.,]+x slower \\(95% interval .* to .*; [0-9,]+ vs "
                 "[0-9,]+ transactions\\)")))
      << reveal;
  EXPECT_TRUE(std::regex_search(reveal, std::regex("Ann +tps +slower, about 3x +right"))) << reveal;
  EXPECT_TRUE(std::regex_search(reveal, std::regex("Bob +tps +no change +wrong direction")))
      << reveal;
  EXPECT_TRUE(std::regex_search(
      reveal, std::regex("Bob +cause +checkpoints +the evidence says \"sequential scans\"")))
      << reveal;
  // A participant's control characters reach the terminal escaped, as in the reports.
  EXPECT_NE(reveal.find("Eve\\x7f\\x9b31m\\u202eevil"), std::string::npos) << reveal;
  for (const char* raw : {"\x7f", "\xc2\x9b", "\xe2\x80\xae"})
    EXPECT_EQ(r.output.find(raw), std::string::npos) << "raw control character in the output";
  EXPECT_NE(reveal.find("mean latency"), std::string::npos) << reveal;  // Little's law check
  EXPECT_NE(reveal.find("rows seq-read"), std::string::npos) << reveal;
  EXPECT_TRUE(fs::exists(dir / "out" / "report.json"));
  // The reveal is in the results folder too, with the same figure the terminal showed.
  const auto reveal_doc = nlohmann::json::parse(read_file(dir / "out" / "reveal.json"));
  EXPECT_EQ(reveal_doc.at("stage"), "no-index");
  EXPECT_NE(reveal.find(reveal_doc.at("effect").at("text").get<std::string>()), std::string::npos)
      << reveal_doc.dump(2) << "\n"
      << reveal;
  EXPECT_EQ(reveal_doc.at("predictions").size(), 5u) << reveal_doc.dump(2);
  EXPECT_TRUE(fs::exists(dir / "out" / "reveal.md"));
  // The instructor's record: the lesson with the room's calibration over the two predictions
  // that name a factor ("slower, about 3x" and "no change"; "faster" names none).
  const auto record = nlohmann::json::parse(read_file(dir / "record" / "record.json"));
  ASSERT_EQ(record.at("lessons").size(), 1u) << record.dump(2);
  EXPECT_EQ(record.at("lessons")[0].at("calibrated"), 2) << record.dump(2);
  EXPECT_GE(record.at("lessons")[0].at("calibration").get<double>(), 1.0) << record.dump(2);
  EXPECT_TRUE(fs::exists(dir / "record" / "record.md"));
  EXPECT_EQ(snapshot(), before);
}

TEST(Mystery, StartCluesGuessRevealNeverShowsTheAnswerAndRestoresByteForByte) {
  const Snapshot before = snapshot();
  constexpr std::uint64_t kSeed = 11;
  const knobs::Catalog catalog = knobs::Catalog::load_default();
  const workshop::MysteryAnswer answer = workshop::choose_mystery(2, kSeed, catalog);
  ASSERT_EQ(answer.decoys.size(), 2u);
  std::vector<std::string> secret;
  for (const auto& s : answer.culprits) secret.push_back(s.name);
  for (const auto& s : answer.decoys) secret.push_back(s.name);
  for (const auto& p : catalog.presets()) {
    if (p.name != "default") secret.push_back(p.name);
  }
  auto expect_no_secret = [&](const std::string& what, const std::string& text) {
    for (const std::string& s : secret)
      EXPECT_FALSE(mentions(text, s)) << what << " names " << s << ":\n" << text;
  };

  const Finished start =
      run_pgslow(args({"mystery", "start", "--difficulty", "2", "--seed", std::to_string(kSeed),
                       "--duration", "3", "--warmup", "1"}));
  ASSERT_EQ(start.exit_code, 0) << start.output;
  expect_no_secret("start", start.output);
  expect_no_secret("journal.json", read_file(apply::journal_path(workdir())));
  expect_no_secret("mystery.json", read_file(workshop::mystery_path(workdir())));
  const Finished status = run_pgslow(args({"status"}));
  EXPECT_EQ(status.exit_code, 0) << status.output;
  expect_no_secret("status", status.output);
  // The seed would hide the same answer again for anyone who reruns it: neither status nor the
  // warning before another command shows it.
  const Finished warned = run_pgslow(args({"knobs", "list"}));
  EXPECT_NE(warned.output.find("degraded on purpose"), std::string::npos) << warned.output;
  for (const Finished* f : {&start, &status, &warned}) {
    EXPECT_FALSE(std::regex_search(f->output, std::regex("--seed[ =]+" + std::to_string(kSeed))))
        << f->output;
  }
  EXPECT_NE(status.output.find("--seed '[hidden]'"), std::string::npos) << status.output;

  const Finished clues = run_pgslow(args({"mystery", "clues"}));
  ASSERT_EQ(clues.exit_code, 0) << clues.output;
  EXPECT_NE(clues.output.find("throughput:"), std::string::npos) << clues.output;
  EXPECT_NE(clues.output.find("What moved most"), std::string::npos) << clues.output;
  EXPECT_NE(clues.output.find("do no harm"), std::string::npos)
      << clues.output;  // decoys from difficulty 2
  expect_no_secret("clues", clues.output);
  // Every format of the clues passes through the same redaction; the JSON stays JSON.
  const Finished clues_md = run_pgslow(args({"mystery", "clues", "--format", "md"}));
  ASSERT_EQ(clues_md.exit_code, 0) << clues_md.output;
  EXPECT_NE(clues_md.output.find("## What moved most"), std::string::npos) << clues_md.output;
  expect_no_secret("clues as Markdown", clues_md.output);
  const Finished clues_json = run_pgslow(args({"mystery", "clues", "--format", "json"}));
  ASSERT_EQ(clues_json.exit_code, 0) << clues_json.output;
  expect_no_secret("clues as JSON", clues_json.output);
  const auto clue_doc = nlohmann::json::parse(clues_json.output);
  EXPECT_EQ(clue_doc.at("difficulty"), 2);
  EXPECT_TRUE(clue_doc.at("decoys").get<bool>());
  EXPECT_TRUE(clue_doc.at("effect").at("known").get<bool>());

  std::string wrong = "work_mem";
  for (const std::string candidate : {"work_mem", "jit", "bgwriter_delay"}) {
    if (std::find(secret.begin(), secret.end(), candidate) == secret.end()) {
      wrong = candidate;
      break;
    }
  }
  const Finished miss = run_pgslow(args({"mystery", "guess", wrong}));
  EXPECT_EQ(miss.exit_code, 0) << miss.output;
  EXPECT_NE(miss.output.find("NOT IT"), std::string::npos) << miss.output;
  // Every knob pgslow knows names the cause too, among dozens of wrong ones: not solved.
  std::vector<std::string> shotgun = {"mystery", "guess"};
  for (const std::string& k : catalog.knob_names()) shotgun.push_back(k);
  const Finished broad = run_pgslow(args(shotgun));
  EXPECT_EQ(broad.exit_code, 0) << broad.output;
  EXPECT_NE(broad.output.find("TOO BROAD"), std::string::npos) << broad.output;
  EXPECT_EQ(broad.output.find("SOLVED"), std::string::npos) << broad.output;
  std::vector<std::string> right = {"mystery", "guess"};
  right.insert(right.end(), answer.key.begin(), answer.key.end());
  const Finished hit = run_pgslow(args(right));
  EXPECT_NE(hit.output.find("SOLVED"), std::string::npos) << hit.output;

  const Finished reveal = run_pgslow(args({"mystery", "reveal"}));
  ASSERT_EQ(reveal.exit_code, 0) << reveal.output;
  EXPECT_NE(reveal.output.find("THE ANSWER: " + answer.label), std::string::npos) << reveal.output;
  for (const auto& s : answer.decoys) EXPECT_TRUE(mentions(reveal.output, s.name)) << reveal.output;
  EXPECT_NE(reveal.output.find("3 guesses, solved"), std::string::npos) << reveal.output;
  EXPECT_FALSE(fs::exists(apply::journal_path(workdir())));
  EXPECT_FALSE(fs::exists(workshop::mystery_path(workdir())));
  EXPECT_EQ(snapshot(), before);
}

// Two planted causes (index scans off and a 10 ms commit delay). Three fixes, scored by the share
// of the lost performance each recovers, in a DBA's order: the right one, the same with
// needless knobs (a shotgun: as good, more knobs), then the partial one (the commit delay
// alone). A fix the server refuses is reported, not run. Each fix is measured against the
// broken and the healthy server in its own command, through the lab's seam.
TEST(Mystery, FixesAreScoredInTheOrderADbaWouldRankThem) {
  const Snapshot before = snapshot();
  const knobs::Catalog catalog = knobs::Catalog::load_default();
  std::uint64_t seed = 0;
  for (std::uint64_t s = 1; s < 500 && seed == 0; ++s) {
    const workshop::MysteryAnswer a = workshop::choose_mystery(3, s, catalog);
    auto has = [&](const char* k) {
      return std::any_of(a.culprits.begin(), a.culprits.end(),
                         [&](const knobs::Setting& c) { return c.name == k; });
    };
    if (has("enable_indexscan") && has("commit_delay")) seed = s;
  }
  ASSERT_NE(seed, 0u) << "no seed plants index scans off with a commit delay";
  // Four one-second samples per run: the fewest that give a run its own interval.
  const std::vector<std::string> timing = {"--duration", "4", "--warmup", "0.5"};
  auto with_timing = [&](std::vector<std::string> a) {
    a.insert(a.end(), timing.begin(), timing.end());
    return args(a);
  };
  const Finished start = run_pgslow(
      with_timing({"mystery", "start", "--difficulty", "3", "--seed", std::to_string(seed)}));
  ASSERT_EQ(start.exit_code, 0) << start.output;

  // tpcb-like looks rows up by key: index scans back on and no commit delay is all of the cure
  // (bitmap scans play no part).
  const std::vector<std::string> right = {"enable_indexscan=on", "commit_delay=0"};
  std::vector<std::string> shotgun = right;
  shotgun.push_back("jit=off");
  auto fix = [&](const std::string& who, const std::vector<std::string>& changes) {
    std::vector<std::string> a = {"mystery", "fix", "--name", who};
    a.insert(a.end(), changes.begin(), changes.end());
    return run_pgslow(with_timing(a));
  };
  const Finished partial_fix = fix("partial", {"commit_delay=0"});
  ASSERT_EQ(partial_fix.exit_code, 0) << partial_fix.output;
  const Finished right_fix = fix("right", right);
  ASSERT_EQ(right_fix.exit_code, 0) << right_fix.output;
  EXPECT_NE(right_fix.output.find("SCOREBOARD"), std::string::npos) << right_fix.output;
  const Finished shotgun_fix = fix("shotgun", shotgun);
  ASSERT_EQ(shotgun_fix.exit_code, 0) << shotgun_fix.output;
  // Each of its changes was also left out once (which of them did nothing is the unit tests'
  // to check on a simulated server: runs of four seconds here drift by tens of percent).
  EXPECT_NE(shotgun_fix.output.find("the fix against the fix without it"), std::string::npos)
      << shotgun_fix.output;
  // Refused by the server: reported, not run, no measurement.
  const Finished refused = fix("refused", {"random_page_cost=-1"});
  ASSERT_EQ(refused.exit_code, 0) << refused.output;
  EXPECT_NE(refused.output.find("refused, not run: random_page_cost=-1"), std::string::npos)
      << refused.output;

  const Finished board = run_pgslow(args({"mystery", "scoreboard", "--format", "json"}));
  ASSERT_EQ(board.exit_code, 0) << board.output;
  const json fixes = json::parse(board.output).at("fixes");
  ASSERT_EQ(fixes.size(), 4u) << board.output;
  std::vector<std::string> order;
  for (const json& f : fixes) order.push_back(f.at("who").get<std::string>());
  EXPECT_EQ(order, (std::vector<std::string>{"right", "shotgun", "partial", "refused"}))
      << board.output;
  // With intervals: the right fix recovers about all of it, the partial one clearly less.
  const json& r = fixes[0].at("recovered");
  const json& p = fixes[2].at("recovered");
  ASSERT_TRUE(r.at("known").get<bool>()) << board.output;
  EXPECT_LE(r.at("low").get<double>(), 1.0) << board.output;
  EXPECT_GE(r.at("high").get<double>(), 0.8) << board.output;
  EXPECT_LT(p.at("high").get<double>(), r.at("low").get<double>()) << board.output;
  EXPECT_EQ(fixes[1].at("changes").size(), 3u) << board.output;
  EXPECT_FALSE(fixes[3].at("ran").get<bool>()) << board.output;

  // The mystery is still applied between fixes, and the reveal puts the original back.
  EXPECT_TRUE(fs::exists(apply::journal_path(workdir())));
  const fs::path record_dir = fs::path(::testing::TempDir()) / "pgslow-fix-record";
  fs::remove_all(record_dir);
  const Finished reveal = run_pgslow(args({"mystery", "reveal", "--record", record_dir.string()}));
  ASSERT_EQ(reveal.exit_code, 0) << reveal.output;
  EXPECT_EQ(snapshot(), before);
  // The instructor's record keeps the answer and the ranked fixes.
  const json record = json::parse(read_file(record_dir / "record.json"));
  ASSERT_EQ(record.at("mysteries").size(), 1u) << record.dump(2);
  EXPECT_EQ(record.at("mysteries")[0].at("fixes").at("fixes")[0].at("who"), "right")
      << record.dump(2);
  fs::remove_all(record_dir);
}

TEST(Mystery, KilledDuringStartIsRecoveredFromTheSealedJournal) {
  const Snapshot before = snapshot();
  PgslowProcess p(args({"mystery", "start", "--difficulty", "3", "--seed", "5", "--duration", "20",
                        "--warmup", "1"}));
  // The kill lands once the journal records the hidden settings (the mystery stage is being
  // applied or measured), not during the baseline.
  const auto deadline = std::chrono::steady_clock::now() + 120s;
  auto degraded = [] {
    try {
      std::optional<apply::Journal> j = apply::load_journal(workdir());
      return j && !j->settings.empty();
    } catch (const std::exception&) {
      return false;  // caught while being replaced
    }
  };
  while (!degraded() && !p.exited()) {
    ASSERT_LT(std::chrono::steady_clock::now(), deadline) << p.output();
    std::this_thread::sleep_for(20ms);
  }
  ASSERT_FALSE(p.exited()) << p.output();
  p.signal(SIGKILL);
  p.wait();
  ASSERT_TRUE(fs::exists(apply::journal_path(workdir())));
  EXPECT_TRUE(apply::load_journal(workdir())->hidden);
  const Finished r = run_pgslow(args({"recover"}));
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("recovered"), std::string::npos) << r.output;
  EXPECT_FALSE(fs::exists(apply::journal_path(workdir())));
  EXPECT_EQ(snapshot(), before);
}

// ---- the dashboard in headless Chromium ------------------------------------------------

std::string find_chromium() {
  for (const char* name : {"chromium", "chromium-browser", "google-chrome"}) {
    for (const char* dir : {"/usr/bin", "/usr/local/bin", "/snap/bin"}) {
      const fs::path p = fs::path(dir) / name;
      if (fs::exists(p)) return p.string();
    }
  }
  return "";
}

std::string run_command(const std::string& command) {
  std::string out;
  FILE* pipe = ::popen((command + " 2>/dev/null").c_str(), "r");
  if (pipe == nullptr) return out;
  std::array<char, 4096> buf{};
  std::size_t n = 0;
  while ((n = std::fread(buf.data(), 1, buf.size(), pipe)) > 0) out.append(buf.data(), n);
  ::pclose(pipe);
  return out;
}

class Browser {
 public:
  explicit Browser(std::string chromium) : chromium_(std::move(chromium)) {}
  std::string command(const std::string& what) const {
    return chromium_ +
           " --headless --no-sandbox --disable-gpu --disable-background-networking "
           "--disable-component-update --disable-sync --no-first-run --window-size=1200,900 "
           "--virtual-time-budget=3000 --user-data-dir=" +
           (workdir() / "chrome").string() + " " + what;
  }
  std::string dom(const std::string& url) const {
    return run_command(command("--dump-dom '" + url + "'"));
  }
  std::string screenshot(const std::string& url, const fs::path& file) const {
    run_command(command("--screenshot=" + file.string() + " '" + url + "'"));
    return read_file(file);
  }

 private:
  std::string chromium_;
};

json state(httplib::Client& client) {
  auto res = client.Get("/state");
  if (!res || res->status != 200) return json::object();
  return json::parse(res->body);
}

std::size_t points(httplib::Client& client) {
  json s = state(client);
  return s.contains("points") ? s["points"].size() : 0;
}

// The evidence counters are counts over the current run of a stage, like the report's
// evidence window: lock waiting accumulates (backend-seconds) while a backend of the run's
// database waits, and starts again at zero with the next run.
TEST(Dashboard, EvidenceCountersMoveDuringARunAndStartAgainWithTheNext) {
  const std::string db = "pgslow_dashboard_locks";
  {
    pg::Connection admin = pg::Connection::open(conninfo());
    admin.exec("DROP DATABASE IF EXISTS " + db + " WITH (FORCE)");
    admin.exec("CREATE DATABASE " + db);
  }
  const std::string in_db = pg::with_database(conninfo(), db);
  pg::Connection::open(in_db).exec(
      "CREATE TABLE hot (id int PRIMARY KEY); INSERT INTO hot VALUES (1)");
  workshop::Dashboard board("127.0.0.1:0", "counters");
  board.watch_server(conninfo());
  board.stage_started({"locks", {}});
  board.measuring("locks", db);
  auto evidence = [&] { return json::parse(board.state_json()); };
  auto lock_waits = [&] {
    const json s = evidence();
    const auto& ev = s["evidence"];
    return ev.contains("lock waits") ? std::stod(ev["lock waits"].get<std::string>()) : -1.0;
  };

  pg::Connection holder = pg::Connection::open(in_db, pg::SessionKind::kWorkload);
  holder.exec("BEGIN");
  holder.exec("UPDATE hot SET id = 1 WHERE id = 1");
  std::thread waiter([&] {
    pg::Connection w = pg::Connection::open(in_db, pg::SessionKind::kWorkload);
    w.exec("UPDATE hot SET id = 1 WHERE id = 1");  // blocks until the holder commits
  });
  const auto deadline = std::chrono::steady_clock::now() + 60s;
  double waited = 0;
  while ((waited = lock_waits()) < 2.0 && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(50ms);
  holder.exec("COMMIT");
  waiter.join();
  EXPECT_GE(waited, 2.0) << board.state_json();
  const json s = evidence();
  EXPECT_EQ(s["evidence_stage"], "locks");
  EXPECT_TRUE(s["evidence"].contains("autovacuum runs")) << s.dump();
  for (const auto& [key, value] : s["evidence"].items())
    EXPECT_EQ(key.find(" now"), std::string::npos) << key << ": a level, not a counter";

  // The next run (the reference measured again) counts from zero, and says so.
  board.measuring("baseline", db);
  EXPECT_EQ(lock_waits(), 0.0) << board.state_json();
  EXPECT_EQ(evidence()["evidence_stage"], "baseline");
  pg::Connection::open(conninfo()).exec("DROP DATABASE " + db + " WITH (FORCE)");
}

// Peak resident memory of a process (VmHWM), in kB; -1 when it is gone.
long peak_rss_kb(int pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/status");
  std::string line;
  while (std::getline(in, line)) {
    if (starts_with(line, "VmHWM:")) return std::stol(line.substr(6));
  }
  return -1;
}

// One request from a loopback address of its own (each attacker has its own rate bucket; the
// room member's is untouched): `head` is sent, then `body` (ignoring a refused rest), and the
// answer's status is returned (0 when the connection was cut).
int raw_request(const std::string& from, int port, const std::string& head,
                const std::string& body = "") {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in src{}, dst{};
  src.sin_family = dst.sin_family = AF_INET;
  inet_pton(AF_INET, from.c_str(), &src.sin_addr);
  dst.sin_port = htons(static_cast<std::uint16_t>(port));
  inet_pton(AF_INET, "127.0.0.1", &dst.sin_addr);
  timeval timeout{10, 0};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof timeout);
  if (::bind(fd, reinterpret_cast<sockaddr*>(&src), sizeof src) != 0 ||
      ::connect(fd, reinterpret_cast<sockaddr*>(&dst), sizeof dst) != 0) {
    ::close(fd);
    return 0;
  }
  ::send(fd, head.data(), head.size(), MSG_NOSIGNAL);
  for (std::size_t at = 0; at < body.size(); at += 16384) {
    if (::send(fd, body.data() + at, std::min<std::size_t>(16384, body.size() - at), MSG_NOSIGNAL) <
        0)
      break;
  }
  char buf[64] = {};
  const ssize_t n = ::recv(fd, buf, sizeof buf - 1, 0);
  ::close(fd);
  std::cmatch m;
  return n > 0 && std::regex_search(buf, m, std::regex("^HTTP/1\\.1 ([0-9]{3})"))
             ? std::stoi(m[1].str())
             : 0;
}

// The requests of one attacker, in turn: /state, a head claiming 1 GB, 256 KB really sent in
// chunks, a prediction that is not UTF-8, a join.
int attack(const std::string& from, int port, int i) {
  const std::string host = "Host: 127.0.0.1:" + std::to_string(port) + "\r\n";
  const std::string form = "Content-Type: application/x-www-form-urlencoded\r\n";
  switch (i % 5) {
    case 0:
      return raw_request(from, port, "GET /state HTTP/1.1\r\n" + host + "\r\n");
    case 1:
      return raw_request(
          from, port,
          "POST /predict HTTP/1.1\r\n" + host + form + "Content-Length: 1000000000\r\n\r\n");
    case 2: {
      std::string chunks;
      for (int k = 0; k < 16; ++k) chunks += "4000\r\n" + std::string(16384, 'a') + "\r\n";
      return raw_request(
          from, port,
          "POST /predict HTTP/1.1\r\n" + host + form + "Transfer-Encoding: chunked\r\n\r\n",
          chunks + "0\r\n\r\n");
    }
    case 3: {
      const std::string body = "name=%FF%FEbot&answer=%C3";
      return raw_request(from, port,
                         "POST /predict HTTP/1.1\r\n" + host + form +
                             "Content-Length: " + std::to_string(body.size()) + "\r\n\r\n",
                         body);
    }
    default:
      return raw_request(from, port,
                         "POST /join HTTP/1.1\r\n" + host + "Content-Length: 0\r\n\r\n");
  }
}

// The issue's flood, bounded: while a stage is measured, four attackers (loopback addresses of
// their own) send 400 requests (large bodies, bodies claimed and not sent, text that is not
// UTF-8, joins, polls) while a room member polls /state. The member is served throughout, the
// run completes, and pgslow's peak memory grows by little.
TEST(Dashboard, AFloodDuringAMeasuredRunLeavesThePageServingAndMemoryBounded) {
  const fs::path dir = write_lesson_files();
  PgslowProcess p(
      args({"run", (dir / "scenario.yaml").string(), "--out", (dir / "out-flood").string(),
            "--duration", "8", "--dashboard", "127.0.0.1:0"}));
  ASSERT_TRUE(p.wait_for_output("dashboard: http://127.0.0.1:", 120s)) << p.output();
  std::smatch m;
  const std::string out = p.output();
  ASSERT_TRUE(std::regex_search(out, m, std::regex("dashboard: http://127.0.0.1:([0-9]+)/")));
  const int port = std::stoi(m[1]);
  httplib::Client member("127.0.0.1", port);
  const auto deadline = std::chrono::steady_clock::now() + 120s;
  auto measuring = [&] {
    const json s = state(member);
    if (!s.contains("points")) return false;
    for (const auto& pt : s["points"])
      if (!pt.value("warmup", true)) return true;
    return false;
  };
  while (!measuring()) {
    ASSERT_LT(std::chrono::steady_clock::now(), deadline) << p.output();
    std::this_thread::sleep_for(50ms);
  }
  const long before_kb = peak_rss_kb(p.pid());
  ASSERT_GT(before_kb, 0);

  std::atomic<int> done{0};
  std::array<std::map<int, int>, 4> statuses;
  std::vector<std::thread> attackers;
  for (int a = 0; a < 4; ++a) {
    attackers.emplace_back([&, a] {
      for (int i = 0; i < 100; ++i)
        ++statuses[a][attack("127.0.0." + std::to_string(a + 2), port, i)];
      ++done;
    });
  }
  int served = 0, refused = 0;
  while (done < 4) {  // the member polls at the page's pace (a few a second)
    auto res = member.Get("/state");
    if (res && res->status == 200 && json::accept(res->body)) {
      ++served;
    } else {
      ++refused;
    }
    std::this_thread::sleep_for(200ms);
  }
  for (auto& t : attackers) t.join();
  auto res = member.Get("/state");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 200);
  EXPECT_TRUE(json::accept(res->body));
  EXPECT_EQ(refused, 0) << served << " served";

  std::map<int, int> all;
  for (const auto& s : statuses)
    for (const auto& [code, n] : s) all[code] += n;
  std::string seen;
  for (const auto& [code, n] : all) seen += fmt::format("{}: {} ", code, n);
  EXPECT_EQ(all[500], 0) << seen;
  EXPECT_GT(all[413] + all[429], 100) << seen;  // big bodies and the flood refused
  EXPECT_EQ(all[200] + all[413] + all[429] + all[400] + all[0], 400) << seen;

  // Then the issue's sustained flood of /state (it took a third of the machine), bounded to a
  // few seconds of a measured window: the report must say the machine was disturbed.
  std::vector<std::thread> flooders;
  const auto flood_end = std::chrono::steady_clock::now() + 5s;
  std::atomic<int> flooded{0};
  for (int a = 0; a < 4; ++a) {
    flooders.emplace_back([&, a] {
      const std::string from = "127.0.0." + std::to_string(a + 2);
      const std::string head =
          "GET /state HTTP/1.1\r\nHost: 127.0.0.1:" + std::to_string(port) + "\r\n\r\n";
      while (std::chrono::steady_clock::now() < flood_end && !p.exited()) {
        raw_request(from, port, head);
        ++flooded;
      }
    });
  }
  for (auto& t : flooders) t.join();
  auto after_flood = member.Get("/state");
  ASSERT_TRUE(after_flood) << flooded << " flooding requests";
  EXPECT_EQ(after_flood->status, 200);

  const long after_kb = peak_rss_kb(p.pid());
  EXPECT_LT(after_kb - before_kb, 64 * 1024)
      << "peak RSS " << before_kb << " -> " << after_kb << " kB";
  ASSERT_TRUE(p.wait_for_output("Results:", 300s)) << p.output();
  p.wait();
  EXPECT_EQ(p.exit_code(), 0) << p.output();
  const std::string report = read_file(dir / "out-flood" / "report.md");
  EXPECT_NE(report.find("the machine was disturbed"), std::string::npos)
      << flooded << " flooding requests\n"
      << report;
}

TEST(Dashboard, ChromiumSeesTheRunLiveAndTheRoomsPredictionReachesTheReveal) {
  const std::string chromium = find_chromium();
  if (chromium.empty())
    GTEST_SKIP() << "chromium is not installed (scripts/install-deps.sh installs it)";
  const Browser browser(chromium);
  const fs::path dir = write_lesson_files();
  PgslowProcess p(
      args({"lesson", (dir / "lesson.yaml").string(), "--answers", (dir / "answers.yaml").string(),
            "--out", (dir / "out-dashboard").string(), "--duration", "10", "--dashboard",
            "127.0.0.1:0", "--wait-predictions", "1", "--wait-timeout", "120", "--linger", "120"}));
  ASSERT_TRUE(p.wait_for_output("dashboard: http://127.0.0.1:", 120s)) << p.output();
  std::smatch m;
  const std::string out = p.output();
  ASSERT_TRUE(std::regex_search(out, m, std::regex("dashboard: (http://127.0.0.1:([0-9]+)/)")))
      << out;
  const std::string url = m[1];
  httplib::Client client("127.0.0.1", std::stoi(m[2]));

  // A participant enters a prediction through the page (the form, filled from the link).
  const auto deadline = std::chrono::steady_clock::now() + 120s;
  while (!state(client).value("predictions_open", false)) {
    ASSERT_LT(std::chrono::steady_clock::now(), deadline) << p.output();
    std::this_thread::sleep_for(50ms);
  }
  const std::string form = browser.dom(url + "?name=Zoe&answer=slower%2C%2050x&submit=1");
  EXPECT_NE(form.find("data-sent=\"true\""), std::string::npos) << form.substr(0, 2000);

  // Two screenshots a few seconds of the run apart differ.
  std::size_t n = 0;
  while ((n = points(client)) < 2) {
    ASSERT_LT(std::chrono::steady_clock::now(), deadline) << p.output();
    std::this_thread::sleep_for(50ms);
  }
  const std::string first = browser.screenshot(url, workdir() / "dashboard-1.png");
  while (points(client) < n + 3) {
    ASSERT_LT(std::chrono::steady_clock::now(), deadline) << p.output();
    std::this_thread::sleep_for(50ms);
  }
  const std::string second = browser.screenshot(url, workdir() / "dashboard-2.png");
  ASSERT_FALSE(first.empty());
  ASSERT_FALSE(second.empty());
  EXPECT_NE(first, second);

  // The reveal carries the page's prediction, scored against the measurement.
  ASSERT_TRUE(p.wait_for_output("Results:", 300s)) << p.output();
  const std::string reveal = section(p.output(), "== REVEAL", "== DIAGNOSE");
  EXPECT_TRUE(std::regex_search(reveal, std::regex("Zoe \\(page\\) +tps +slower, 50x +right")))
      << reveal;

  // The TPS chart holds every per-second point of the run's report, in order.
  const std::string dom = browser.dom(url);
  std::smatch s;
  ASSERT_TRUE(
      std::regex_search(dom, s, std::regex("data-series=\"tps\" data-values=\"([0-9,]*)\"")))
      << dom;
  std::vector<long> drawn;
  for (const std::string& v : split(s[1].str(), ',')) {
    if (!v.empty()) drawn.push_back(std::stol(v));
  }
  const results::Run run =
      report::read_json(read_file(dir / "out-dashboard" / "report.json"), "report.json");
  std::size_t at = 0, expected = 0;
  for (const auto& stage : run.stages) {
    for (const auto& rep : stage.repeats) {
      for (double v : rep.tps_per_second) {
        ++expected;
        while (at < drawn.size() && drawn[at] != std::lround(v)) ++at;
        EXPECT_LT(at, drawn.size()) << "the chart lacks the point " << v << " of " << stage.name;
        if (at < drawn.size()) ++at;
      }
    }
  }
  EXPECT_GE(expected, 20u);
  EXPECT_NE(dom.find("data-step=\"diagnose\""), std::string::npos);
  // The evidence counters cover the current run, and say which: the last was the reference
  // measured again after the stage.
  EXPECT_NE(dom.find("since this run of baseline began"), std::string::npos) << dom;
  EXPECT_NE(dom.find("backend-s"), std::string::npos) << dom;
  p.signal(SIGKILL);  // lingering: the configuration was restored before "Results:"
  p.wait();
}

}  // namespace
}  // namespace pgslow::testing
