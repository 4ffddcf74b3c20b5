// Workshop mode on a real server, through the built pgslow binary, where the effects are large
// enough to hold beside other tests: a lesson scripted with an answers file (with the
// instructor's record), a room of two laptops sending their results to the instructor's
// dashboard, a mystery from start to reveal (the configuration back byte for byte, the answer
// never on a participant's screen), and a mystery killed -9 and recovered.

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <signal.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <regex>
#include <thread>

#include "apply/journal.h"
#include "common/paths.h"
#include "common/strings.h"
#include "knobs/catalog.h"
#include "tests/integration/workshop/workshop_support.h"
#include "tests/support/pgslow_process.h"
#include "workshop/dashboard.h"
#include "workshop/mystery.h"

namespace pgslow::testing {
namespace {

using namespace std::chrono_literals;
using json = nlohmann::json;

// Three (stage, baseline) pairs: a lesson measured once each rests on two degrees of freedom,
// and on a machine this busy even its 100x can then read "within noise" (the reveal says why).
TEST(Lesson, AnswersFileEndToEndRevealsPredictionsNextToTheMeasuredEffect) {
  const Snapshot before = snapshot();
  const fs::path dir = write_lesson_files();
  const Finished r = run_pgslow(args(
      {"lesson", (dir / "lesson.yaml").string(), "--answers", (dir / "answers.yaml").string(),
       "--out", (dir / "out").string(), "--record", (dir / "record").string(), "--repeats", "3"}));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  for (const char* step : {"== EXPLAIN", "== PREDICT", "== RUN", "== REVEAL", "== DIAGNOSE"})
    EXPECT_NE(r.output.find(step), std::string::npos) << step << "\n" << r.output;
  // Explain shows the knob's catalog text with the live server's value.
  EXPECT_TRUE(std::regex_search(r.output, std::regex("random_page_cost: now 4 on this server")))
      << r.output;
  const std::string reveal = section(r.output, "== REVEAL", "== DIAGNOSE");
  // The measured effect with its interval (at the level Holm's rule over the axes stated it:
  // 95% or above), its transaction counts, then each prediction.
  EXPECT_TRUE(std::regex_search(
      reveal, std::regex("no-index against baseline: [0-9.,]+x slower \\((9[5-9](\\.[0-9])?)% "
                         "interval .* to .*; [0-9,]+ vs [0-9,]+ transactions\\)")))
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

// A cliff lesson (the shipped cliff-sort: work_mem on a sort-heavy script) scripted with an
// answers file: the search runs live, the dashboard draws each point and every guess of the
// first question as a marker (checked in headless Chromium), and the reveal scores each guess by
// its distance from the cliff the search found, on the log scale.
TEST(CliffLesson, GuessesAreScoredByTheirDistanceAndChromiumDrawsTheCurveWithThem) {
  const Snapshot before = snapshot();
  const fs::path dir = workdir() / "cliff-lesson-test";
  fs::create_directories(dir);
  std::ofstream(dir / "answers.yaml") << "participants:\n"
                                         "  - name: Ann\n"
                                         "    answers: {knee: 1.5MB, evidence: b}\n"
                                         "  - name: Bo\n"
                                         "    answers: {knee: 32MB}\n"
                                         "  - name: Cy\n"
                                         "    answers: {knee: 96kB}\n"
                                         "  - name: Di\n"
                                         "    answers: {knee: lots}\n";
  PgslowProcess p(
      args({"lesson", "cliff-sort", "--answers", (dir / "answers.yaml").string(), "--out",
            (dir / "out").string(), "--record", (dir / "record").string(), "--duration", "1",
            "--warmup", "0.5", "--dashboard", "127.0.0.1:0", "--linger", "120"}));
  ASSERT_TRUE(p.wait_for_output("Results:", 600s)) << p.output();
  const std::string out = p.output();
  for (const char* step : {"== EXPLAIN", "== PREDICT", "== RUN", "== REVEAL", "== DIAGNOSE"})
    EXPECT_NE(out.find(step), std::string::npos) << step << "\n" << out;
  EXPECT_NE(out.find("(a value of work_mem between 64MB and 64kB"), std::string::npos) << out;
  EXPECT_NE(out.find("point  1  64kB"), std::string::npos) << out;  // the far end first
  EXPECT_EQ(snapshot(), before);  // the search restored before the reveal

  // Each guess of the knee against the cliff in reveal.json: inside it is right (1x), outside
  // it is off by the factor to the nearer end.
  const json reveal = json::parse(read_file(dir / "out" / "reveal.json"));
  const json& cliff = reveal.at("cliff");
  ASSERT_EQ(cliff.at("knob"), "work_mem") << reveal.dump(2);
  std::map<std::string, double> value_of;  // kB
  for (const json& pt : cliff.at("points"))
    value_of[pt.at("value").get<std::string>()] = pt.at("base_value").get<double>();
  value_of[cliff.at("from").get<std::string>()] = 65536;
  const std::string outcome = cliff.at("outcome").get<std::string>();
  ASSERT_NE(outcome, "not_measured") << reveal.dump(2);
  std::map<std::string, json> row;
  for (const json& r : reveal.at("predictions"))
    row[r.at("participant").get<std::string>() + "/" + r.at("question").get<std::string>()] = r;
  ASSERT_EQ(row.size(), 5u) << reveal.dump(2);
  EXPECT_EQ(row["Ann/evidence"].at("verdict"), "right") << reveal.dump(2);
  EXPECT_NE(row["Di/knee"].at("verdict").get<std::string>().find("not a value of work_mem"),
            std::string::npos)
      << reveal.dump(2);
  EXPECT_FALSE(row["Di/knee"].contains("off_by")) << reveal.dump(2);
  if (outcome != "no_cliff") {
    const double safe = cliff.at("last_safe").is_null()
                            ? 65536.0  // the first step was already harmful: 64MB is the last safe
                            : value_of.at(cliff.at("last_safe").get<std::string>());
    const double harmful = value_of.at(cliff.at("first_harmful").get<std::string>());
    auto expected = [&](double guess) {
      const double lo = std::min(safe, harmful), hi = std::max(safe, harmful);
      return guess > hi ? guess / hi : guess < lo ? lo / guess : 1.0;
    };
    for (const auto& [who, kb] : {std::pair{"Ann", 1536.0}, {"Bo", 32768.0}, {"Cy", 96.0}})
      EXPECT_NEAR(row[std::string(who) + "/knee"].at("off_by").get<double>(), expected(kb), 1e-6)
          << who << "\n"
          << reveal.dump(2);
    // The knee's evidence: the lesson's keys at the last safe value against the first harmful.
    EXPECT_NE(reveal.at("harmful").get<std::string>().find("first harmful"), std::string::npos);
    EXPECT_FALSE(reveal.at("evidence").empty()) << reveal.dump(2);
  }
  // The instructor's record: the guesses' distances are the lesson's calibration.
  const json record = json::parse(read_file(dir / "record" / "record.json"));
  ASSERT_EQ(record.at("lessons").size(), 1u) << record.dump(2);
  EXPECT_EQ(record.at("lessons")[0].at("calibrated"), 3) << record.dump(2);

  // The dashboard, still up (--linger): its curve holds every point, its markers every guess
  // of the knee that is a value (Di's is not).
  const std::string chromium = find_chromium();
  if (chromium.empty()) {
    p.signal(SIGKILL);
    p.wait();
    GTEST_SKIP() << "chromium is not installed (scripts/install-deps.sh installs it)";
  }
  std::smatch m;
  ASSERT_TRUE(std::regex_search(out, m, std::regex("dashboard: (http://127.0.0.1:[0-9]+/)")))
      << out;
  const std::string dom = Browser(chromium).dom(m[1].str());
  EXPECT_TRUE(
      std::regex_search(dom, std::regex(fmt::format("id=\"cliff\"[^>]*data-cliff-points=\"{}\"",
                                                    cliff.at("points").size()))))
      << dom.substr(0, 4000);
  EXPECT_NE(dom.find("data-guesses=\"3\""), std::string::npos) << dom.substr(0, 4000);
  for (const char* who : {"Ann", "Bo", "Cy"})
    EXPECT_NE(dom.find(fmt::format("data-guess=\"{}\"", who)), std::string::npos) << who;
  EXPECT_EQ(dom.find("data-guess=\"Di\""), std::string::npos);
  for (const json& pt : cliff.at("points"))
    EXPECT_NE(dom.find(fmt::format("data-value=\"{}\" data-verdict=\"{}\"",
                                   pt.at("value").get<std::string>(),
                                   pt.at("verdict").get<std::string>())),
              std::string::npos)
        << pt.dump() << "\n"
        << dom.substr(0, 4000);
  // The knee as a band, between the values the reveal names.
  if (outcome != "no_cliff") {
    const std::string safe = cliff.at("last_safe").is_null()
                                 ? cliff.at("from").get<std::string>()
                                 : cliff.at("last_safe").get<std::string>();
    EXPECT_NE(dom.find(fmt::format("data-knee=\"{} to {}\"", safe,
                                   cliff.at("first_harmful").get<std::string>())),
              std::string::npos)
        << dom.substr(0, 4000);
  }
  p.signal(SIGKILL);  // lingering: the configuration was restored before "Results:"
  p.wait();
}

// A room of laptops on one machine: two pgslow processes each run the lesson and send their
// result to the instructor's dashboard, which shows both side by side with whether their
// intervals agree. (A forged result without a token: tests/unit/workshop/dashboard_test.cpp.)

TEST(Room, TwoLaptopsResultsAppearSideBySideOnTheInstructorsPage) {
  const Snapshot before = snapshot();
  const fs::path dir = write_lesson_files();
  workshop::Dashboard instructor("127.0.0.1:0", "the room");
  const std::string url = fmt::format("http://127.0.0.1:{}", instructor.port());
  const Finished nameless =
      run_pgslow(args({"lesson", (dir / "lesson.yaml").string(), "--room", url}));
  EXPECT_EQ(nameless.exit_code, 2) << nameless.output;
  EXPECT_NE(nameless.output.find("--room needs --name"), std::string::npos) << nameless.output;
  // A room nobody answers at is found out before the lesson measures anything.
  const Finished nobody = run_pgslow(args(
      {"lesson", (dir / "lesson.yaml").string(), "--room", "http://127.0.0.1:1", "--name", "x"}));
  EXPECT_EQ(nobody.exit_code, 2) << nobody.output;
  EXPECT_NE(nobody.output.find("no dashboard answers there"), std::string::npos) << nobody.output;
  for (const std::string name : {"laptop-1", "laptop-2"}) {
    const Finished r =
        run_pgslow(args({"lesson", (dir / "lesson.yaml").string(), "--answers",
                         (dir / "answers.yaml").string(), "--out", (dir / ("out-" + name)).string(),
                         "--duration", "2", "--warmup", "0.5", "--room", url, "--name", name}));
    ASSERT_EQ(r.exit_code, 0) << r.output;
    EXPECT_NE(r.output.find("Sent to the room at " + url), std::string::npos) << r.output;
  }
  const std::vector<workshop::RoomResult> results = instructor.room_results();
  ASSERT_EQ(results.size(), 2u);
  for (std::size_t i = 0; i < results.size(); ++i) {
    EXPECT_EQ(results[i].name, fmt::format("laptop-{}", i + 1));
    EXPECT_EQ(results[i].lesson, "test");
    EXPECT_EQ(results[i].stage, "no-index");
    EXPECT_GT(results[i].ratio, 0);
    EXPECT_LT(results[i].ratio, 0.5) << results[i].text;  // index access priced out: slower
    EXPECT_FALSE(results[i].machine.empty());
  }
  const json state = json::parse(instructor.state_json());
  EXPECT_EQ(state.at("room_results").size(), 2u) << state.dump(2);
  EXPECT_TRUE(state.at("room_agree").contains("test")) << state.dump(2);
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

}  // namespace
}  // namespace pgslow::testing
