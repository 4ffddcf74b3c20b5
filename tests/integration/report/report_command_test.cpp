// `pgslow report` and `pgslow compare` from a saved report.json, and the HTML report opened in
// headless Chromium (the charts must render from the inline script, offline).

#include <gtest/gtest.h>

#include <array>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>

#include "report/json.h"
#include "tests/unit/report/sample_run.h"

namespace pgslow::report {
namespace {

namespace fs = std::filesystem;

struct Output {
  int status = -1;
  std::string text;  // stdout and stderr
};

Output run_command(const std::string& command) {
  Output out;
  FILE* pipe = ::popen((command + " 2>&1").c_str(), "r");
  if (pipe == nullptr) return out;
  std::array<char, 4096> buf{};
  std::size_t n = 0;
  while ((n = std::fread(buf.data(), 1, buf.size(), pipe)) > 0) out.text.append(buf.data(), n);
  const int status = ::pclose(pipe);
  out.status = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return out;
}

std::string read_all(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

class ReportCommandTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("pgslow-report-test-" + std::to_string(::getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::create_directories(dir_);
    json_ = dir_ / "run.json";
    std::ofstream(json_) << to_json(testing::sample_run());
  }
  void TearDown() override { fs::remove_all(dir_); }

  // The console's goldens are 100 columns wide, whatever terminal runs the test.
  std::string pgslow(const std::string& args) {
    return "COLUMNS=100 " + std::string(PGSLOW_BINARY) + " --workdir " + (dir_ / "work").string() +
           " " + args;
  }

  // The sample run as report.html in the test's folder; empty (and a failure) when it failed.
  fs::path report_html() {
    const fs::path html = dir_ / "report.html";
    const Output r =
        run_command(pgslow("report " + json_.string() + " --format html --out " + html.string()));
    EXPECT_EQ(r.status, 0) << r.text;
    return r.status == 0 ? html : fs::path();
  }

  fs::path dir_;
  fs::path json_;
};

TEST_F(ReportCommandTest, RerendersEveryFormatFromJson) {
  const fs::path golden = fs::path(PGSLOW_SOURCE_DIR) / "tests/unit/report/golden";
  for (const auto& [format, file] :
       std::vector<std::pair<std::string, std::string>>{{"md", "sample.md"},
                                                        {"csv", "sample.csv"},
                                                        {"json", "sample.json"},
                                                        {"console", "sample.txt"}}) {
    const fs::path out = dir_ / ("out." + format);
    const Output r = run_command(
        pgslow("report " + json_.string() + " --format " + format + " --out " + out.string()));
    ASSERT_EQ(r.status, 0) << r.text;
    EXPECT_EQ(read_all(out), read_all(golden / file)) << format;
  }
}

TEST_F(ReportCommandTest, BadInputIsExitTwoWithTheReason) {
  Output r = run_command(pgslow("report " + json_.string() + " --format pdf"));
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.text.find("unknown format"), std::string::npos) << r.text;
  r = run_command(pgslow("report " + (dir_ / "missing.json").string()));
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.text.find("no such file"), std::string::npos) << r.text;
  std::ofstream(dir_ / "bad.json") << R"({"schema": "pgslow-report", "stages": [{"repeats": 3}]})";
  r = run_command(pgslow("report " + (dir_ / "bad.json").string()));
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.text.find("stages[0].repeats: expected an array"), std::string::npos) << r.text;
}

TEST_F(ReportCommandTest, CompareShowsBothRunsAndTheDifference) {
  results::Run other = testing::sample_run();
  other.server_version = "PostgreSQL 17.2";
  other.stages[1].repeats = {testing::measurement(2104, 60, 15)};
  std::ofstream(dir_ / "b.json") << to_json(other);
  const Output r =
      run_command(pgslow("compare " + json_.string() + " " + (dir_ / "b.json").string()));
  ASSERT_EQ(r.status, 0) << r.text;
  EXPECT_NE(r.text.find("PostgreSQL 17.2"), std::string::npos) << r.text;
  EXPECT_TRUE(std::regex_search(
      r.text, std::regex("tiny-cache +1,052 \\(1,010-1,090\\) +2,104 +2.0x faster")))
      << r.text;
}

// The first chromium on PATH, or empty.
std::string find_chromium() {
  for (const char* name : {"chromium", "chromium-browser", "google-chrome"}) {
    const Output r = run_command(std::string("command -v ") + name);
    if (r.status == 0 && !r.text.empty()) return r.text.substr(0, r.text.find('\n'));
  }
  return "";
}

