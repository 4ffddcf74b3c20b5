#include "report/json.h"

#include <fmt/format.h>

#include <cmath>
#include <nlohmann/json.hpp>
#include <ostream>

#include "report/json_fields.h"
#include "report/registry.h"
#include "results/metric.h"
#include "results/summary.h"
#include "results/waits.h"

namespace pgslow::report {

using json_schema::Json;
using json_schema::Place;

Attribution attribution_in_metric_terms(const Attribution& a) {
  Attribution out = a;
  auto convert = [&a](EffectInterval& e) { e = in_metric_terms(a.metric, e); };
  convert(out.stage);
  if (out.harmless) convert(*out.harmless);
  for (auto& k : out.knobs) {
    if (k.alone) convert(*k.alone);
    if (k.without) convert(*k.without);
  }
  return out;
}

namespace json_schema {

void write_metric(const Attribution& a, Json& out) {
  out["metric"] = metric_name(a.metric);
  out["direction"] = direction_name(a.metric);
}

void read_metric(Attribution& a, const Json& in, const Place& place) {
  std::string metric = "tps";        // reports before version 3's metric judged by TPS
  std::string direction = "slower";  // reports before --direction looked for "slower"
  read_field(metric, in, "metric", place);
  read_field(direction, in, "direction", place);
  const auto m = parse_metric(metric);
  if (!m || (direction != "slower" && direction != "faster")) {
    throw ReadError(fmt::format("{}: {}.metric {} ({}) is not one of {}, slower or faster",
                                place.source, place.path, metric, direction, metric_names()));
  }
  a.metric = *m;
  a.metric.better = direction == "faster";
}

void write_attribution(const StageResult& s, Json& out) {
  out["attribution"] =
      s.attribution ? write(attribution_in_metric_terms(*s.attribution)) : Json(nullptr);
}

void read_attribution(StageResult& s, const Json& in, const Place& place) {
  Attribution a;
  if (read_field(a, in, "attribution", place)) s.attribution = attribution_in_metric_terms(a);
}

void write_failure(const StageResult& s, Json& out) {
  if (s.failure != results::StageFailure::kNone) out["failure"] = results::failure_name(s.failure);
}

void read_failure(StageResult& s, const Json& in, const Place& place) {
  std::string name;
  if (!read_field(name, in, "failure", place)) return;  // it ran, or a report before `failure`
  const auto failure = results::parse_failure(name);
  if (!failure || *failure == results::StageFailure::kNone)
    throw ReadError(fmt::format(
        "{}: {}.failure {} is not one of rejected, run failed, stopped early or interrupted",
        place.source, place.path, name));
  s.failure = *failure;
}

void write_wait_shares(const WaitProfile& w, Json& out) {
  Json shares = Json::object();
  for (const auto& s : results::wait_shares(w)) shares[s.wait] = number(s.share);
  out["shares"] = shares;
}

void write_schema_name(const Run&, Json& out) {
  out["schema"] = "pgslow-report";
}

// Checked by read_json before anything else is read.
void read_schema_name(Run&, const Json&, const Place&) {}

}  // namespace json_schema

Json measurement_json(const Measurement& m) {
  return json_schema::write(m);
}

nlohmann::json attribution_json(const Attribution& a) {
  return nlohmann::json::parse(json_schema::write(attribution_in_metric_terms(a)).dump());
}

namespace {

// What the report says of each stage against the baseline, axis by axis (written for readers,
// derived from the measurements above it: never read back).
// The stage's throughput and p99 (µs; 0: not recorded) over time: per second of its median
// run, or per block of a switchback run (with which configuration each block ran).
Json series_json(const StageResult& stage) {
  Json tps = Json::array();
  Json p99 = Json::array();
  Json stage_blocks = Json::array();
  if (stage.switchback) {
    for (const auto& b : stage.switchback->blocks) {
      tps.push_back(json_schema::number(
          b.seconds > 0 ? static_cast<double>(b.transactions) / b.seconds : 0.0));
      p99.push_back(json_schema::number(b.p99_us));
      stage_blocks.push_back(b.stage);
    }
    return {{"per", "block"}, {"tps", tps}, {"p99_us", p99}, {"stage_block", stage_blocks}};
  }
  if (const Measurement* m = median_repeat(stage)) {
    for (double v : m->tps_per_second) tps.push_back(json_schema::number(v));
    for (double v : m->p99_per_second) p99.push_back(json_schema::number(v));
  }
  return {{"per", "second"}, {"tps", tps}, {"p99_us", p99}};
}

Json effects_json(const StageResult& stage, const StageSummary& s) {
  return {{"verdict", s.verdict.cell},
          {"verdict_text", s.verdict.sentence},
          {"design", s.design},
          {"axes", axes_json(s.axes)},
          {"series", series_json(stage)}};
}

}  // namespace

nlohmann::ordered_json axes_json(const std::vector<AxisChange>& axes) {
  Json out = Json::array();
  for (const auto& a : axes) {
    const Interval& i = a.change.interval;
    Json axis = {{"axis", std::string(a.axis->key)},
                 {"label", std::string(a.axis->label)},
                 {"ratio", json_schema::number(a.change.ratio)},
                 {"interval_known", i.known}};
    if (i.known) {
      axis["low"] = json_schema::number(i.low);
      axis["high"] = json_schema::number(i.high);
      axis["confidence"] = json_schema::number(i.confidence);
      axis["df"] = json_schema::number(i.df);
      axis["could_see"] = json_schema::number(i.detectable());
    }
    axis["measurable"] = a.change.measurable;
    axis["text"] = axis_change_text(a);
    out.push_back(std::move(axis));
  }
  return out;
}

std::string to_json(const Run& run) {
  Json doc = json_schema::write(run);
  const auto summaries = summarize(run);
  for (const auto& s : summaries)
    if (!s.axes.empty() && s.index < doc["stages"].size())
      doc["stages"][s.index]["effects"] = effects_json(run.stages[s.index], s);
  doc["schema_version"] = kSchemaVersion;
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
  const Place top{source, ""};
  if (!doc.is_object()) top.fail("an object");
  const auto schema = doc.find("schema");
  if (schema == doc.end() || !schema->is_string() || *schema != "pgslow-report") {
    throw ReadError(
        fmt::format("{}: not a pgslow report (expected \"schema\": \"pgslow-report\")", source));
  }
  Run run;
  json_schema::read_field(run.schema_version, doc, "schema_version", top);
  if (run.schema_version < 1 || run.schema_version > kSchemaVersion) {
    throw ReadError(
        fmt::format("{}: schema_version {} is not supported (this pgslow reads 1 to {}); "
                    "re-render it with the pgslow that wrote it",
                    source, run.schema_version, kSchemaVersion));
  }
  json_schema::read(run, doc, top);
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
  // Schema 2's interleaved reference runs each follow a stage of this report.
  for (std::size_t i = 0; i < run.references.size(); ++i) {
    if (run.references[i].after_stage >= run.stages.size())
      throw ReadError(fmt::format("{}: references[{}].after_stage: expected a stage index below {}",
                                  source, i, run.stages.size()));
  }
  return run;
}

void render_json(const Run& run, std::ostream& out) {
  out << to_json(run);
}

}  // namespace pgslow::report
