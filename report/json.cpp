#include "report/json.h"

#include <fmt/format.h>

#include <cmath>
#include <nlohmann/json.hpp>
#include <ostream>

#include "report/metric.h"
#include "report/reporter.h"

namespace pgslow::report {

using Json = nlohmann::ordered_json;

namespace {

// Non-finite numbers have no JSON form; they are written as null and read back as absent.
Json number(double v) {
  return std::isfinite(v) ? Json(v) : Json(nullptr);
}

Json latency_json(const LatencySummary& l) {
  return Json{{"mean_us", number(l.mean_us)}, {"p50_us", number(l.p50_us)},
              {"p95_us", number(l.p95_us)},   {"p99_us", number(l.p99_us)},
              {"p999_us", number(l.p999_us)}, {"max_us", number(l.max_us)}};
}

}  // namespace

Json measurement_json(const Measurement& m) {
  Json by_type = Json::array();
  for (const auto& t : m.by_type) {
    by_type.push_back(Json{{"name", t.name},
                           {"committed", t.committed},
                           {"rolled_back", t.rolled_back},
                           {"failed", t.failed},
                           {"retries", t.retries},
                           {"latency", latency_json(t.latency)}});
  }
  Json failures = Json::object();
  for (const auto& [cls, n] : m.failures_by_class) failures[cls] = n;
  Json series = Json::array();
  for (double v : m.tps_per_second) series.push_back(number(v));
  Json headline = Json::array();
  for (const auto& f : m.headline)
    headline.push_back(Json{
        {"name", f.name}, {"value", number(f.value)}, {"unit", f.unit}, {"warning", f.warning}});
  Json out = Json{{"duration_s", number(m.duration_s)},
                  {"committed", m.committed},
                  {"rolled_back", m.rolled_back},
                  {"failed", m.failed},
                  {"retries", m.retries},
                  {"reconnects", m.reconnects},
                  {"tps", number(m.tps)},
                  {"headline", headline},
                  {"latency", latency_json(m.latency)},
                  {"schedule_lag", latency_json(m.schedule_lag)},
                  {"pool_wait", latency_json(m.pool_wait)},
                  {"connect_time", latency_json(m.connect_time)},
                  {"on_time_ratio", number(m.on_time_ratio)},
                  {"by_type", by_type},
                  {"failures_by_class", failures},
                  {"clients_requested", m.clients_requested},
                  {"clients_connected", m.clients_connected},
                  {"connections_refused", m.connections_refused},
                  {"tps_per_second", series}};
  if (m.in_flight_at_end > 0) {
    out["in_flight_at_end"] = m.in_flight_at_end;
    out["in_flight_longest_us"] = number(m.in_flight_longest_us);
  }
  // Only when measured (a local server), so reports of remote servers carry no zero.
  if (m.server_cpu_s > 0) {
    out["server_cpu_s"] = number(m.server_cpu_s);
    out["client_cpu_s"] = number(m.client_cpu_s);
  }
  if (m.idle_connections_measured > 0) {
    out["idle_connection_pss_bytes"] = number(m.idle_connection_pss_bytes);
    out["idle_connections_measured"] = m.idle_connections_measured;
  }
  return out;
}

namespace {

// In the attribution's metric's own terms (a cost's ratio above 1 is worse); read_interval
// turns it back.
Json metric_interval_json(const Metric& metric, const EffectInterval& search) {
  const EffectInterval e = in_metric_terms(metric, search);
  Json out{{"ratio", number(e.ratio)},
           {"low", number(e.low)},
           {"high", number(e.high)},
           {"runs", e.runs},
           {"reference_runs", e.reference_runs},
           {"transactions", e.transactions}};
  if (e.detectable > 0) out["detectable"] = number(e.detectable);
  return out;
}

Json switchback_json(const Switchback& s) {
  Json blocks = Json::array();
  for (const auto& b : s.blocks) {
    blocks.push_back({{"stage", b.stage},
                      {"seconds", number(b.seconds)},
                      {"transactions", b.transactions},
                      {"server_cpu_s", number(b.server_cpu_s)},
                      {"client_cpu_s", number(b.client_cpu_s)}});
  }
  Json evidence = Json::object();
  for (const auto& [k, v] : s.reference_evidence) evidence[k] = number(v);
  return {{"block_s", number(s.block_s)},
          {"settle_s", number(s.settle_s)},
          {"why", s.why},
          {"precision", number(s.precision)},
          {"looks", s.looks},
          {"stopped", s.stopped},
          {"blocks", blocks},
          {"reference_evidence", evidence}};
}

Json attribution_json_ordered(const Attribution& a) {
  auto interval_json = [&a](const EffectInterval& e) { return metric_interval_json(a.metric, e); };
  Json knobs = Json::array();
  for (const auto& k : a.knobs) {
    Json evidence = Json::array();
    for (const auto& e : k.evidence)
      evidence.push_back(
          Json{{"key", e.key}, {"reference", number(e.reference)}, {"value", number(e.value)}});
    knobs.push_back(Json{{"knobs", k.knobs},
                         {"values", k.values},
                         {"verdict", k.verdict},
                         {"alone", k.alone ? interval_json(*k.alone) : Json(nullptr)},
                         {"without", k.without ? interval_json(*k.without) : Json(nullptr)},
                         {"evidence", evidence},
                         {"note", k.note}});
  }
  return Json{{"metric", metric_name(a.metric)},
              {"direction", direction_name(a.metric)},
              {"headline", a.headline},
              {"reference", a.reference},
              {"stage", interval_json(a.stage)},
              {"knobs", knobs},
              {"harmless", a.harmless ? interval_json(*a.harmless) : Json(nullptr)},
              {"extra_runs", a.extra_runs},
              {"restarts", a.restarts},
              {"seconds", number(a.seconds)},
              {"noise", number(a.noise)},
              {"note", a.note}};
}

Json stage_json(const StageResult& s) {
  Json changes = Json::array();
  for (const auto& c : s.changes) {
    changes.push_back(Json{{"name", c.name},
                           {"old_value", c.old_value},
                           {"new_value", c.new_value},
                           {"apply_by", c.apply_by}});
  }
  Json skipped = Json::array();
  for (const auto& k : s.skipped) {
    skipped.push_back(Json{{"name", k.name}, {"value", k.value}, {"reason", k.reason}});
  }
  Json repeats = Json::array();
  for (const auto& m : s.repeats) repeats.push_back(measurement_json(m));
  Json evidence = Json::object();
  for (const auto& [key, v] : s.evidence) {
    if (std::isfinite(v)) evidence[key] = v;
  }
  Json out{
      {"name", s.name},
      {"description", s.description},
      {"changes", changes},
      {"skipped", skipped},
      {"warnings", s.warnings},
      {"load",
       {{"clients", s.load.clients},
        {"pool_size", s.load.pool_size},
        {"connect_per_transaction", s.load.connect_per_transaction},
        {"rate", number(s.load.rate)},
        {"workers", s.load.workers},
        {"rate_percent", number(s.load.rate_percent)}}},
      {"sweep_point", s.sweep_point},
      {"repeats", repeats},
      {"evidence", evidence},
      {"evidence_seconds", number(s.evidence_seconds)},
      {"reset_seconds", number(s.reset_seconds)},
      {"log_excerpt", s.log_excerpt},
      {"error", s.error},
      {"attribution", s.attribution ? attribution_json_ordered(*s.attribution) : Json(nullptr)},
      {"switchback", s.switchback ? switchback_json(*s.switchback) : Json(nullptr)}};
  if (!s.sweep_values.empty()) out["sweep_values"] = s.sweep_values;
  if (s.precision > 0) {
    out["precision"] = number(s.precision);
    out["looks"] = s.looks;
    out["stopped"] = s.stopped;
  }
  return out;
}

// Reads one JSON object field by field, naming the path of anything malformed. Missing
// fields keep their defaults (a report from an older pgslow of the same schema version).
class Reader {
 public:
  Reader(const Json& j, std::string path, const std::string& source)
      : j_(j), path_(std::move(path)), source_(source) {
    if (!j_.is_object()) fail(path_, "an object");
  }

