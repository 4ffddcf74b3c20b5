// Every `pgslow ...` command a message or the docs name exists: the subcommands and the options
// of each mention are looked up in the built binary's own --help (the tree of commands it prints,
// one `pgslow PATH --help` per command). CLI11's --help answers even after an unknown word
// (`pgslow server stats --help` prints server's help and exits 0), so the words are checked
// against the help's lists, not against the exit code.
//
// Mentions come from docs/*.md and README.md (code spans and code blocks) and from the string
// literals of runner/ and report/ (their code spans: messages write a command as `pgslow ...`).

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "common/strings.h"
#include "tests/support/cluster_fixture.h"
#include "tests/support/pgslow_process.h"

namespace pgslow::testing {
namespace {

namespace fs = std::filesystem;

// One command of the tree, as its --help describes it.
struct Command {
  std::set<std::string> subcommands;
  std::map<std::string, bool> options;  // "--workdir" -> takes a value
  bool positionals = false;             // takes words that are not subcommands
};

// The help of `pgslow path... --help`, parsed once per path.
const Command& command(const std::vector<std::string>& path) {
  static std::map<std::vector<std::string>, std::unique_ptr<Command>> cache;
  auto& slot = cache[path];
  if (slot) return *slot;
  slot = std::make_unique<Command>();
  std::vector<std::string> args = path;
  args.push_back("--help");
  const Finished help = run_pgslow(args);
  EXPECT_EQ(help.exit_code, 0) << join(path, " ") << ": " << help.output;
  std::istringstream in(help.output);
  std::string section;
  for (std::string line; std::getline(in, line);) {
    if (!line.empty() && line.back() == ':' && line.front() != ' ') {
      section = line;
      continue;
    }
    const std::size_t start = line.find_first_not_of(' ');
    if (start == std::string::npos || start == 0) continue;
    // The names (and a value type), up to the description two spaces on.
    const std::string left = line.substr(start, line.find("  ", start) - start);
    if (start == 2 && section == "Subcommands:") slot->subcommands.insert(left);
    if (start == 2 && section == "Positionals:") slot->positionals = true;
    if (left.front() == '-') {  // in "Options:" and in each option group (indented further)
      const std::string names = left.substr(0, left.find(' '));
      for (const std::string& name : split(names, ','))
        slot->options[name] = left.find(' ') != std::string::npos;
    }
  }
  return *slot;
}

// One mention: where it was found and its words after `pgslow`.
struct Mention {
  std::string where;
  std::vector<std::string> words;
};

// What is wrong with a mention, or "" when every subcommand and option it names exists.
std::string check(const Mention& m) {
  std::vector<std::string> path;
  bool in_positionals = false;
  for (std::size_t i = 0; i < m.words.size(); ++i) {
    std::string w = m.words[i];
    // `[target options]`: a placeholder in brackets, up to its closing bracket.
    if (w.size() > 1 && w[0] == '[' && w[1] != '-') {
      while (i < m.words.size() && m.words[i].find(']') == std::string::npos) ++i;
      continue;
    }
    while (!w.empty() && std::string(",.;:)]").find(w.back()) != std::string::npos) w.pop_back();
    while (!w.empty() && (w.front() == '[' || w.front() == '(')) w.erase(0, 1);
    if (w.empty() || w == "\\|" || w == "...") continue;  // `[--data-dir D \| --conninfo C ...]`
    const Command& c = command(path);
    if (w[0] == '-') {
      const std::string names = w.substr(0, w.find('='));
      if (names == "-" || names == "--") continue;
      bool takes_value = false;
      for (const std::string& name : split(names, '|')) {  // `[--scale|--warehouses N]`
        auto it = c.options.find(name);
        if (it == c.options.end())
          return fmt::format("`pgslow {}` has no option {}", join(path, " "), name);
        takes_value = takes_value || it->second;
      }
      // Its value (an optional one, as --dashboard's, only when a word follows).
      if (takes_value && w.find('=') == std::string::npos && i + 1 < m.words.size() &&
          m.words[i + 1][0] != '-')
        ++i;
      continue;
    }
    if (in_positionals) continue;
    // `server start\|status\|stop`: each alternative a subcommand.
    std::string unescaped = w;
    for (std::size_t p; (p = unescaped.find("\\|")) != std::string::npos;)
      unescaped.replace(p, 2, "|");
    const std::vector<std::string> alternatives = split(unescaped, '|');
    static const std::regex word("[a-z][a-z0-9-]*");
    bool all_words = true;
    for (const auto& a : alternatives) all_words = all_words && std::regex_match(a, word);
    if (all_words && c.subcommands.count(alternatives.front()) > 0) {
      for (const auto& a : alternatives)
        if (c.subcommands.count(a) == 0)
          return fmt::format("`pgslow {} {}` is not a command", join(path, " "), a);
      if (alternatives.size() > 1) return "";  // several paths: stop here
      path.push_back(w);
      continue;
    }
    // The first word is neither a command nor an option: not a command line (`pgslow 0.1.0`).
    if (path.empty() && !all_words) return "";
    if (!c.positionals)
      return fmt::format("`pgslow {}{}{}` is not a command", join(path, " "),
                         path.empty() ? "" : " ", w);
    in_positionals = true;  // a scenario, a file, a knob's name: the rest are its arguments
  }
  return "";
}

// The words after each `pgslow` of a command line, up to a shell word that ends it.
void mentions_in(const std::string& text, const std::string& where, std::vector<Mention>& out) {
  static const std::regex pgslow(R"((?:^|[\s/(`])pgslow\s+)");
  for (auto it = std::sregex_iterator(text.begin(), text.end(), pgslow);
       it != std::sregex_iterator(); ++it) {
    std::istringstream rest(text.substr(it->position() + it->length()));
    Mention m{where, {}};
    for (std::string w; rest >> w;) {
      if (w == "#" || w == "|" || w == "&&" || w == ";" || w.find('>') != std::string::npos ||
          w.find('<') != std::string::npos || w.find("pgslow") != std::string::npos)
        break;
      // A quoted value ('host=/run/pgbouncer port=6432') is one word.
      if (w[0] == '\'' || w[0] == '"') {
        for (std::string more; w.size() < 2 || w.back() != w[0];) {
          if (!(rest >> more)) break;
          w += " " + more;
        }
        m.words.push_back("'value'");
        continue;
      }
      // The end of a shell substitution: "$(pgslow server conninfo)".
      if (const auto q = w.find_first_of("\"'"); q != std::string::npos) {
        m.words.push_back(w.substr(0, q));
        break;
      }
      // A placeholder of a format string, a shell expansion: nothing to look up from here on.
      if (w.find('{') != std::string::npos || w.find('$') != std::string::npos) break;
      m.words.push_back(w);
    }
    if (!m.words.empty()) out.push_back(std::move(m));
  }
}

// The mentions in the code spans (`...`) of one line of text.
void span_mentions(const std::string& text, const std::string& where, std::vector<Mention>& out) {
  for (std::size_t open = text.find('`'); open != std::string::npos;) {
    const std::size_t close = text.find('`', open + 1);
    if (close == std::string::npos) break;
    mentions_in(text.substr(open + 1, close - open - 1), where, out);
    open = text.find('`', close + 1);
  }
}

// The code spans of Markdown text (a span may go on over a line break) and the command lines of
// its code blocks (a line that starts with `pgslow`, `$ pgslow` or `build/pgslow`; the rest of a
// block is output or YAML).
void markdown_mentions(const fs::path& file, std::vector<Mention>& out) {
  static const std::regex command_line(R"(^\s*(\$ )?(\S*/)?pgslow\s)");
  std::ifstream in(file);
  const std::string name = file.filename().string();
  bool block = false;
  int n = 0;
  std::string prose;         // the text outside code blocks, lines joined, for its spans
  std::vector<int> line_at;  // the line of each character of `prose`
  for (std::string line; std::getline(in, line);) {
    ++n;
    if (line.starts_with("```")) {
      block = !block;
      continue;
    }
    if (block) {
      if (std::regex_search(line, command_line))
        mentions_in(line, fmt::format("{}:{}", name, n), out);
      continue;
    }
    prose += line + "\n";
    line_at.resize(prose.size(), n);
  }
  for (std::size_t open = prose.find('`'); open != std::string::npos;) {
    const std::size_t close = prose.find('`', open + 1);
    if (close == std::string::npos) break;
    mentions_in(prose.substr(open + 1, close - open - 1), fmt::format("{}:{}", name, line_at[open]),
                out);
    open = prose.find('`', close + 1);
  }
}

// The string literals of a C++ file, adjacent ones joined ("a " "b" is "a b"), comments skipped.
std::vector<std::pair<int, std::string>> string_literals(const std::string& src) {
  std::vector<std::pair<int, std::string>> out;
  int line = 1;
  bool joinable = false;  // only white space since the last literal
  for (std::size_t i = 0; i < src.size(); ++i) {
    const char c = src[i];
    if (c == '\n') ++line;
    if (c == '/' && i + 1 < src.size() && src[i + 1] == '/') {
      while (i < src.size() && src[i] != '\n') ++i;
      ++line;
      continue;
    }
    if (c == '/' && i + 1 < src.size() && src[i + 1] == '*') {
      const std::size_t end = src.find("*/", i + 2);
      for (std::size_t j = i; j < end && j < src.size(); ++j) line += src[j] == '\n';
      i = end == std::string::npos ? src.size() : end + 1;
      continue;
    }
    if (c == '\'') {  // a character literal ('"' among them)
      i += src[i + 1] == '\\' ? 3 : 2;
      continue;
    }
    if (c == '"') {
      std::string text;
      for (++i; i < src.size() && src[i] != '"'; ++i) {
        if (src[i] == '\\' && i + 1 < src.size()) {
          ++i;
          text += src[i] == 'n' ? '\n' : src[i];
        } else {
          text += src[i];
        }
      }
      if (joinable && !out.empty())
        out.back().second += text;
      else
        out.emplace_back(line, text);
      joinable = true;
      continue;
    }
    if (!std::isspace(static_cast<unsigned char>(c))) joinable = false;
  }
  return out;
}

void source_mentions(const fs::path& file, std::vector<Mention>& out) {
  std::ifstream in(file);
  std::ostringstream s;
  s << in.rdbuf();
  for (const auto& [line, text] : string_literals(s.str())) {
    const std::string where =
        fmt::format("{}:{}", fs::relative(file, PGSLOW_SOURCE_DIR).string(), line);
    span_mentions(text, where, out);
  }
}

std::vector<Mention> all_mentions() {
  std::vector<Mention> out;
  const fs::path root = PGSLOW_SOURCE_DIR;
  markdown_mentions(root / "README.md", out);
  for (const auto& e : fs::directory_iterator(root / "docs"))
    if (e.path().extension() == ".md") markdown_mentions(e.path(), out);
  for (const char* dir : {"runner", "report"}) {
    for (const auto& e : fs::recursive_directory_iterator(root / dir)) {
      const std::string ext = e.path().extension().string();
      if (ext == ".cpp" || ext == ".h") source_mentions(e.path(), out);
    }
  }
  return out;
}

TEST(CommandsMentioned, EveryCommandAndOptionTheDocsAndMessagesNameExists) {
  const std::vector<Mention> mentions = all_mentions();
  ASSERT_GT(mentions.size(), 100u) << "the extraction finds too little";
  std::set<std::string> reported;
  for (const Mention& m : mentions) {
    const std::string problem = check(m);
    if (!problem.empty() && reported.insert(m.where + problem).second)
      ADD_FAILURE() << m.where << ": `pgslow " << join(m.words, " ") << "`: " << problem;
  }
}

// The check itself: what a mention that does not exist looks like, found.
TEST(CommandsMentioned, AMissingCommandOrOptionIsFound) {
  EXPECT_NE(check({"x", {"server", "stats"}}), "");
  EXPECT_NE(check({"x", {"frobnicate"}}), "");
  EXPECT_NE(check({"x", {"bench", "-P", "1", "--no-such-option"}}), "");
  EXPECT_EQ(check({"x", {"run", "quick", "--detail"}}), "");
  EXPECT_EQ(check({"x", {"--workdir", "DIR", "server", "start\\|status\\|stop"}}), "");
  EXPECT_EQ(check({"x", {"knobs", "show", "shared_buffers", "--offline"}}), "");
  std::vector<Mention> found;
  span_mentions("--workload is required (`pgslow workloads` lists them)", "x", found);
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(found[0].words, std::vector<std::string>{"workloads"});
}

}  // namespace
}  // namespace pgslow::testing
