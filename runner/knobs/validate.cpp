#include "knobs/validate.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <optional>
#include <set>

#include "common/strings.h"
#include "common/yaml.h"
#include "pg/connection.h"

namespace pgslow::knobs {

namespace {

// PostgreSQL's MAX_BACKENDS (postmaster.h): the sum of all backend slots must stay below it.
constexpr double kMaxBackends = 0x3FFFF;

// String parameters that hold a comma-separated list of fixed words, with the first major
// version that accepts each word (the server's check hook rejects anything else).
struct ListWord {
  const char* word;
  int since;
};
struct ListParameter {
  const char* name;
  std::vector<ListWord> words;
};
const std::vector<ListParameter> kListParameters = {
    {"log_destination",
     {{"stderr", 9}, {"csvlog", 9}, {"syslog", 9}, {"eventlog", 9}, {"jsonlog", 15}}},
};

double to_number(const std::string& text) {
  return std::strtod(text.c_str(), nullptr);
}

std::string describe_value(const Setting& s) {
  return yaml::printable(s.value);
}

ConfigError problem(const Setting& s, std::string message, std::string hint,
                    ConfigError::Severity severity = ConfigError::Severity::kError) {
  return ConfigError{s.where, std::move(message), std::move(hint), severity};
}

// The per-version bound hint: "17 and later accept 64kB" when a later version's bound
// admits the value.
std::string later_versions_hint(const Knob* knob, bool below_min, double value,
                                const ServerSetting& ss, const BaseUnit& unit, int major,
                                VarType type) {
  if (!knob) return {};
  const auto& table = below_min ? knob->min_by_version : knob->max_by_version;
  for (const auto& [version, bound_text] : table) {
    if (version <= major) continue;
    ParsedValue bound =
        type == VarType::kReal ? parse_real(bound_text, unit) : parse_int(bound_text, unit);
    if (!bound.ok()) continue;
    const bool admits = below_min ? value >= bound.number : value <= bound.number;
    if (admits) return fmt::format("{} and later accept {}", version, bound_text);
  }
  (void)ss;
  return {};
}

// A pitfall names the value it warns about by starting with it, followed by a colon or a
// parenthesis: "128kB: ...", "128kB (the minimum) ...", or with a comparison "<=256kB: ...".
// Other pitfalls ("1s is the minimum.") are advice shown by `knobs show`, not warnings.
bool pitfall_applies(const std::string& pitfall, const ParsedValue& value, VarType type,
                     const BaseUnit& unit, const std::vector<std::string>& enumvals,
                     const std::string& name) {
  std::size_t i = 0;
  std::string op;
  while (i < pitfall.size() && (pitfall[i] == '<' || pitfall[i] == '>' || pitfall[i] == '=')) {
    op += pitfall[i++];
  }
  std::size_t end = i;
  while (end < pitfall.size() && pitfall[end] != ':' && pitfall[end] != ' ') ++end;
  if (end == i || end >= pitfall.size()) return false;
  const bool colon = pitfall[end] == ':';
  const bool paren = pitfall.compare(end, 2, " (") == 0;
  if (!colon && !paren) return false;
  std::string token = pitfall.substr(i, end - i);
  if (token.size() >= 2 && (token.front() == '\'' || token.front() == '"') &&
      token.back() == token.front()) {
    token = token.substr(1, token.size() - 2);
  }
  ParsedValue trigger = parse_value(token, type, unit, enumvals, name);
  if (!trigger.ok()) return false;
  if (type == VarType::kInteger || type == VarType::kReal) {
    const double a = value.number;
    const double b = trigger.number;
    if (op.empty() || op == "=" || op == "==") return a == b;
    if (op == "<") return a < b;
    if (op == "<=") return a <= b;
    if (op == ">") return a > b;
    if (op == ">=") return a >= b;
    return false;
  }
  if (!op.empty() && op != "=" && op != "==") return false;
  if (type == VarType::kString) return list_items(value.setting) == list_items(trigger.setting);
  return iequals(value.setting, trigger.setting);
}

// a < b, for a bound read from pg_settings: reals there are printed with %g (six significant
// digits), so DBL_MAX reads as 1.79769e+308; a real only counts as outside when it is
// beyond that rounding.
bool below(double a, double b, VarType type) {
  if (type != VarType::kReal) return a < b;
  return a < b - 1e-5 * std::max(std::fabs(a), std::fabs(b));
}

// Validates one setting that the server knows.
void validate_known(SettingVerdict& v, const ServerSetting& ss, const Knob* knob,
                    const ServerSettings& server) {
  const Setting& s = v.setting;
  if (ss.context == "internal") {
    v.problems.push_back(
        problem(s,
                fmt::format("{} cannot be changed: it is fixed when PostgreSQL is built or the "
                            "cluster is created (context internal)",
                            s.name),
                "remove it from the settings"));
    return;
  }
  const auto type = parse_vartype(ss.vartype).value_or(VarType::kString);
  const BaseUnit unit = parse_base_unit(ss.unit).value_or(BaseUnit{});
  ParsedValue parsed = parse_value(s.value, type, unit, ss.enumvals, s.name);
  if (!parsed.ok()) {
    v.problems.push_back(problem(
        s, fmt::format("{} = {} {}", s.name, describe_value(s), *parsed.error), parsed.hint));
    return;
  }
  if (type == VarType::kInteger || type == VarType::kReal) {
    const auto show = [&](double x) {
      return type == VarType::kReal && unit.kind == BaseUnit::Kind::kNone
                 ? fmt::format("{:g}", x)
                 : format_with_unit(x, unit);
    };
    if (!ss.min_val.empty() && below(parsed.number, to_number(ss.min_val), type)) {
      const double min = to_number(ss.min_val);
      std::string later =
          later_versions_hint(knob, true, parsed.number, ss, unit, server.major, type);
      v.problems.push_back(
          problem(s,
                  fmt::format("{} = {} is below this server's minimum {} (PostgreSQL {}{})", s.name,
                              s.value, show(min), server.major, later.empty() ? "" : "; " + later),
                  fmt::format("use at least {}", show(min))));
      return;
    }
    if (!ss.max_val.empty() && below(to_number(ss.max_val), parsed.number, type)) {
      const double max = to_number(ss.max_val);
      std::string later =
          later_versions_hint(knob, false, parsed.number, ss, unit, server.major, type);
      v.problems.push_back(
          problem(s,
                  fmt::format("{} = {} is above this server's maximum {} (PostgreSQL {}{})", s.name,
                              s.value, show(max), server.major, later.empty() ? "" : "; " + later),
                  fmt::format("use at most {}", show(max))));
      return;
    }
  }
  if (type == VarType::kString) {
    for (const auto& lp : kListParameters) {
      if (s.name != lp.name) continue;
      std::vector<std::string> accepted;
      for (const auto& w : lp.words) {
        if (server.major >= w.since) accepted.push_back(w.word);
      }
      for (const auto& item : list_items(s.value)) {
        if (std::find(accepted.begin(), accepted.end(), item) != accepted.end()) continue;
        auto later = std::find_if(lp.words.begin(), lp.words.end(),
                                  [&](const ListWord& w) { return item == w.word; });
        v.problems.push_back(problem(
            s,
            later != lp.words.end()
                ? fmt::format("{} = {}: '{}' needs PostgreSQL {} (this server is {})", s.name,
                              describe_value(s), item, later->since, server.major)
                : fmt::format("{} = {}: '{}' is not accepted", s.name, describe_value(s), item),
            "accepted: " + join(accepted, ", ")));
      }
      if (list_items(s.value).empty()) {
        v.problems.push_back(problem(s, fmt::format("{} needs at least one item", s.name),
                                     "accepted: " + join(accepted, ", ")));
      }
    }
    std::string why;
    if (is_quoted_list(s.name) && !quoted_list_elements(s.name, s.value, &why)) {
      v.problems.push_back(problem(
          s,
          fmt::format("{} = {} is not a list the server reads: {}", s.name, describe_value(s), why),
          "write the elements separated by commas, e.g. \"my schema\", public (double quotes "
          "keep a name's case and spaces)"));
      return;
    }
  }
  v.expected_setting = parsed.setting;
  if (knob) {
    for (const auto& pitfall : knob->pitfalls) {
      if (pitfall_applies(pitfall, parsed, type, unit, ss.enumvals, s.name)) {
        v.problems.push_back(
            problem(s, fmt::format("{} = {} is legal but risky: {}", s.name, s.value, pitfall), "",
                    ConfigError::Severity::kWarning));
      }
    }
  }
  if (ss.context == "postmaster") {
    v.verdict = Verdict::kRestart;
    v.reason = "needs a restart";
  } else {
    v.verdict = Verdict::kReload;
    if (ss.context == "backend" || ss.context == "superuser-backend") {
      v.needs_reconnect = true;
      v.reason = "new sessions only (reconnect)";
    }
  }
}

// The configuration after the change: the server's current values overlaid with the valid
// new ones, in pg_settings' text form (base units).
class Overlay {
 public:
  Overlay(const ServerSettings& server, std::vector<SettingVerdict>& verdicts)
      : server_(server), verdicts_(verdicts) {
    for (std::size_t i = 0; i < verdicts.size(); ++i) {
      const auto& v = verdicts[i];
      if (v.verdict == Verdict::kReload || v.verdict == Verdict::kRestart) {
        const ServerSetting* ss = server.find(v.setting.name);
        if (ss) index_[ss->name] = i;
      }
    }
  }
  bool exists(const std::string& name) const { return server_.find(name) != nullptr; }
  std::optional<std::string> text(const std::string& name) const {
    auto it = index_.find(name);
    if (it != index_.end()) return verdicts_[it->second].expected_setting;
    const ServerSetting* ss = server_.find(name);
    if (!ss) return std::nullopt;
    return ss->setting;
  }
  // In bytes / microseconds when the parameter has a unit.
  std::optional<double> number(const std::string& name) const {
    auto t = text(name);
    if (!t) return std::nullopt;
    const ServerSetting* ss = server_.find(name);
    const BaseUnit unit = parse_base_unit(ss->unit).value_or(BaseUnit{});
    return to_number(*t) * unit.size;
  }
  bool is_on(const std::string& name) const {
    auto t = text(name);
    return t && parse_bool(*t).ok() && parse_bool(*t).number == 1;
  }
  // Reports a broken rule on the first changed parameter among `involved` (none changed:
  // the server is already so, not this change's doing).
  void report(const std::vector<std::string>& involved, const std::string& message,
              const std::string& hint,
              ConfigError::Severity severity = ConfigError::Severity::kError) {
    for (const auto& name : involved) {
      auto it = index_.find(name);
      if (it == index_.end()) continue;
      auto& v = verdicts_[it->second];
      v.problems.push_back(ConfigError{v.setting.where, message, hint, severity});
      return;
    }
  }