  template <typename T>
  void number(const char* name, T& out) const {
    const Json* v = find(name);
    if (v == nullptr || v->is_null()) return;
    if (!v->is_number()) fail(sub(name), "a number");
    if constexpr (std::is_unsigned_v<T>) {
      if (v->is_number_integer() && v->get<std::int64_t>() < 0) fail(sub(name), "a count >= 0");
    }
    if constexpr (std::is_integral_v<T>) {
      if (!v->is_number_integer()) fail(sub(name), "a whole number");
    }
    out = v->get<T>();
  }
  void string(const char* name, std::string& out) const {
    const Json* v = find(name);
    if (v == nullptr || v->is_null()) return;
    if (!v->is_string()) fail(sub(name), "a string");
    out = v->get<std::string>();
  }
  void boolean(const char* name, bool& out) const {
    const Json* v = find(name);
    if (v == nullptr || v->is_null()) return;
    if (!v->is_boolean()) fail(sub(name), "true or false");
    out = v->get<bool>();
  }
  // Calls body(Reader-or-json, path) for each element of an array field.
  template <typename F>
  void array(const char* name, F&& body) const {
    const Json* v = find(name);
    if (v == nullptr || v->is_null()) return;
    if (!v->is_array()) fail(sub(name), "an array");
    for (std::size_t i = 0; i < v->size(); ++i) {
      body((*v)[i], fmt::format("{}[{}]", sub(name), i));
    }
  }
  template <typename F>
  void object(const char* name, F&& body) const {
    const Json* v = find(name);
    if (v == nullptr || v->is_null()) return;
    if (!v->is_object()) fail(sub(name), "an object");
    for (auto it = v->begin(); it != v->end(); ++it) {
      body(it.key(), it.value(), fmt::format("{}.{}", sub(name), it.key()));
    }
  }
  // The field exists and is not null.
  bool present(const char* name) const {
    const Json* v = find(name);
    return v != nullptr && !v->is_null();
  }
  Reader child(const char* name) const {
    const Json* v = find(name);
    static const Json empty = Json::object();
    return Reader(v == nullptr || v->is_null() ? empty : *v, sub(name), source_);
  }
  [[noreturn]] void fail(const std::string& path, const char* expected) const {
    throw ReadError(
        fmt::format("{}: {}: expected {}", source_, path.empty() ? "(top level)" : path, expected));
  }

