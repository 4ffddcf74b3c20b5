#include "workload/script/script.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <fstream>
#include <set>
#include <sstream>

#include "common/safe_fs.h"
#include "common/strings.h"

namespace pgslow::workload::script {

namespace fs = std::filesystem;

std::optional<int> Variables::find(std::string_view name) const {
  for (std::size_t i = 0; i < names.size(); ++i)
    if (names[i] == name) return static_cast<int>(i);
  return std::nullopt;
}

int Variables::add(std::string_view name) {
  if (auto slot = find(name)) return *slot;
  names.emplace_back(name);
  return static_cast<int>(names.size()) - 1;
}

std::string Command::parameterised_sql() const {
  std::string out = segments.front();
  for (std::size_t i = 0; i < slots.size(); ++i)
    out += fmt::format("${}{}", i + 1, segments[i + 1]);
  return out;
}

std::optional<std::int64_t> sleep_us(std::int64_t value, std::int64_t unit_us) {
  std::int64_t us = 0;
  if (value < 0 || unit_us <= 0 || __builtin_mul_overflow(value, unit_us, &us)) return std::nullopt;
  return us;
}

std::optional<ScriptSpec> parse_script_spec(std::string_view text, const fs::path& base_dir,
                                            std::vector<ConfigError>& problems) {
  ScriptSpec spec;
  spec.text = std::string(text);
  std::string_view path = text;
  if (const auto at = text.rfind('@'); at != std::string_view::npos) {
    path = text.substr(0, at);
    const std::string_view w = text.substr(at + 1);
    int weight = -1;
    auto [end, ec] = std::from_chars(w.data(), w.data() + w.size(), weight);
    if (w.empty() || ec != std::errc() || end != w.data() + w.size() || weight < 0) {
      ConfigError e;
      e.message = fmt::format("bad weight '{}' in script '{}'", w, text);
      e.hint = "a whole number of 0 or more after '@', as pgbench -f FILE@WEIGHT: heavy.sql@5";
      problems.push_back(std::move(e));
      return std::nullopt;
    }
    spec.weight = weight;
  }
  if (path.empty()) {
    ConfigError e;
    e.message = fmt::format("script '{}' names no file", text);
    e.hint = "FILE or FILE@WEIGHT";
    problems.push_back(std::move(e));
    return std::nullopt;
  }
  spec.path = fs::path(path);
  if (spec.path.is_relative() && !base_dir.empty()) spec.path = base_dir / spec.path;
  return spec;
}

namespace {

bool is_ident(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '_' ||
         (static_cast<unsigned char>(c) & 0x80) != 0;
}

bool is_blank(std::string_view s) {
  for (char c : s)
    if (!std::isspace(static_cast<unsigned char>(c))) return false;
  return true;
}

// Walks a script's text once: SQL commands end at a ';' outside quotes and comments (they
// may span lines, as in pgbench since version 10); a line starting with '\' outside an SQL
// command is a meta-command, continued on the next line when it ends with '\'.
class ScriptParser {
 public:
  ScriptParser(std::string_view text, const std::string& file, Script& script, Variables& variables,
               std::vector<ConfigError>& problems)
      : s_(text), file_(file), script_(script), vars_(variables), problems_(problems) {
    // pgbench's predefined variables; the others only once this script has set them.
    for (int i = 0; i <= Variables::kRandomSeed; ++i) defined_.insert(variables.names[i]);
  }

