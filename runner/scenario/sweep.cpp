#include "scenario/sweep.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdlib>

#include "common/strings.h"
#include "knobs/catalog.h"
#include "knobs/value.h"
#include "server/envelope.h"
#include "server/pooler.h"
#include "server/target_kind.h"

namespace pgslow::scenario {

namespace {

SweepParse valid(std::string text) {
  return SweepParse{std::move(text), {}, {}};
}

SweepParse invalid(std::string error, std::string hint) {
  return SweepParse{{}, std::move(error), std::move(hint)};
}

// A whole number from lo to hi: the driver's counts.
SweepParse whole(std::string_view written, long long lo, long long hi) {
  const std::string t = trim(written);
  long long v = 0;
  const auto [end, ec] = std::from_chars(t.data(), t.data() + t.size(), v);
  const std::string hint = fmt::format("use a whole number from {} to {}", lo, hi);
  if (t.empty() || ec != std::errc() || end != t.data() + t.size())
    return invalid("is not a whole number", hint);
  if (v < lo || v > hi) return invalid("is out of range", hint);
  return valid(std::to_string(v));
}

int whole_of(const SweepValue& v) {
  return std::stoi(v.text);
}

// Transactions per second ("2000"; 0 is a closed loop) or a share of the baseline's TPS ("75%").
SweepParse parse_rate(std::string_view written) {
  std::string t = trim(written);
  const bool percent = !t.empty() && t.back() == '%';
  if (percent) t.pop_back();
  char* end = nullptr;
  const double v = std::strtod(t.c_str(), &end);
  if (t.empty() || *end != '\0' || !std::isfinite(v) || v < 0 || (percent && v <= 0))
    return invalid("is not a rate",
                   "write transactions per second (2000; 0 is closed loop) or a share of the "
                   "baseline's TPS (75%)");
  return valid(fmt::format("{:g}{}", v, percent ? "%" : ""));
}

void set_rate(const SweepValue& v, results::LoadSettings& load) {
  const bool percent = v.text.back() == '%';
  const double number = std::strtod(v.text.c_str(), nullptr);
  // One or the other: a relative rate is resolved from the baseline's TPS when the stage runs.
  load.rate = percent ? 0 : number;
  load.rate_percent = percent ? number : 0;
}

SweepParse parse_true_false(std::string_view written) {
  const knobs::ParsedValue b = knobs::parse_bool(trim(written));
  if (!b.ok()) return invalid("is not true or false", "write true or false");
  return valid(b.number != 0 ? "true" : "false");
}

// Each PgBouncer setting of pooler.h's table as a knob of pgslow's PgBouncer
// ("pgbouncer.pool_mode"): the stage's clients go through it with that setting, given by RELOAD
// (docs/pooler.md, "Pooler settings as knobs"). The installed version is checked when the
// scenario is planned.
void add_pooler_rows(std::vector<SweepDimension>& table) {
  for (const auto& spec : server::pooler_settings()) {
    const std::string name(spec.name);
    const std::string what(spec.what);
    table.push_back(load_row(
        std::string(server::kPoolerKnobPrefix) + name,
        [name, what](std::string_view w) {
          const std::string t = trim(w);
          if (auto why = server::check_pooler_setting(name, t, ""))
            return invalid("is refused: " + *why, what);
          return valid(t);
        },
        [name](const SweepValue& v, results::LoadSettings& l) {
          l.pooler_settings[name] = v.text;
        }));
  }
}

// The driver's settings (results::LoadSettings), one row each.
std::vector<SweepDimension>& rows() {
  static std::vector<SweepDimension> table = {
      load_row(
          "clients", [](std::string_view w) { return whole(w, 1, 10000); },
          [](const SweepValue& v, results::LoadSettings& l) { l.clients = whole_of(v); }),
      load_row(
          "pool_size", [](std::string_view w) { return whole(w, 0, 10000); },
          [](const SweepValue& v, results::LoadSettings& l) { l.pool_size = whole_of(v); }),
      load_row("rate", parse_rate, set_rate),
      load_row(
          "workers", [](std::string_view w) { return whole(w, 0, 256); },
          [](const SweepValue& v, results::LoadSettings& l) { l.workers = whole_of(v); }),
      load_row("connect_per_transaction", parse_true_false,
               [](const SweepValue& v, results::LoadSettings& l) {
                 l.connect_per_transaction = v.text == "true";
               }),
      // The clients' path (docs/pooler.md): the driver's own pool, or pgslow's PgBouncer sized
      // by pool_size.
      load_row(
          "pooler",
          [](std::string_view w) {
            const std::string t = trim(w);
            if (t != "driver" && t != "pgbouncer")
              return invalid("is not a pooler",
                             "write driver (the driver's own pool of pool_size connections) or "
                             "pgbouncer (pgslow's PgBouncer, default_pool_size = pool_size)");
            return valid(t);
          },
          [](const SweepValue& v, results::LoadSettings& l) { l.pooler = v.text; }),
  };
  // Once, at the first call: the pooler's rows after the driver's.
  static const bool with_pooler_rows = (add_pooler_rows(table), true);
  (void)with_pooler_rows;
  return table;
}

// The server's envelope (server/envelope.h) as dimensions: each point runs in its own limit,
// set on the live group before the stage's data reset (docs/envelope.md). Not in a stage's
// `load:`: they are the server's, not the driver's.
const std::vector<SweepDimension>& envelope_rows() {
  static const std::vector<SweepDimension> table = {
      {"server.memory",
       [](std::string_view w) {
         std::string why;
         if (!server::parse_envelope_memory(w, &why))
           return invalid("is refused: " + why,
                          "the server's processes and their page cache stay within it, e.g. "
                          "[256MB, 128MB, 64MB]");
         return valid(trim(w));
       },
       [](const SweepValue& v, StageSpec& p) {
         std::string why;
         p.envelope.memory_bytes = server::parse_envelope_memory(v.text, &why);
       }},
      {"server.cpus",
       [](std::string_view w) {
         std::string why;
         if (!server::parse_envelope_cpus(w, &why))
           return invalid("is refused: " + why, "the server's CPU time, e.g. [2, 1, 0.5]");
         return valid(trim(w));
       },
       [](const SweepValue& v, StageSpec& p) {
         std::string why;
         p.envelope.cpus = server::parse_envelope_cpus(v.text, &why);
       }},
  };
  return table;
}

// A knob as a dimension: its value goes into the point's settings as written; make_plan
// checks it against the live server (range, unit, version) like any stage's setting.
SweepDimension knob_dimension(const std::string& name) {
  return {name,
          [](std::string_view w) {
            const std::string t = trim(w);
            if (auto bad = knobs::unsafe_value_problem(t))
              return invalid(*bad, "a value as in postgresql.conf, e.g. 32MB");
            if (t.empty()) return invalid("is empty", "a value as in postgresql.conf, e.g. 32MB");
            return valid(t);
          },
          [name](const SweepValue& v, StageSpec& p) {
            p.settings = knobs::overlay(std::move(p.settings), {{name, v.text, v.where}});
          }};
}

const knobs::Catalog& catalog() {
  static const knobs::Catalog c = knobs::Catalog::load_default();
  return c;
}

std::vector<std::string> load_dimension_names() {
  std::vector<std::string> names;
  for (const auto& d : rows()) names.push_back(d.name);
  return names;
}

// Everything a sweep varies besides a knob, for the hints.
std::string dimension_names() {
  std::vector<std::string> names = load_dimension_names();
  for (const auto& d : envelope_rows()) names.push_back(d.name);
  return join(names, ", ");
}

// One end of a range: its number in the base unit of its kind (bytes, microseconds) or as
// written, with a `%` kept aside.
struct RangeEnd {
  knobs::BaseUnit unit;
  double value = 0;
  bool whole = true;
  bool percent = false;
};

std::optional<RangeEnd> read_end(const std::string& written, std::string& error) {
  std::string t = trim(written);
  RangeEnd e;
  e.percent = !t.empty() && t.back() == '%';
  if (e.percent) t.pop_back();
  char* end = nullptr;
  e.value = std::strtod(t.c_str(), &end);
  if (end == t.c_str() || !std::isfinite(e.value)) {
    error = fmt::format("{} is not a number", yaml::printable(written));
    return std::nullopt;
  }
  if (trim(std::string_view(end)).empty()) {
    e.whole = t.find_first_of(".eE") == std::string::npos;
    return e;
  }
  for (const char* base : {"B", "us"}) {  // memory in bytes, time in microseconds
    const knobs::BaseUnit unit = *knobs::parse_base_unit(base);
    const knobs::ParsedValue p = knobs::parse_real(t, unit);
    if (p.ok() && !e.percent) {
      e.unit = unit;
      e.value = p.number;
      return e;
    }
  }
  error = fmt::format("{} has an unknown unit", yaml::printable(written));
  return std::nullopt;
}

std::string round_point(double v, const RangeEnd& a, const RangeEnd& b) {
  if (a.unit.kind != knobs::BaseUnit::Kind::kNone) return knobs::format_rounded(v, a.unit);
  double r = knobs::round_significant(v, 2);
  if (a.whole && b.whole) {
    r = std::fabs(v - std::round(v)) <= 1e-9 * std::fabs(v) ? std::round(v) : std::round(r);
    return fmt::format("{}{}", std::llround(r), a.percent ? "%" : "");
  }
  return fmt::format("{:g}{}", r, a.percent ? "%" : "");
}

// A list of values, or a range {from, to, steps, scale}; each value read by the dimension.
std::vector<SweepValue> read_values(yaml::Reader& r, const YAML::Node& node,
                                    const SweepDimension& dim, const std::string& what) {
  std::vector<SweepValue> out;
  if (node.IsSequence()) {
    if (node.size() == 0)
      r.error(node, fmt::format("{} has no values", what), "list the values, e.g. [1, 10, 50]");
    for (const auto& item : node) {
      if (auto v = read_sweep_value(r, item, dim, what)) out.push_back(std::move(*v));
    }
    return out;
  }
  if (!node.IsMap()) {
    r.error(node, fmt::format("{} must be a list of values or a range", what),
            "e.g. [1, 10, 50] or {from: 64MB, to: 64kB, steps: 6, scale: log}");
    return out;
  }
  yaml::Fields f = r.fields(node, what, {"from", "to", "steps", "scale"});
  auto from = r.string(f.get("from"), what + ".from", true, node);
  auto to = r.string(f.get("to"), what + ".to", true, node);
  auto steps = r.integer(f.get("steps"), what + ".steps", true, node);
  bool log = false;
  if (auto scale = r.string(f.get("scale"), what + ".scale")) {
    log = *scale == "log";
    if (!log && *scale != "linear")
      r.error(f.get("scale"), fmt::format("{}.scale = {} is not a scale", what, *scale),
              "linear (evenly spaced values) or log (each value a constant factor of the last)");
  }
  if (steps && (*steps < 2 || *steps > 50)) {
    r.error(f.get("steps"), fmt::format("{}.steps = {} is out of range", what, *steps),
            "use a whole number from 2 to 50");
    return out;
  }
  if (!from || !to || !steps) return out;
  std::string error;
  auto texts = range_values(*from, *to, static_cast<int>(*steps), log, error);
  if (!texts) {
    r.error(node, fmt::format("{}: {}", what, error),
            "write both ends in one kind of unit, e.g. {from: 64MB, to: 64kB} or {from: 1, to: "
            "256}");
    return out;
  }
  for (const auto& text : *texts) {
    SweepParse p = dim.parse(text);
    if (!p.error.empty()) {
      r.error(node, fmt::format("{} = {} (of the range) {}", what, text, p.error), p.hint);
      continue;
    }
    const bool repeat =
        std::any_of(out.begin(), out.end(), [&](const SweepValue& v) { return v.text == p.text; });
    if (!repeat) out.push_back(SweepValue{p.text, r.where(node)});
  }
  return out;
}

}  // namespace

SweepDimension load_row(std::string name, std::function<SweepParse(std::string_view)> parse,
                        std::function<void(const SweepValue&, results::LoadSettings&)> set_load) {
  SweepDimension row{name, std::move(parse), {}, std::move(set_load)};
  row.apply = [name](const SweepValue& v, StageSpec& point) { point.load.values[name] = v; };
  return row;
}

results::LoadSettings apply_load(results::LoadSettings load, const LoadKnobs& knobs) {
  for (const auto& row : rows())
    if (const SweepValue* v = knobs.find(row.name)) row.set_load(*v, load);
  return load;
}

const std::vector<SweepDimension>& load_dimensions() {
  return rows();
}

void add_load_dimension(SweepDimension row) {
  auto& table = rows();
  auto it = std::find_if(table.begin(), table.end(),
                         [&](const SweepDimension& d) { return d.name == row.name; });
  if (it != table.end()) {
    *it = std::move(row);
  } else {
    table.push_back(std::move(row));
  }
}

bool is_envelope_dimension(std::string_view name) {
  return std::any_of(envelope_rows().begin(), envelope_rows().end(),
                     [&](const SweepDimension& d) { return d.name == name; });
}

ConfigError envelope_sweep_refusal(std::string_view dimension, server::TargetKind kind,
                                   SourceLocation where) {
  // As a `server:` envelope's refusal (server/target_kind.cpp), at the sweep's line.
  return ConfigError{
      std::move(where),
      fmt::format("sweep: {} changes the server's envelope, and pgslow makes one only for the "
                  "managed cluster, whose postmaster it starts inside a cgroup; the target is {}",
                  dimension, server::to_string(kind)),
      "run it on the managed cluster (no target:), or limit that server where it is started "
      "(docker run --memory --cpus, systemd MemoryMax= CPUQuota=) and sweep something else "
      "(docs/envelope.md)"};
}

std::optional<SweepDimension> find_sweep_dimension(std::string_view name) {
  for (const auto& d : rows()) {
    if (d.name == name) return d;
  }
  for (const auto& d : envelope_rows()) {
    if (d.name == name) return d;
  }
  if (const knobs::Knob* k = catalog().find(name)) return knob_dimension(k->name);
  return std::nullopt;
}

std::optional<SweepValue> read_sweep_value(yaml::Reader& r, const YAML::Node& node,
                                           const SweepDimension& dimension,
                                           const std::string& what) {
  auto written = r.string(node, what, true);
  if (!written) return std::nullopt;
  SweepParse p = dimension.parse(*written);
  if (!p.error.empty()) {
    r.error(node, fmt::format("{} = {} {}", what, yaml::printable(*written), p.error), p.hint);
    return std::nullopt;
  }
  return SweepValue{p.text, r.where(node)};
}

LoadKnobs read_load(yaml::Reader& r, const YAML::Node& node, const std::string& what) {
  StageSpec point;
  if (!node.IsDefined()) return point.load;
  yaml::Fields f = r.fields(node, what, load_dimension_names());
  for (const auto& [key, value] : f.entries()) {
    const auto dim = find_sweep_dimension(key);
    if (!dim) continue;  // reported by fields()
    if (auto v = read_sweep_value(r, value, *dim, what + "." + key)) dim->apply(*v, point);
  }
  return point.load;
}

void read_sweep(yaml::Reader& r, const YAML::Node& node, Scenario& s) {
  // Any key: a load dimension, a knob of the catalog, or `load`.
  yaml::Fields f = r.fields(node, "sweep");
  if (!node.IsMap()) return;
  s.sweep.where = r.where(node);
  bool named = false;  // a dimension, even one with errors
  for (const auto& [key, value] : f.entries()) {
    if (key == "load") {
      s.sweep.load = read_load(r, value, "sweep.load");
      continue;
    }
    named = true;
    const auto dim = find_sweep_dimension(key);
    if (!dim) {
      std::vector<std::string> names = catalog().knob_names();
      for (const auto& name : load_dimension_names()) names.push_back(name);
      for (const auto& d : envelope_rows()) names.push_back(d.name);
      const auto near = closest_match(key, names);
      r.error(f.key_node(key),
              fmt::format("sweep: {} is neither a load dimension, the server's envelope nor a "
                          "knob of the catalog",
                          yaml::printable(key)),
              (near ? fmt::format("did you mean '{}'? ", *near) : std::string()) +
                  "a sweep varies " + dimension_names() + " or a knob (`pgslow knobs list`)");
      continue;
    }
    if (is_envelope_dimension(key) && s.target.kind != server::TargetKind::kManaged) {
      const ConfigError refusal = envelope_sweep_refusal(key, s.target.kind, {});
      r.error(f.key_node(key), refusal.message, refusal.hint);
      continue;
    }
    if (std::find(s.sweep.dimensions.begin(), s.sweep.dimensions.end(), dim->name) !=
        s.sweep.dimensions.end()) {
      r.error(f.key_node(key), fmt::format("the sweep varies {} twice", dim->name), "keep one");
      continue;
    }
    std::vector<SweepValue> values = read_values(r, value, *dim, "sweep." + key);
    if (values.empty()) continue;  // the reader says why
    s.sweep.dimensions.push_back(dim->name);
    s.sweep.values.push_back(std::move(values));
  }
  if (!named) {
    r.error(node, "the sweep varies nothing",
            "give it one or two of " + dimension_names() + " or a knob, each a list of values");
  } else if (s.sweep.dimensions.size() > 2) {
    r.error(node,
            fmt::format("the sweep varies {} dimensions ({}); a curve has one, a family of "
                        "curves two",
                        s.sweep.dimensions.size(), join(s.sweep.dimensions, ", ")),
            "keep two; write the others as stages or under sweep.load");
    s.sweep.dimensions.resize(2);
    s.sweep.values.resize(2);
  }
  std::size_t points = 1;
  std::vector<std::string> counts;
  for (const auto& values : s.sweep.values) {
    points *= values.size();  // at most 2 dimensions of a file's worth of values: no overflow
    counts.push_back(std::to_string(values.size()));
  }
  if (!s.sweep.values.empty() && points > kMaxSweepPoints) {
    r.error(node,
            fmt::format("the sweep has {} points ({}), more than the {} a scenario may have",
                        points, join(counts, " x "), kMaxSweepPoints),
            "sweep fewer values (a range with fewer steps), or split it into several scenarios");
    s.sweep.values.clear();  // nothing to expand: the error stops the reading
  }
}

std::vector<StageSpec> expand_sweep(const SweepSpec& sweep) {
  std::vector<StageSpec> out;
  std::vector<SweepDimension> dims;
  for (const auto& name : sweep.dimensions) {
    if (auto d = find_sweep_dimension(name)) dims.push_back(std::move(*d));
  }
  if (dims.empty() || dims.size() != sweep.values.size()) return out;
  auto stage = [&](const std::vector<std::pair<const SweepDimension*, const SweepValue*>>& point) {
    StageSpec st;
    st.where = sweep.where;
    st.sweep_point = true;
    st.load = sweep.load;
    std::vector<std::string> parts;
    for (const auto& [dim, value] : point) {
      dim->apply(*value, st);
      st.sweep_values[dim->name] = value->text;
      parts.push_back(dim->name + " " + value->text);
    }
    st.name = join(parts, ", ");
    return st;
  };
  // The second dimension outer: each of its values is one curve over the first.
  if (dims.size() == 1) {
    for (const auto& v : sweep.values[0]) out.push_back(stage({{&dims[0], &v}}));
  } else {
    for (const auto& series : sweep.values[1]) {
      for (const auto& v : sweep.values[0])
        out.push_back(stage({{&dims[0], &v}, {&dims[1], &series}}));
    }
  }
  return out;
}

std::optional<std::vector<std::string>> range_values(const std::string& from, const std::string& to,
                                                     int steps, bool log, std::string& error) {
  const auto a = read_end(from, error);
  if (!a) return std::nullopt;
  const auto b = read_end(to, error);
  if (!b) return std::nullopt;
  if (a->unit.kind != b->unit.kind || a->percent != b->percent) {
    error = fmt::format("from {} and to {} are not in one kind of unit", trim(from), trim(to));
    return std::nullopt;
  }
  if (log && (a->value <= 0 || b->value <= 0)) {
    error = "a log scale needs both ends above 0";
    return std::nullopt;
  }
  std::vector<std::string> out;
  for (int i = 0; i < steps; ++i) {
    std::string text;
    if (i == 0 || i == steps - 1) {
      text = trim(i == 0 ? from : to);  // the ends as written
    } else {
      const double f = static_cast<double>(i) / (steps - 1);
      const double v =
          log ? a->value * std::pow(b->value / a->value, f) : a->value + (b->value - a->value) * f;
      text = round_point(v, *a, *b);
    }
    if (std::find(out.begin(), out.end(), text) == out.end()) out.push_back(std::move(text));
  }
  return out;
}

}  // namespace pgslow::scenario