 private:
  const Json* find(const char* name) const {
    const auto it = j_.find(name);
    return it == j_.end() ? nullptr : &*it;
  }
  std::string sub(const char* name) const {
    return path_.empty() ? std::string(name) : path_ + "." + name;
  }
  const Json& j_;
  std::string path_;
  const std::string& source_;
};

double read_number(const Json& v, const std::string& path, const std::string& source) {
  if (v.is_null()) return NAN;
  if (!v.is_number()) throw ReadError(fmt::format("{}: {}: expected a number", source, path));
  return v.get<double>();
}

LatencySummary read_latency(const Reader& r) {
  LatencySummary l;
  r.number("mean_us", l.mean_us);
  r.number("p50_us", l.p50_us);
  r.number("p95_us", l.p95_us);
  r.number("p99_us", l.p99_us);
  r.number("p999_us", l.p999_us);
  r.number("max_us", l.max_us);
  return l;
}

Measurement read_measurement(const Reader& r, const std::string& source) {
  Measurement m;
  r.number("duration_s", m.duration_s);
  r.number("committed", m.committed);
  r.number("rolled_back", m.rolled_back);
  r.number("failed", m.failed);
  r.number("retries", m.retries);
  r.number("reconnects", m.reconnects);
  r.number("tps", m.tps);
  r.array("headline", [&](const Json& j, const std::string& path) {
    Reader f(j, path, source);
    HeadlineFigure figure;
    f.string("name", figure.name);
    f.number("value", figure.value);
    f.string("unit", figure.unit);
    f.string("warning", figure.warning);
    m.headline.push_back(std::move(figure));
  });
  m.latency = read_latency(r.child("latency"));
  m.schedule_lag = read_latency(r.child("schedule_lag"));
  m.pool_wait = read_latency(r.child("pool_wait"));
  m.connect_time = read_latency(r.child("connect_time"));
  r.number("on_time_ratio", m.on_time_ratio);
  r.number("idle_connection_pss_bytes", m.idle_connection_pss_bytes);
  r.number("idle_connections_measured", m.idle_connections_measured);
  r.number("in_flight_at_end", m.in_flight_at_end);
  r.number("in_flight_longest_us", m.in_flight_longest_us);
  r.number("server_cpu_s", m.server_cpu_s);
  r.number("client_cpu_s", m.client_cpu_s);
  r.array("by_type", [&](const Json& j, const std::string& path) {
    Reader t(j, path, source);
    TxTypeResult tx;
    t.string("name", tx.name);
    t.number("committed", tx.committed);
    t.number("rolled_back", tx.rolled_back);
    t.number("failed", tx.failed);
    t.number("retries", tx.retries);
    tx.latency = read_latency(t.child("latency"));
    m.by_type.push_back(std::move(tx));
  });
  r.object("failures_by_class",
           [&](const std::string& key, const Json& j, const std::string& path) {
             if (!j.is_number_unsigned())
               throw ReadError(fmt::format("{}: {}: expected a count", source, path));
             m.failures_by_class[key] = j.get<std::uint64_t>();
           });
  r.number("clients_requested", m.clients_requested);
  r.number("clients_connected", m.clients_connected);
  r.number("connections_refused", m.connections_refused);
  r.array("tps_per_second", [&](const Json& j, const std::string& path) {
    m.tps_per_second.push_back(read_number(j, path, source));
  });
  return m;
}

EffectInterval read_metric_interval(const Reader& r, const Metric& metric) {
  EffectInterval e;
  r.number("ratio", e.ratio);
  r.number("low", e.low);
  r.number("high", e.high);
  r.number("runs", e.runs);
  r.number("reference_runs", e.reference_runs);
  r.number("transactions", e.transactions);
  r.number("detectable", e.detectable);
  return in_metric_terms(metric, e);
}

std::vector<std::string> read_strings(const Reader& r, const char* name,
                                      const std::string& source) {
  std::vector<std::string> out;
  r.array(name, [&](const Json& j, const std::string& path) {
    if (!j.is_string()) throw ReadError(fmt::format("{}: {}: expected a string", source, path));
    out.push_back(j.get<std::string>());
  });
  return out;
}

Attribution read_attribution(const Reader& r, const std::string& source) {
  Attribution a;
  std::string metric = "tps";  // reports before version 3's metric judged by TPS
  r.string("metric", metric);
  std::string direction = "slower";  // reports before --direction looked for "slower"
  r.string("direction", direction);
  if (auto m = parse_metric(metric); m && (direction == "slower" || direction == "faster")) {
    a.metric = *m;
    a.metric.better = direction == "faster";
  } else {
    throw ReadError(fmt::format("{}: attribution.metric {} ({}) is not one of {}, slower or faster",
                                source, metric, direction, metric_names()));
  }
  auto read_interval = [&a](const Reader& from) { return read_metric_interval(from, a.metric); };
  r.string("headline", a.headline);
  r.string("reference", a.reference);
  a.stage = read_interval(r.child("stage"));
  r.array("knobs", [&](const Json& j, const std::string& path) {
    Reader k(j, path, source);
    KnobEffect e;
    e.knobs = read_strings(k, "knobs", source);
    e.values = read_strings(k, "values", source);
    k.string("verdict", e.verdict);
    if (k.present("alone")) e.alone = read_interval(k.child("alone"));
    if (k.present("without")) e.without = read_interval(k.child("without"));
    k.array("evidence", [&](const Json& ej, const std::string& epath) {
      Reader m(ej, epath, source);
      KnobEvidence ev;
      m.string("key", ev.key);
      m.number("reference", ev.reference);
      m.number("value", ev.value);
      e.evidence.push_back(std::move(ev));
    });
    k.string("note", e.note);
    a.knobs.push_back(std::move(e));
  });
  if (r.present("harmless")) a.harmless = read_interval(r.child("harmless"));
  r.number("extra_runs", a.extra_runs);
  r.number("restarts", a.restarts);
  r.number("seconds", a.seconds);
  r.number("noise", a.noise);
  r.string("note", a.note);
  return a;
}

StageResult read_stage(const Reader& r, const std::string& source) {
  StageResult s;
  r.string("name", s.name);
  r.string("description", s.description);
  r.array("changes", [&](const Json& j, const std::string& path) {
    Reader c(j, path, source);
    KnobChange k;
    c.string("name", k.name);
    c.string("old_value", k.old_value);
    c.string("new_value", k.new_value);
    c.string("apply_by", k.apply_by);
    s.changes.push_back(std::move(k));
  });
  r.array("skipped", [&](const Json& j, const std::string& path) {
    Reader c(j, path, source);
    SkippedKnob k;
    c.string("name", k.name);
    c.string("value", k.value);
    c.string("reason", k.reason);
    s.skipped.push_back(std::move(k));
  });
  s.warnings = read_strings(r, "warnings", source);
  const Reader load = r.child("load");
  load.number("clients", s.load.clients);
  load.number("pool_size", s.load.pool_size);
  load.boolean("connect_per_transaction", s.load.connect_per_transaction);
  load.number("rate", s.load.rate);
  load.number("workers", s.load.workers);
  load.number("rate_percent", s.load.rate_percent);
  r.boolean("sweep_point", s.sweep_point);
  r.object("sweep_values", [&](const std::string& key, const Json& j, const std::string& path) {
    if (!j.is_string()) throw ReadError(fmt::format("{}: {}: expected a string", source, path));
    s.sweep_values[key] = j.get<std::string>();
  });
  r.array("repeats", [&](const Json& j, const std::string& path) {
    s.repeats.push_back(read_measurement(Reader(j, path, source), source));
  });
  r.object("evidence", [&](const std::string& key, const Json& j, const std::string& path) {
    const double v = read_number(j, path, source);
    if (std::isfinite(v)) s.evidence[key] = v;
  });
  r.number("evidence_seconds", s.evidence_seconds);
  r.number("reset_seconds", s.reset_seconds);
  r.string("log_excerpt", s.log_excerpt);
  r.string("error", s.error);
  if (r.present("attribution")) s.attribution = read_attribution(r.child("attribution"), source);
  r.number("precision", s.precision);
  r.number("looks", s.looks);
  r.string("stopped", s.stopped);
  if (r.present("switchback")) {
    const Reader w = r.child("switchback");
    Switchback sb;
    w.number("block_s", sb.block_s);
    w.number("settle_s", sb.settle_s);
    w.string("why", sb.why);
    w.number("precision", sb.precision);
    w.number("looks", sb.looks);
    w.string("stopped", sb.stopped);
    w.array("blocks", [&](const Json& j, const std::string& path) {
      const Reader b(j, path, source);
      SwitchbackBlock block;
      b.boolean("stage", block.stage);
      b.number("seconds", block.seconds);
      b.number("transactions", block.transactions);
      b.number("server_cpu_s", block.server_cpu_s);
      b.number("client_cpu_s", block.client_cpu_s);
      sb.blocks.push_back(block);
    });
    w.object("reference_evidence",
             [&](const std::string& key, const Json& j, const std::string& path) {
               const double v = read_number(j, path, source);
               if (std::isfinite(v)) sb.reference_evidence[key] = v;
             });
    s.switchback = std::move(sb);
  }
  return s;
}

}  // namespace

nlohmann::json attribution_json(const Attribution& a) {
  return nlohmann::json::parse(attribution_json_ordered(a).dump());
}

std::string to_json(const Run& run) {
  Json stages = Json::array();
  for (const auto& s : run.stages) stages.push_back(stage_json(s));
  Json references = Json::array();
  for (const auto& ref : run.references) {
    Json series = Json::array();
    for (double v : ref.tps_per_second) series.push_back(number(v));
    references.push_back(Json{{"after_stage", ref.after_stage},
                              {"tps", number(ref.tps)},
                              {"transactions", ref.transactions},
                              {"duration_s", number(ref.duration_s)},
                              {"tps_per_second", series},
                              {"server_cpu_s", number(ref.server_cpu_s)},
                              {"error", ref.error}});
  }
  Json expectations = Json::array();
  for (const auto& e : run.expectations) {
    expectations.push_back(Json{{"text", e.text}, {"passed", e.passed}, {"detail", e.detail}});
  }
  Json doc{{"schema", "pgslow-report"},
           {"schema_version", kSchemaVersion},
           {"pgslow_version", run.pgslow_version},
           {"scenario", run.scenario},
           {"description", run.description},
           {"started_at", run.started_at},
           {"wall_seconds", number(run.wall_seconds)},
           {"server_version", run.server_version},
           {"server_major", run.server_major},
           {"target", run.target},
           {"workload", run.workload},
           {"scale", run.scale},
           {"data_bytes", run.data_bytes},
           {"warmup_s", number(run.warmup_s)},
           {"duration_s", number(run.duration_s)},
           {"repeats", run.repeats},
           {"mode", run.mode},
           {"sweep", run.sweep},
           {"machine",
            {{"cores", run.machine.cores},
             {"memory_bytes", run.machine.memory_bytes},
             {"kernel", run.machine.kernel},
             {"hostname", run.machine.hostname}}},
           {"stages", stages},
           {"references", references},
           {"expectations", expectations}};
  if (!run.envelope.empty()) doc["envelope"] = run.envelope;  // absent: the server ran unlimited
  // Invalid UTF-8 in a log excerpt must not make the whole report unwritable.
  return doc.dump(2, ' ', false, Json::error_handler_t::replace) + "\n";
}

Run read_json(const std::string& text, const std::string& source) {
  Json doc;
  try {
    doc = Json::parse(text);
  } catch (const Json::parse_error& e) {
    // nlohmann's message carries the line and column of the syntax error.
    throw ReadError(fmt::format("{}: not valid JSON: {}", source, e.what()));
  }
  const Reader r(doc, "", source);
  std::string schema;
  r.string("schema", schema);
  if (schema != "pgslow-report") {
    throw ReadError(
        fmt::format("{}: not a pgslow report (expected \"schema\": \"pgslow-report\")", source));
  }
  Run run;
  r.number("schema_version", run.schema_version);
  if (run.schema_version < 1 || run.schema_version > kSchemaVersion) {
    throw ReadError(
        fmt::format("{}: schema_version {} is not supported (this pgslow reads 1 to {}); "
                    "re-render it with the pgslow that wrote it",
                    source, run.schema_version, kSchemaVersion));
  }
  r.string("pgslow_version", run.pgslow_version);
  r.string("scenario", run.scenario);
  r.string("description", run.description);
  r.string("started_at", run.started_at);
  r.number("wall_seconds", run.wall_seconds);
  r.string("server_version", run.server_version);
  r.number("server_major", run.server_major);
  r.string("target", run.target);
  r.string("envelope", run.envelope);
  r.string("workload", run.workload);
  r.number("scale", run.scale);
  r.number("data_bytes", run.data_bytes);
  r.number("warmup_s", run.warmup_s);
  r.number("duration_s", run.duration_s);
  r.number("repeats", run.repeats);
  r.string("mode", run.mode);
  r.array("sweep", [&](const Json& j, const std::string& path) {
    if (!j.is_string()) throw ReadError(fmt::format("{}: {}: expected a string", source, path));
    run.sweep.push_back(j.get<std::string>());
  });
  const Reader machine = r.child("machine");
  machine.number("cores", run.machine.cores);
  machine.number("memory_bytes", run.machine.memory_bytes);
  machine.string("kernel", run.machine.kernel);
  machine.string("hostname", run.machine.hostname);
  r.array("stages", [&](const Json& j, const std::string& path) {
    run.stages.push_back(read_stage(Reader(j, path, source), source));
  });
  // Reports before sweep_values name each point after its values ("rate 75%, clients 256").
  for (auto& st : run.stages) {
    if (!st.sweep_point || !st.sweep_values.empty()) continue;
    std::size_t at = 0;
    while (at < st.name.size()) {
      std::size_t end = st.name.find(", ", at);
      if (end == std::string::npos) end = st.name.size();
      const std::string part = st.name.substr(at, end - at);
      const auto space = part.find(' ');
      if (space != std::string::npos)
        st.sweep_values[part.substr(0, space)] = part.substr(space + 1);
      at = end + 2;
    }
  }
  // Schema 2: the interleaved reference runs (absent in schema 1: no drift, no interval
  // beyond the repeats).
  r.array("references", [&](const Json& j, const std::string& path) {
    Reader e(j, path, source);
    ReferenceRun ref;
    e.number("after_stage", ref.after_stage);
    e.number("tps", ref.tps);
    e.number("transactions", ref.transactions);
    e.number("duration_s", ref.duration_s);
    e.array("tps_per_second", [&](const Json& v, const std::string& p) {
      ref.tps_per_second.push_back(read_number(v, p, source));
    });
    e.number("server_cpu_s", ref.server_cpu_s);
    e.string("error", ref.error);
    if (ref.after_stage >= run.stages.size())
      throw ReadError(fmt::format("{}: {}.after_stage: expected a stage index below {}", source,
                                  path, run.stages.size()));
    run.references.push_back(std::move(ref));
  });
  r.array("expectations", [&](const Json& j, const std::string& path) {
    Reader e(j, path, source);
    Expectation x;
    e.string("text", x.text);
    e.boolean("passed", x.passed);
    e.string("detail", x.detail);
    run.expectations.push_back(std::move(x));
  });
  return run;
}

void JsonReporter::report(const Run& run, std::ostream& out) const {
  out << to_json(run);
}

}  // namespace pgslow::report