  void run() {
    while (pos_ < s_.size()) {
      if (!in_sql_) {
        const char c = s_[pos_];
        if (std::isspace(static_cast<unsigned char>(c))) {
          advance();
          continue;
        }
        if (s_.substr(pos_, 2) == "--") {
          while (pos_ < s_.size() && s_[pos_] != '\n') advance();
          continue;
        }
        if (c == '\\') {
          meta_command();
          continue;
        }
        in_sql_ = true;
        cmd_ = Command{};
        cmd_.kind = Command::Kind::kSql;
        cmd_.line = line_;
        cmd_col_ = column();
        cmd_.segments.assign(1, "");
      }
      sql_char();
    }
    if (in_sql_) {
      if (quote_ != 0 || block_depth_ > 0 || !dollar_tag_.empty()) {
        error(cmd_.line, cmd_col_,
              fmt::format("the SQL command starting here has an unterminated {}",
                          block_depth_ > 0       ? "comment"
                          : !dollar_tag_.empty() ? "dollar quote"
                                                 : "quoted string"),
              "close it before the end of the file");
      } else {
        finish_sql();
      }
    }
  }

 private:
  int column() const { return static_cast<int>(pos_ - line_start_) + 1; }
  void advance() {
    if (s_[pos_] == '\n') {
      ++line_;
      line_start_ = pos_ + 1;
    }
    ++pos_;
  }
  void error(int line, int col, std::string message, std::string hint = "") {
    ConfigError e;
    e.where = SourceLocation{file_, line, col};
    e.message = std::move(message);
    e.hint = std::move(hint);
    problems_.push_back(std::move(e));
  }
  void append(char c) { cmd_.segments.back() += c; }

  void sql_char() {
    const char c = s_[pos_];
    if (quote_ != 0) {  // inside '...' or "...": a doubled quote stays inside
      append(c);
      advance();
      if (c == quote_) quote_ = 0;
      return;
    }
    if (block_depth_ > 0) {
      if (s_.substr(pos_, 2) == "*/") {
        --block_depth_;
        cmd_.segments.back() += "*/";
        advance();
        advance();
      } else if (s_.substr(pos_, 2) == "/*") {
        ++block_depth_;
        cmd_.segments.back() += "/*";
        advance();
        advance();
      } else {
        append(c);
        advance();
      }
      return;
    }
    if (!dollar_tag_.empty()) {
      if (s_.substr(pos_, dollar_tag_.size()) == dollar_tag_) {
        cmd_.segments.back() += dollar_tag_;
        for (std::size_t i = 0; i < dollar_tag_.size(); ++i) advance();
        dollar_tag_.clear();
      } else {
        append(c);
        advance();
      }
      return;
    }
    if (c == '\'' || c == '"') {
      quote_ = c;
      append(c);
      advance();
      return;
    }
    if (s_.substr(pos_, 2) == "--") {  // a comment to the end of the line: dropped
      while (pos_ < s_.size() && s_[pos_] != '\n') advance();
      return;
    }
    if (s_.substr(pos_, 2) == "/*") {
      block_depth_ = 1;
      cmd_.segments.back() += "/*";
      advance();
      advance();
      return;
    }
    if (c == '$') {  // $tag$ ... $tag$ (not $1: a tag does not start with a digit)
      std::size_t end = pos_ + 1;
      if (end < s_.size() && !std::isdigit(static_cast<unsigned char>(s_[end]))) {
        while (end < s_.size() && is_ident(s_[end])) ++end;
        if (end < s_.size() && s_[end] == '$') {
          dollar_tag_ = std::string(s_.substr(pos_, end - pos_ + 1));
          cmd_.segments.back() += dollar_tag_;
          while (pos_ <= end) advance();
          return;
        }
      }
      append(c);
      advance();
      return;
    }
    if (c == ':') {
      if (s_.substr(pos_, 2) == "::") {  // a cast, not a variable
        cmd_.segments.back() += "::";
        advance();
        advance();
        return;
      }
      std::size_t end = pos_ + 1;
      while (end < s_.size() && is_ident(s_[end])) ++end;
      if (end == pos_ + 1) {
        append(c);
        advance();
        return;
      }
      const std::string_view name = s_.substr(pos_ + 1, end - pos_ - 1);
      const int col = column();
      if (!defined_.contains(std::string(name))) {
        error(line_, col, fmt::format("unknown variable :{}", name), unknown_hint());
      } else {
        cmd_.slots.push_back(*vars_.find(name));
        cmd_.segments.emplace_back();
      }
      while (pos_ < end) advance();
      return;
    }
    if (c == ';') {
      advance();
      finish_sql();
      return;
    }
    append(c);
    advance();
  }