// Headless Chromium in a window of 1280 x 900 pixels, on `html`, doing `what` (--dump-dom: the
// page as it is after its scripts ran; --screenshot=FILE).
Output chromium_on(const std::string& chromium, const fs::path& html, const fs::path& profile,
                   const std::string& what) {
  return run_command(chromium +
                     " --headless --no-sandbox --disable-gpu --disable-background-networking "
                     "--disable-component-update --disable-sync --no-first-run "
                     "--window-size=1280,900 --user-data-dir=" +
                     profile.string() + " " + what + " file://" + html.string());
}

Output dump_dom(const std::string& chromium, const fs::path& html, const fs::path& profile) {
  return chromium_on(chromium, html, profile, "--dump-dom");
}

// The number in the attribute `name`="N" of `attributes`, or -1.
long attribute_number(const std::string& attributes, const std::string& name) {
  std::smatch m;
  if (!std::regex_search(attributes, m, std::regex(name + "=\"([0-9]+)\""))) return -1;
  return std::stol(m[1]);
}

// The attributes of the page's <body> in the DOM Chromium dumped: the chart script marks there
// what it drew. Empty when the dump has no attributed body.
std::string body_attributes(const std::string& dom) {
  std::smatch m;
  if (!std::regex_search(dom, m, std::regex("<body([^>]*)>"))) return "";
  return m[1];
}

TEST_F(ReportCommandTest, HtmlChartsRenderInHeadlessChromium) {
  const std::string chromium = find_chromium();
  if (chromium.empty()) {
    GTEST_SKIP() << "chromium is not installed (apt-get install chromium): HTML check skipped";
  }
  const fs::path html = report_html();
  ASSERT_FALSE(html.empty());
  const std::string page = read_all(html);
  // Self-contained: nothing is fetched from elsewhere.
  EXPECT_EQ(page.find("http://"), page.find("http://www.w3.org/2000/svg"));
  EXPECT_EQ(page.find("https://"), std::string::npos);
  EXPECT_EQ(page.find("<script src"), std::string::npos);

  const Output dom = dump_dom(chromium, html, dir_ / "chrome");
  ASSERT_EQ(dom.status, 0) << dom.text;
  const std::string body = body_attributes(dom.text);
  ASSERT_FALSE(body.empty()) << dom.text;
  EXPECT_NE(body.find("data-rendered=\"true\""), std::string::npos) << body;
  // Four stages ran (one failed): four bars, four per-second series; the 35,000x span starts
  // on the log scale.
  EXPECT_NE(body.find("data-bars=\"4\""), std::string::npos) << body;
  EXPECT_NE(body.find("data-lines=\"4\""), std::string::npos) << body;
  EXPECT_NE(body.find("data-scale=\"log\""), std::string::npos) << body;
  std::size_t rects = 0;
  for (auto pos = dom.text.find("class=\"bar\""); pos != std::string::npos;
       pos = dom.text.find("class=\"bar\"", pos + 1)) {
    ++rects;
  }
  EXPECT_EQ(rects, 4u);
}

// The stage table at a glance in a browser: at 1280 pixels it fits the window, no horizontal
// scrolling, as the page draws it and as a screenshot shows it.
TEST_F(ReportCommandTest, HtmlStageTableFitsA1280PixelWindow) {
  const std::string chromium = find_chromium();
  if (chromium.empty()) {
    GTEST_SKIP() << "chromium is not installed (apt-get install chromium): HTML check skipped";
  }
  const fs::path html = report_html();
  ASSERT_FALSE(html.empty());
  const Output dom = dump_dom(chromium, html, dir_ / "chrome");
  ASSERT_EQ(dom.status, 0) << dom.text;
  const std::string body = body_attributes(dom.text);
  const long window = attribute_number(body, "data-window-width");
  ASSERT_EQ(window, 1280) << body;
  EXPECT_LE(attribute_number(body, "data-stages-width"), window) << body;
  EXPECT_LE(attribute_number(body, "data-page-width"), window) << body;
  const fs::path png = dir_ / "stages.png";
  const Output shot = chromium_on(chromium, html, dir_ / "chrome", "--screenshot=" + png.string());
  ASSERT_EQ(shot.status, 0) << shot.text;
  // A PNG's width is the big-endian number at bytes 16-19 (the IHDR chunk).
  const std::string bytes = read_all(png);
  ASSERT_GT(bytes.size(), 24u);
  EXPECT_EQ(bytes.substr(1, 3), "PNG");
  const auto byte = [&](std::size_t i) { return static_cast<unsigned char>(bytes[i]); };
  EXPECT_EQ((byte(16) << 24) | (byte(17) << 16) | (byte(18) << 8) | byte(19), 1280);
}