 private:
  const ServerSettings& server_;
  std::vector<SettingVerdict>& verdicts_;
  std::map<std::string, std::size_t> index_;
};

// Rules PostgreSQL checks when it starts (xlog.c, postmaster.c, checkpointer.c); a
// configuration that breaks one leaves the server down after a restart.
void check_cross_rules(Overlay& o, const ServerSettings& server) {
  const auto wal_level = o.text("wal_level");
  const bool minimal = wal_level && iequals(*wal_level, "minimal");
  if (minimal) {
    if (auto senders = o.number("max_wal_senders"); senders && *senders > 0) {
      o.report({"wal_level", "max_wal_senders"},
               fmt::format("wal_level = minimal needs max_wal_senders = 0 (it is {}): PostgreSQL "
                           "refuses to start (\"WAL streaming (max_wal_senders > 0) requires "
                           "wal_level replica or logical\")",
                           *senders),
               "also set max_wal_senders: 0, or keep wal_level at replica");
    }
    if (auto archive = o.text("archive_mode"); archive && !iequals(*archive, "off")) {
      o.report({"wal_level", "archive_mode"},
               "wal_level = minimal with archive_mode on: PostgreSQL refuses to start (\"WAL "
               "archival cannot be enabled when wal_level is minimal\")",
               "also set archive_mode: off");
    }
    if (o.exists("summarize_wal") && o.is_on("summarize_wal")) {
      o.report({"wal_level", "summarize_wal"},
               "wal_level = minimal with summarize_wal on: PostgreSQL refuses to start (\"WAL "
               "cannot be summarized when wal_level is minimal\")",
               "keep wal_level at replica or turn summarize_wal off");
    }
  }
  const auto segment = o.number("wal_segment_size");
  if (segment && *segment > 0) {
    for (const char* name : {"max_wal_size", "min_wal_size"}) {
      auto size = o.number(name);
      if (size && *size < 2 * *segment) {
        const BaseUnit mb = *parse_base_unit("MB");
        o.report({name},
                 fmt::format("{} must be at least twice wal_segment_size ({}): PostgreSQL "
                             "refuses to start",
                             name, format_with_unit(*segment / mb.size, mb)),
                 fmt::format("use at least {}", format_with_unit(2 * *segment / mb.size, mb)));
      }
    }
  }
  if (auto min = o.number("min_wal_size"), max = o.number("max_wal_size");
      min && max && *min > *max) {
    o.report({"min_wal_size", "max_wal_size"},
             "min_wal_size is larger than max_wal_size: PostgreSQL starts, but keeps more WAL "
             "than max_wal_size allows before checkpointing",
             "make min_wal_size at most max_wal_size", ConfigError::Severity::kWarning);
  }
  if (auto maxconn = o.number("max_connections")) {
    double reserved = o.number("superuser_reserved_connections").value_or(0);
    const bool has_reserved = o.exists("reserved_connections");
    if (has_reserved) reserved += o.number("reserved_connections").value_or(0);
    if (reserved >= *maxconn) {
      o.report({"max_connections", "superuser_reserved_connections", "reserved_connections"},
               fmt::format("superuser_reserved_connections{} ({}) must be less than "
                           "max_connections ({}): PostgreSQL refuses to start",
                           has_reserved ? " plus reserved_connections" : "", reserved, *maxconn),
               fmt::format("use max_connections of at least {}", reserved + 1));
    }
    const char* av =
        o.exists("autovacuum_worker_slots") ? "autovacuum_worker_slots" : "autovacuum_max_workers";
    const double backends = *maxconn + o.number(av).value_or(0) + 1 +
                            o.number("max_worker_processes").value_or(0) +
                            o.number("max_wal_senders").value_or(0);
    if (backends > kMaxBackends) {
      o.report({"max_connections", av, "max_worker_processes", "max_wal_senders"},
               fmt::format("max_connections + {} + max_worker_processes + max_wal_senders is {}, "
                           "above PostgreSQL's limit of {} backends: the server refuses to start",
                           av, backends, kMaxBackends),
               "lower max_connections");
    }
  }
  if (o.exists("autovacuum_worker_slots")) {
    auto workers = o.number("autovacuum_max_workers");
    auto slots = o.number("autovacuum_worker_slots");
    if (workers && slots && *workers > *slots) {
      o.report({"autovacuum_max_workers", "autovacuum_worker_slots"},
               "autovacuum_max_workers is above autovacuum_worker_slots: only "
               "autovacuum_worker_slots workers can run",
               "raise autovacuum_worker_slots (needs a restart)", ConfigError::Severity::kWarning);
    }
  }
  if (auto dest = o.text("log_destination"); dest && !o.is_on("logging_collector")) {
    for (const auto& item : list_items(*dest)) {
      if (item == "csvlog" || item == "jsonlog") {
        o.report({"log_destination", "logging_collector"},
                 fmt::format("log_destination includes {} but logging_collector is off: "
                             "PostgreSQL writes no {} file",
                             item, item),
                 "also set logging_collector: on (needs a restart)",
                 ConfigError::Severity::kWarning);
        break;
      }
    }
  }
  if (o.exists("archive_library") && o.text("archive_mode") &&
      !iequals(*o.text("archive_mode"), "off")) {
    auto cmd = o.text("archive_command");
    auto lib = o.text("archive_library");
    if (cmd && lib && !cmd->empty() && !lib->empty()) {
      o.report({"archive_command", "archive_library", "archive_mode"},
               "archive_command and archive_library are both set: the archiver fails (\"both "
               "archive_command and archive_library set\")",
               "set only one of them");
    }
  }
  (void)server;
  // hot_standby matters only on a standby, where the primary's wal_level decides; pgslow
  // changes a primary, so there is no start-up rule to check for it here.
}

}  // namespace

std::string_view verdict_name(Verdict v) {
  switch (v) {
    case Verdict::kReload:
      return "reload";
    case Verdict::kRestart:
      return "restart";
    case Verdict::kSkipped:
      return "skipped";
    case Verdict::kError:
      return "error";
  }
  return "error";
}

ServerSettings ServerSettings::read(pg::Connection& conn) {
  ServerSettings out;
  out.version_num = conn.server_version();
  out.major = conn.major_version();
  // Every column used exists since 9.5 (pending_restart); enumvals as one string because
  // enum values never contain a comma.
  // The server's value, not this session's: a SET in this session (pgslow's own sessions turn
  // their timeouts off so, pg/connection.h) changes `setting` but not `reset_val`, which
  // follows the configuration files as reloads change them. What apply verifies and restore
  // compares is that configuration, for every knob: so a SET one reads as its reset value.
  pg::Result r = conn.exec(
      "SELECT name, CASE WHEN source = 'session' THEN coalesce(reset_val, setting) "
      "ELSE setting END, coalesce(unit, ''), vartype, context, coalesce(min_val, ''), "
      "coalesce(max_val, ''), coalesce(boot_val, ''), coalesce(reset_val, ''), "
      "coalesce(source, ''), coalesce(array_to_string(enumvals, ','), ''), pending_restart "
      "FROM pg_catalog.pg_settings");
  for (int i = 0; i < r.rows(); ++i) {
    ServerSetting s;
    s.name = std::string(r.get(i, 0));
    s.setting = std::string(r.get(i, 1));
    s.unit = std::string(r.get(i, 2));
    s.vartype = std::string(r.get(i, 3));
    s.context = std::string(r.get(i, 4));
    s.min_val = std::string(r.get(i, 5));
    s.max_val = std::string(r.get(i, 6));
    s.boot_val = std::string(r.get(i, 7));
    s.reset_val = std::string(r.get(i, 8));
    s.source = std::string(r.get(i, 9));
    const std::string enums(r.get(i, 10));
    if (!enums.empty()) s.enumvals = split(enums, ',');
    s.pending_restart = r.get(i, 11) == "t";
    // Keyed in lower case (find folds the name it is given): TimeZone and DateStyle are the
    // server's own spellings.
    std::string key = to_lower(s.name);
    out.by_name[key] = std::move(s);
  }
  return out;
}

const ServerSetting* ServerSettings::find(std::string_view name) const {
  auto it = by_name.find(to_lower(name));
  return it == by_name.end() ? nullptr : &it->second;
}

std::vector<std::string> ServerSettings::names() const {
  std::vector<std::string> out;
  out.reserve(by_name.size());
  for (const auto& [key, s] : by_name) out.push_back(s.name);
  return out;
}

std::vector<SettingVerdict> validate(const std::vector<Setting>& settings, const Catalog& catalog,
                                     const ServerSettings& server) {
  std::vector<SettingVerdict> verdicts;
  verdicts.reserve(settings.size());
  std::set<std::string> seen;
  for (const auto& s : settings) {
    SettingVerdict v;
    v.setting = s;
    const Knob* knob = catalog.find(to_lower(s.name));
    const ServerSetting* ss = server.find(s.name);
    if (!seen.insert(to_lower(s.name)).second) {
      v.problems.push_back(problem(s, fmt::format("{} is set twice", s.name),
                                   "keep one; the later value would win"));
    } else if (auto bad = unsafe_value_problem(s.value)) {
      v.problems.push_back(problem(s, fmt::format("the value of {} {}", s.name, *bad),
                                   "parameter values are one line of text"));
    } else if (!ss) {
      if (knob && !knob->exists_in(server.major)) {
        v.verdict = Verdict::kSkipped;
        v.reason = server.major < knob->since
                       ? fmt::format("needs PostgreSQL {}", knob->since)
                       : fmt::format("removed in PostgreSQL {}", *knob->until);
      } else if (knob) {
        v.problems.push_back(problem(
            s,
            fmt::format("{} exists since PostgreSQL {} according to the catalog, but this "
                        "server (PostgreSQL {}) does not have it",
                        s.name, knob->since, server.major),
            "is the server built without support for it? Fix 'since' in the catalog otherwise"));
      } else {
        std::vector<std::string> candidates = catalog.knob_names();
        for (const auto& n : server.names()) candidates.push_back(n);
        auto near = closest_match(s.name, candidates);
        v.problems.push_back(problem(s, fmt::format("unknown parameter '{}'", s.name),
                                     near ? fmt::format("did you mean '{}'?", *near)
                                          : "see `pgslow knobs list` or the server's pg_settings"));
      }
    } else {
      validate_known(v, *ss, knob, server);
    }
    if (has_errors(v.problems)) v.verdict = Verdict::kError;
    verdicts.push_back(std::move(v));
  }
  Overlay overlay(server, verdicts);
  check_cross_rules(overlay, server);
  for (auto& v : verdicts) {
    if (has_errors(v.problems)) {
      v.verdict = Verdict::kError;
      for (const auto& p : v.problems) {
        if (p.severity == ConfigError::Severity::kError) {
          v.reason = p.message;
          break;
        }
      }
    }
  }
  return verdicts;
}

std::vector<ConfigError> all_problems(const std::vector<SettingVerdict>& verdicts) {
  std::vector<ConfigError> out;
  for (const auto& v : verdicts) out.insert(out.end(), v.problems.begin(), v.problems.end());
  return out;
}

bool effective_value_matches(const ServerSetting& now, const SettingVerdict& v) {
  const auto type = parse_vartype(now.vartype).value_or(VarType::kString);
  const std::string& want = v.expected_setting;
  switch (type) {
    case VarType::kBool: {
      auto a = parse_bool(now.setting);
      auto b = parse_bool(want);
      return a.ok() && b.ok() && a.number == b.number;
    }
    case VarType::kInteger:
    case VarType::kReal: {
      char* end_a = nullptr;
      char* end_b = nullptr;
      const double a = std::strtod(now.setting.c_str(), &end_a);
      const double b = std::strtod(want.c_str(), &end_b);
      if (end_a == now.setting.c_str() || end_b == want.c_str()) return false;
      if (a == b) return true;
      // pg_settings prints reals with %g (6 significant digits).
      return std::fabs(a - b) <= 1e-5 * std::max(std::fabs(a), std::fabs(b));
    }
    case VarType::kEnum:
      return iequals(now.setting, want);
    case VarType::kString:
      if (now.setting == want) return true;
      // search_path = evil,pg_catalog reads back as "evil, pg_catalog".
      if (is_quoted_list(now.name)) return same_parameter_value(now.name, now.setting, want);
      return list_items(now.setting) == list_items(want) && !list_items(want).empty();
  }
  return false;
}

std::vector<ConfigError> check_offline(const std::vector<Setting>& settings,
                                       const Catalog& catalog) {
  std::vector<ConfigError> out;
  const auto names = catalog.knob_names();
  std::set<std::string> seen;
  for (const auto& s : settings) {
    if (!seen.insert(s.name).second) {
      out.push_back(problem(s, fmt::format("{} is set twice", s.name), "keep one"));
    }
    if (auto bad = unsafe_value_problem(s.value)) {
      out.push_back(problem(s, fmt::format("the value of {} {}", s.name, *bad),
                            "parameter values are one line of text"));
    }
    if (!catalog.find(s.name)) {
      auto near = closest_match(s.name, names);
      out.push_back(
          problem(s, fmt::format("'{}' is not in the knob catalog", s.name),
                  near ? fmt::format("did you mean '{}'?", *near)
                       : "without a server pgslow cannot tell whether PostgreSQL knows it",
                  // A name one or two letters away from a knob is a typo; anything else may be a
                  // parameter the catalog does not teach, which only a server can confirm.
                  near && edit_distance(s.name, *near) <= 2 ? ConfigError::Severity::kError
                                                            : ConfigError::Severity::kWarning));
    }
  }
  return out;
}

}  // namespace pgslow::knobs