  std::string unknown_hint() const {
    return "set it with \\set earlier in this script; predefined: :scale, :client_id, "
           ":default_seed, :random_seed";
  }

  void finish_sql() {
    in_sql_ = false;
    // Trim the command's surroundings (the text between variables is kept as written).
    auto& first = cmd_.segments.front();
    first.erase(0, first.find_first_not_of(" \t\r\n"));
    auto& last = cmd_.segments.back();
    const auto keep = last.find_last_not_of(" \t\r\n");
    last.erase(keep == std::string::npos ? 0 : keep + 1);
    if (cmd_.slots.empty() && is_blank(cmd_.segments.front())) return;  // a stray ';'
    script_.commands.push_back(std::move(cmd_));
  }

  // A meta-command's text (continuation lines joined), where it is, and a cursor over its words.
  struct Meta {
    std::string text;
    int line = 0;
    std::size_t indent = 0;  // text[k] is at column k + indent + 1 of `line`
    std::size_t i = 0;
    int at(std::size_t k) const { return static_cast<int>(k + indent) + 1; }
    void skip() {
      while (i < text.size() && std::isspace(static_cast<unsigned char>(text[i]))) ++i;
    }
    std::string word() {  // the next word, as written
      const std::size_t start = i;
      while (i < text.size() && !std::isspace(static_cast<unsigned char>(text[i]))) ++i;
      return text.substr(start, i - start);
    }
  };

  void meta_command() {
    Meta m;
    m.line = line_;
    m.indent = static_cast<std::size_t>(column_of(pos_)) - 1;
    // The command's text up to the end of the line, continued after a trailing backslash.
    for (;;) {
      std::size_t eol = s_.find('\n', pos_);
      if (eol == std::string_view::npos) eol = s_.size();
      std::string_view part = s_.substr(pos_, eol - pos_);
      if (!part.empty() && part.back() == '\r') part.remove_suffix(1);
      while (pos_ < eol) advance();
      if (pos_ < s_.size()) advance();  // the newline
      if (!part.empty() && part.back() == '\\' && pos_ < s_.size()) {
        m.text += part.substr(0, part.size() - 1);
        m.text += ' ';
        continue;
      }
      m.text += part;
      break;
    }
    const std::string word = to_lower(m.word());
    m.skip();
    if (word == "\\set") return set_command(m);
    if (word == "\\sleep") return sleep_command(m);
    static const std::set<std::string> kPgbenchOnly = {
        "\\setshell", "\\shell", "\\gset",          "\\aset",        "\\if",          "\\elif",
        "\\else",     "\\endif", "\\startpipeline", "\\endpipeline", "\\syncpipeline"};
    if (kPgbenchOnly.contains(word)) {
      error(m.line, m.at(0),
            fmt::format("pgbench's {} is not supported by pgslow's script workload", word),
            "pgslow runs \\set and \\sleep (docs/workloads.md, \"script\")");
    } else {
      error(m.line, m.at(0), fmt::format("unknown meta-command {}", word),
            "pgslow runs \\set and \\sleep");
    }
  }

  void set_command(Meta& m) {
    const std::size_t name_start = m.i;
    while (m.i < m.text.size() && is_ident(m.text[m.i])) ++m.i;
    const std::string name = m.text.substr(name_start, m.i - name_start);
    if (name.empty()) {
      error(m.line, m.at(name_start), "\\set needs a variable name, then an expression",
            "e.g. \\set aid random(1, 100000 * :scale)");
      return;
    }
    m.skip();
    if (m.i >= m.text.size()) {
      error(m.line, m.at(m.i), fmt::format("\\set {} has no expression", name),
            "e.g. \\set aid random(1, 100000 * :scale)");
      return;
    }
    Command cmd;
    cmd.kind = Command::Kind::kSet;
    cmd.line = m.line;
    try {
      cmd.expr = parse_expression(std::string_view(m.text).substr(m.i),
                                  [this](std::string_view n) -> std::optional<int> {
                                    if (!defined_.contains(std::string(n))) return std::nullopt;
                                    return vars_.find(n);
                                  });
    } catch (const ParseError& e) {
      error(m.line, m.at(m.i) + e.column() - 1, e.what(),
            e.depth_exceeded() ? depth_hint() : std::string());
      return;
    }
    cmd.target = vars_.add(name);
    defined_.insert(name);
    script_.commands.push_back(std::move(cmd));
  }