// `pgslow report` of a saved run respects the terminal's width (COLUMNS).
TEST_F(ReportCommandTest, TheConsoleReportFitsEightyColumns) {
  const Output r = run_command("COLUMNS=80 " + std::string(PGSLOW_BINARY) + " --workdir " +
                               (dir_ / "work").string() + " report " + json_.string());
  ASSERT_EQ(r.status, 0) << r.text;
  std::istringstream in(r.text);
  std::string line;
  while (std::getline(in, line)) {
    std::size_t columns = 0;
    for (unsigned char c : line) columns += (c & 0xC0) != 0x80 ? 1 : 0;
    EXPECT_LE(columns, 80u) << line;
  }
  EXPECT_NE(r.text.find("tiny-cache"), std::string::npos) << r.text;
}

// Names and descriptions come from files anyone may write. Whatever they hold, every format
// shows them as text: the HTML still draws its charts, no CSV cell is a formula, report.md
// renders them literally, and no escape sequence reaches the terminal.
TEST_F(ReportCommandTest, HostileNamesAreInertInEveryFormat) {
  results::Run run = testing::sample_run();
  run.scenario = "x</script><script>alert(1)</script>";
  run.description = "| <b>bold</b> [link](javascript:alert(1)) \x1b]0;title\x07";
  run.stages[1].name = "<!--<script>";
  run.stages[2].name = "=HYPERLINK(\"http://evil\",\"x\")";
  run.stages[3].name = "\x1b[31mred\x1b[0m\xe2\x80\xa8|pipe";
  run.stages[4].name = "@SUM(1+1)";
  std::ofstream(dir_ / "hostile.json") << to_json(run);
  auto render = [&](const std::string& format) {
    const fs::path out = dir_ / ("hostile." + format);
    const Output r = run_command(pgslow("report " + (dir_ / "hostile.json").string() +
                                        " --format " + format + " --out " + out.string()));
    EXPECT_EQ(r.status, 0) << r.text;
    return read_all(out);
  };

  const std::string csv = render("csv");
  EXPECT_NE(csv.find("\"'=HYPERLINK("), std::string::npos) << csv;
  EXPECT_NE(csv.find("'@SUM(1+1)"), std::string::npos) << csv;
  for (const std::string& line : {std::string("\n="), std::string("\n@"), std::string("\n+"),
                                  std::string(",="), std::string(",@"), std::string(",+")})
    EXPECT_EQ(csv.find(line), std::string::npos) << line << " in\n" << csv;
  EXPECT_EQ(csv.find('\x1b'), std::string::npos) << csv;

  const std::string md = render("md");
  EXPECT_EQ(md.find("<b>"), std::string::npos) << md;
  EXPECT_EQ(md.find("<!--"), std::string::npos) << md;
  EXPECT_EQ(md.find("<script"), std::string::npos) << md;
  EXPECT_NE(md.find("&lt;b&gt;bold&lt;/b&gt;"), std::string::npos) << md;
  EXPECT_NE(md.find("\\|pipe"), std::string::npos) << md;
  EXPECT_EQ(md.find('\x1b'), std::string::npos) << md;

  const std::string console = render("console");
  EXPECT_EQ(console.find('\x1b'), std::string::npos) << console;
  EXPECT_EQ(console.find('\x07'), std::string::npos) << console;
  EXPECT_NE(console.find("\\x1b[31mred"), std::string::npos) << console;

  const std::string html = render("html");
  EXPECT_EQ(html.find("<!--<script>"), std::string::npos);
  EXPECT_EQ(html.find("</script><script>alert"), std::string::npos);
  const std::string chromium = find_chromium();
  if (chromium.empty()) {
    GTEST_SKIP() << "chromium is not installed (apt-get install chromium): HTML check skipped";
  }
  const Output dom = dump_dom(chromium, (dir_ / "hostile.html"), dir_ / "chrome");
  ASSERT_EQ(dom.status, 0) << dom.text;
  const std::string body = body_attributes(dom.text);
  ASSERT_FALSE(body.empty()) << dom.text;
  EXPECT_NE(body.find("data-rendered=\"true\""), std::string::npos) << body;
  EXPECT_NE(body.find("data-bars=\"4\""), std::string::npos) << body;
  EXPECT_NE(body.find("data-lines=\"4\""), std::string::npos) << body;
  // The names are text in the page, never elements.
  EXPECT_EQ(dom.text.find("<script>alert"), std::string::npos);
}

}  // namespace
}  // namespace pgslow::report
