#pragma once
// What the workshop's integration tests share: the managed cluster's workdir, pgslow's
// arguments for it, a snapshot of the configuration ("restored byte for byte"), and a small
// lesson around a big, reload-only degradation, and headless Chromium to look at the dashboard.

#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <string>
#include <vector>

#include "apply/bytes.h"
#include "common/paths.h"
#include "pg/connection.h"
#include "tests/support/cluster_fixture.h"

namespace pgslow::testing {

namespace fs = std::filesystem;

inline fs::path workdir() {
  return cluster().cluster_dir().parent_path();
}

inline std::vector<std::string> args(std::vector<std::string> rest) {
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

inline Snapshot snapshot() {
  Snapshot s;
  s.sha256 = apply::sha256_hex(read_file(*cluster().data_dir() / "postgresql.auto.conf"));
  pg::Connection conn = pg::Connection::open(conninfo());
  pg::Result r = conn.exec("SELECT name, setting FROM pg_settings");
  for (int i = 0; i < r.rows(); ++i)
    s.settings[std::string(r.get(i, 0))] = std::string(r.get(i, 1));
  return s;
}

// Whole-word occurrence (knob names are words of [A-Za-z0-9_], preset names also take '-').
inline bool mentions(const std::string& text, const std::string& word) {
  const std::regex re("(^|[^A-Za-z0-9_-])" + std::regex_replace(word, std::regex("[-]"), "\\-") +
                          "($|[^A-Za-z0-9_-])",
                      std::regex::icase);
  return std::regex_search(text, re);
}

// A small lesson around a reload-only degradation with a big effect (index access priced out).
inline fs::path write_lesson_files() {
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

inline std::string section(const std::string& text, const std::string& from,
                           const std::string& to) {
  const auto a = text.find(from);
  if (a == std::string::npos) return "";
  const auto b = text.find(to, a);
  return text.substr(a, b == std::string::npos ? std::string::npos : b - a);
}

// ---- the dashboard in headless Chromium ------------------------------------------------

inline std::string find_chromium() {
  for (const char* name : {"chromium", "chromium-browser", "google-chrome"}) {
    for (const char* dir : {"/usr/bin", "/usr/local/bin", "/snap/bin"}) {
      const fs::path p = fs::path(dir) / name;
      if (fs::exists(p)) return p.string();
    }
  }
  return "";
}

inline std::string run_command(const std::string& command) {
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

}  // namespace pgslow::testing