  static std::string depth_hint() {
    return fmt::format(
        "pgslow parses expressions at most {} levels deep; split it over several "
        "\\set commands",
        kMaxExpressionDepth);
  }

  void sleep_command(Meta& m) {
    Command cmd;
    cmd.kind = Command::Kind::kSleep;
    cmd.line = m.line;
    const std::size_t value_start = m.i;
    const std::string value = m.word();
    if (value.empty()) {
      error(m.line, m.at(value_start), "\\sleep needs a duration", "e.g. \\sleep 10 ms");
      return;
    }
    if (value[0] == ':') {
      const std::string name = value.substr(1);
      if (!defined_.contains(name)) {
        error(m.line, m.at(value_start), fmt::format("unknown variable :{}", name), unknown_hint());
        return;
      }
      cmd.sleep_slot = *vars_.find(name);
    } else {
      auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), cmd.sleep_value);
      if (ec == std::errc::result_out_of_range ||
          (ec == std::errc() && end == value.data() + value.size() && cmd.sleep_value < 0)) {
        error(m.line, m.at(value_start),
              fmt::format("\\sleep's duration {} is out of range", value), sleep_range_hint());
        return;
      }
      if (ec != std::errc() || end != value.data() + value.size()) {
        error(m.line, m.at(value_start),
              fmt::format("\\sleep's duration '{}' is not a whole number", value),
              "a number of 0 or more, or a :variable");
        return;
      }
    }
    m.skip();
    const std::size_t unit_start = m.i;
    const std::string unit = to_lower(m.word());
    if (auto us = sleep_unit_us(unit)) {
      cmd.sleep_unit_us = *us;
    } else {
      error(m.line, m.at(unit_start), fmt::format("\\sleep's unit '{}' is not us, ms or s", unit));
      return;
    }
    if (cmd.sleep_slot < 0 && !sleep_us(cmd.sleep_value, cmd.sleep_unit_us)) {
      error(m.line, m.at(value_start),
            fmt::format("\\sleep {} {} is out of range", value, unit.empty() ? "s" : unit),
            sleep_range_hint());
      return;
    }
    m.skip();
    if (m.i < m.text.size()) {
      error(m.line, m.at(m.i),
            fmt::format("unexpected '{}' after \\sleep's unit", m.text.substr(m.i)));
      return;
    }
    script_.commands.push_back(std::move(cmd));
  }

  static std::optional<std::int64_t> sleep_unit_us(std::string_view unit) {
    if (unit.empty() || unit == "s") return 1'000'000;
    if (unit == "ms") return 1'000;
    if (unit == "us") return 1;
    return std::nullopt;
  }

  static std::string sleep_range_hint() {
    return fmt::format("from 0 up to {} s: a duration's microseconds must fit in 64 bits",
                       kMaxSleepUs / 1'000'000);
  }

  int column_of(std::size_t p) const {
    std::size_t ls = s_.rfind('\n', p == 0 ? 0 : p - 1);
    ls = (ls == std::string_view::npos || p == 0) ? 0 : ls + 1;
    return static_cast<int>(p - ls) + 1;
  }

  std::string_view s_;
  const std::string& file_;
  Script& script_;
  Variables& vars_;
  std::vector<ConfigError>& problems_;
  std::set<std::string> defined_;
  std::size_t pos_ = 0;
  int line_ = 1;
  std::size_t line_start_ = 0;
  bool in_sql_ = false;
  Command cmd_;
  int cmd_col_ = 1;
  char quote_ = 0;
  int block_depth_ = 0;
  std::string dollar_tag_;
};

// A NUL byte cannot be sent in SQL text (libpq ends the string there) and is no part of a
// pgbench script: a file with one is refused, at its first.
bool refuse_nul(std::string_view text, const std::string& file,
                std::vector<ConfigError>& problems) {
  const std::size_t nul = text.find('\0');
  if (nul == std::string_view::npos) return false;
  const std::string_view before = text.substr(0, nul);
  const std::size_t line_start = before.rfind('\n');
  ConfigError e;
  e.where.file = file;
  e.where.line = 1 + static_cast<int>(std::count(before.begin(), before.end(), '\n'));
  e.where.column =
      static_cast<int>(line_start == std::string_view::npos ? nul + 1 : nul - line_start);
  e.message = "the script contains a NUL byte";
  e.hint = "a script is text: is this a binary file, or saved as UTF-16?";
  problems.push_back(std::move(e));
  return true;
}

}  // namespace

void parse_script(std::string_view text, const std::string& file, const std::string& name,
                  int weight, ScriptSet& set, std::vector<ConfigError>& problems) {
  Script script;
  script.name = name;
  script.file = file;
  script.weight = weight;
  const std::size_t before = problems.size();
  if (!refuse_nul(text, file, problems))
    ScriptParser(text, file, script, set.variables, problems).run();
  bool has_sql = false;
  for (const auto& c : script.commands) has_sql = has_sql || c.kind == Command::Kind::kSql;
  if (!has_sql && problems.size() == before) {
    ConfigError e;
    e.where = SourceLocation{file, 1, 1};
    e.message = "the script has no SQL command";
    e.hint = "a transaction runs the script's SQL commands, each ended by ';'";
    problems.push_back(std::move(e));
  }
  set.scripts.push_back(std::move(script));
}

ScriptSet load_scripts(const std::vector<ScriptSpec>& specs, std::vector<ConfigError>& problems) {
  ScriptSet set;
  if (specs.empty()) {
    ConfigError e;
    e.message = "the script workload needs at least one script file";
    e.hint = "workload options: {scripts: [\"my.sql@1\"]}, or --script my.sql";
    problems.push_back(std::move(e));
    return set;
  }
  int total = 0;
  std::map<std::string, int> seen;
  for (const auto& spec : specs) {
    // The SQL pgslow sends, often as root: only a script no one else could have written.
    std::stringstream text;
    try {
      text.str(read_trusted_file(spec.path, "the script"));
    } catch (const std::exception& x) {
      ConfigError e;
      e.message = fmt::format("cannot read script file {}: {}", spec.path.string(), x.what());
      e.hint =
          "a path relative to the scenario file (or to the working directory on the command line)";
      problems.push_back(std::move(e));
      continue;
    }
    std::string name = spec.path.stem().string();
    if (int n = ++seen[name]; n > 1) name += fmt::format("#{}", n);
    parse_script(text.str(), spec.path.string(), name, spec.weight, set, problems);
    total += spec.weight;
  }
  // Statement names say where the SQL is: a server error then points at the script's line.
  std::set<std::string> names;
  for (auto& script : set.scripts) {
    for (auto& cmd : script.commands) {
      if (cmd.kind != Command::Kind::kSql) continue;
      cmd.statement = fmt::format("{}:{}", script.file, cmd.line);
      for (int k = 2; names.contains(cmd.statement); ++k)
        cmd.statement = fmt::format("{}:{}#{}", script.file, cmd.line, k);
      names.insert(cmd.statement);
    }
  }
  if (total == 0 && !set.scripts.empty()) {
    ConfigError e;
    e.message = "every script has weight 0: none would ever run";
    e.hint = "give at least one script a weight above 0 (FILE@WEIGHT)";
    problems.push_back(std::move(e));
  }
  return set;
}

}  // namespace pgslow::workload::script
