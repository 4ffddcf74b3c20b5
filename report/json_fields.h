#pragma once
// report.json's schema as data: each struct of the results model and the keys it is written
// under, in the order they appear (docs/report-schema.md). report/json.cpp writes and reads
// through these lists only; a new field is one line here (and one in the schema doc).

#include "report/json_schema.h"
#include "report/views.h"
#include "results/load_fields.h"
#include "results/metric.h"

namespace pgslow::report {

// One stage's attribution with its intervals in its metric's own terms (a cost's ratio above
// 1 is worse), as report.json holds it; applied again, it turns them back.
Attribution attribution_in_metric_terms(const Attribution& a);

namespace json_schema {

template <>
struct Fields<LatencySummary> {
  using S = LatencySummary;
  static constexpr auto list = std::tuple{
      field("mean_us", &S::mean_us), field("p50_us", &S::p50_us), field("p90_us", &S::p90_us),
      field("p95_us", &S::p95_us),   field("p99_us", &S::p99_us), field("p999_us", &S::p999_us),
      field("max_us", &S::max_us)};
};

template <>
struct Fields<TxTypeResult> {
  using S = TxTypeResult;
  static constexpr auto list = std::tuple{
      field("name", &S::name),
      field("committed", &S::committed),
      field("rolled_back", &S::rolled_back),
      field("failed", &S::failed),
      field("retries", &S::retries),
      field("retry_time_us", &S::retry_time_us, [](const S& t) { return t.retries > 0; }),
      field("latency", &S::latency)};
};

template <>
struct Fields<TypeSeries> {
  using S = TypeSeries;
  static constexpr auto list = std::tuple{field("name", &S::name), field("finished", &S::finished),
                                          field("failed", &S::failed), field("p90_us", &S::p90_us)};
};

template <>
struct Fields<HeadlineFigure> {
  using S = HeadlineFigure;
  static constexpr auto list = std::tuple{field("name", &S::name), field("value", &S::value),
                                          field("unit", &S::unit), field("warning", &S::warning)};
};

template <>
struct Fields<AuditRow> {
  using S = AuditRow;
  static constexpr auto list =
      std::tuple{field("clause", &S::clause), field("rule", &S::rule),
                 field("measured", &S::measured), field("passed", &S::passed)};
};

// A run's or block's neighbours' CPU only when it was measured (no null in older shapes).
template <typename S>
constexpr auto neighbour_cpu_measured = [](const S& s) { return s.neighbour_cpu.has_value(); };

template <>
struct Fields<Measurement> {
  using S = Measurement;
  // Only when measured, so reports of remote servers and plain runs carry no zero; each pair
  // below is written together.
  static constexpr auto in_flight = [](const S& m) { return m.in_flight_at_end > 0; };
  static constexpr auto cpu_measured = [](const S& m) { return m.server_cpu_s > 0; };
  static constexpr auto type_series = [](const S& m) { return !m.type_series.empty(); };
  static constexpr auto memory_measured = [](const S& m) {
    return m.idle_connections_measured > 0;
  };
  static constexpr auto list =
      std::tuple{field("duration_s", &S::duration_s),
                 field("committed", &S::committed),
                 field("rolled_back", &S::rolled_back),
                 field("failed", &S::failed),
                 field("retries", &S::retries),
                 field("reconnects", &S::reconnects),
                 field("tps", &S::tps),
                 field("headline", &S::headline),
                 field("audit", &S::audit, [](const S& m) { return !m.audit.empty(); }),
                 field("latency", &S::latency),
                 field("schedule_lag", &S::schedule_lag),
                 field("pool_wait", &S::pool_wait),
                 field("connect_time", &S::connect_time),
                 field("on_time_ratio", &S::on_time_ratio),
                 field("by_type", &S::by_type),
                 field("type_series_interval_s", &S::type_series_interval_s, type_series),
                 field("type_series", &S::type_series, type_series),
                 field("failures_by_class", &S::failures_by_class),
                 field("clients_requested", &S::clients_requested),
                 field("clients_connected", &S::clients_connected),
                 field("connections_refused", &S::connections_refused),
                 field("tps_per_second", &S::tps_per_second),
                 field("p99_per_second", &S::p99_per_second,
                       [](const S& m) { return !m.p99_per_second.empty(); }),
                 field("in_flight_at_end", &S::in_flight_at_end, in_flight),
                 field("in_flight_longest_us", &S::in_flight_longest_us, in_flight),
                 field("server_cpu_s", &S::server_cpu_s, cpu_measured),
                 field("client_cpu_s", &S::client_cpu_s, cpu_measured),
                 field("neighbour_cpu", &S::neighbour_cpu, neighbour_cpu_measured<S>),
                 field("idle_connection_pss_bytes", &S::idle_connection_pss_bytes, memory_measured),
                 field("idle_connections_measured", &S::idle_connections_measured, memory_measured),
                 field("per_tx", &S::per_tx, [](const S& m) { return !m.per_tx.empty(); })};
};

template <>
struct Fields<KnobChange> {
  using S = KnobChange;
  static constexpr auto list =
      std::tuple{field("name", &S::name), field("old_value", &S::old_value),
                 field("new_value", &S::new_value), field("apply_by", &S::apply_by)};
};

template <>
struct Fields<SkippedKnob> {
  using S = SkippedKnob;
  static constexpr auto list =
      std::tuple{field("name", &S::name), field("value", &S::value), field("reason", &S::reason)};
};

// Every row of results/load_fields.h, under its name.
template <>
struct Fields<LoadSettings> {
  static constexpr auto list = std::apply(
      [](const auto&... row) { return std::tuple{field(row.name, row.member, row.written)...}; },
      results::kLoadFields);
};

template <>
struct Fields<EffectInterval> {
  using S = EffectInterval;
  static constexpr auto list =
      std::tuple{field("ratio", &S::ratio),
                 field("low", &S::low),
                 field("high", &S::high),
                 field("runs", &S::runs),
                 field("reference_runs", &S::reference_runs),
                 field("transactions", &S::transactions),
                 field("detectable", &S::detectable, [](const S& e) { return e.detectable > 0; })};
};

template <>
struct Fields<KnobEvidence> {
  using S = KnobEvidence;
  static constexpr auto list = std::tuple{field("key", &S::key), field("reference", &S::reference),
                                          field("value", &S::value)};
};

template <>
struct Fields<Interval> {
  using S = Interval;
  static constexpr auto list = std::tuple{field("ratio", &S::ratio),
                                          field("low", &S::low),
                                          field("high", &S::high),
                                          field("df", &S::df),
                                          field("confidence", &S::confidence),
                                          field("known", &S::known)};
};

template <>
struct Fields<AxisEffect> {
  using S = AxisEffect;
  static constexpr auto list = std::tuple{field("axis", &S::axis), field("interval", &S::interval)};
};

template <>
struct Fields<KnobEffect> {
  using S = KnobEffect;
  static constexpr auto list = std::tuple{field("knobs", &S::knobs),
                                          field("values", &S::values),
                                          field("verdict", &S::verdict),
                                          field("alone", &S::alone),
                                          field("without", &S::without),
                                          field("evidence", &S::evidence),
                                          field("note", &S::note),
                                          field("axes", &S::axes, [](const S& k) { return !k.axes.empty(); })};
};

void write_metric(const Attribution& a, Json& out);
void read_metric(Attribution& a, const Json& in, const Place& place);

template <>
struct Fields<Attribution> {
  using S = Attribution;
  static constexpr auto list =
      std::tuple{custom<S>(write_metric, read_metric),
                 field("headline", &S::headline),
                 field("reference", &S::reference),
                 field("stage", &S::stage),
                 field("knobs", &S::knobs),
                 field("harmless", &S::harmless),
                 field("harmless_axes", &S::harmless_axes,
                       [](const S& a) { return !a.harmless_axes.empty(); }),
                 field("extra_runs", &S::extra_runs),
                 field("restarts", &S::restarts),
                 field("seconds", &S::seconds),
                 field("noise", &S::noise),
                 field("note", &S::note)};
};

void write_wait_shares(const WaitProfile& w, Json& out);

// A wait profile: its samples, and per wait the backend-samples; "shares" is written for
// readers and derived from the counts when read.
template <>
struct Fields<WaitProfile> {
  using S = WaitProfile;
  static constexpr auto list =
      std::tuple{field("samples", &S::samples), field("interval_ms", &S::interval_ms),
                 field("backends", &S::backends), custom<S>(write_wait_shares, written_only<S>)};
};

template <>
struct Fields<SwitchbackBlock> {
  using S = SwitchbackBlock;
  static constexpr auto latency_recorded = [](const S& b) { return b.p99_us > 0; };
  static constexpr auto list =
      std::tuple{field("stage", &S::stage),
                 field("seconds", &S::seconds),
                 field("transactions", &S::transactions),
                 field("server_cpu_s", &S::server_cpu_s),
                 field("client_cpu_s", &S::client_cpu_s),
                 field("neighbour_cpu", &S::neighbour_cpu, neighbour_cpu_measured<S>),
                 field("per_tx", &S::per_tx, [](const S& b) { return !b.per_tx.empty(); }),
                 field("p95_us", &S::p95_us, latency_recorded),
                 field("p99_us", &S::p99_us, latency_recorded)};
};

template <>
struct Fields<Switchback> {
  using S = Switchback;
  static constexpr auto list =
      std::tuple{field("block_s", &S::block_s),
                 field("settle_s", &S::settle_s),
                 field("why", &S::why),
                 field("precision", &S::precision),
                 field("looks", &S::looks),
                 field("confidence", &S::confidence, [](const S& s) { return s.confidence > 0; }),
                 field("stopped", &S::stopped),
                 field("blocks", &S::blocks),
                 field("reference_evidence", &S::reference_evidence),
                 field("reference_waits", &S::reference_waits,
                       [](const S& s) { return s.reference_waits.has_value(); })};
};

// The attribution is written in its metric's terms (attribution_in_metric_terms).
void write_attribution(const StageResult& s, Json& out);
void read_attribution(StageResult& s, const Json& in, const Place& place);
// `failure`, written only for a stage that failed (its `error` says why).
void write_failure(const StageResult& s, Json& out);
void read_failure(StageResult& s, const Json& in, const Place& place);

template <>
struct Fields<StageResult> {
  using S = StageResult;
  // The looks, only for a stage measured to a precision or until it was resolved.
  static constexpr auto to_a_precision = [](const S& s) {
    return s.precision > 0 || !s.stopped.empty();
  };
  static constexpr auto list = std::tuple{
      field("name", &S::name),
      field("description", &S::description),
      field("changes", &S::changes),
      field("own_axes", &S::own_axes, [](const S& s) { return !s.own_axes.empty(); }),
      field("skipped", &S::skipped),
      field("warnings", &S::warnings),
      field("load", &S::load),
      field("sweep_point", &S::sweep_point),
      field("repeats", &S::repeats),
      field("evidence", &S::evidence),
      field("evidence_seconds", &S::evidence_seconds),
      field("reset_seconds", &S::reset_seconds),
      field("log_excerpt", &S::log_excerpt),
      field("error", &S::error),
      custom<S>(write_failure, read_failure),
      custom<S>(write_attribution, read_attribution),
      field("switchback", &S::switchback),
      field("sweep_values", &S::sweep_values, [](const S& s) { return !s.sweep_values.empty(); }),
      field("envelope", &S::envelope, [](const S& s) { return !s.envelope.empty(); }),
      field("precision", &S::precision, to_a_precision),
      field("looks", &S::looks, to_a_precision),
      field("confidence", &S::confidence, [](const S& s) { return s.confidence > 0; }),
      field("stopped", &S::stopped, to_a_precision),
      field("waits", &S::waits, [](const S& s) { return s.waits.has_value(); })};
};

template <>
struct Fields<Machine> {
  using S = Machine;
  static constexpr auto list =
      std::tuple{field("cores", &S::cores), field("memory_bytes", &S::memory_bytes),
                 field("kernel", &S::kernel), field("hostname", &S::hostname)};
};

template <>
struct Fields<Expectation> {
  using S = Expectation;
  static constexpr auto list =
      std::tuple{field("text", &S::text), field("passed", &S::passed), field("detail", &S::detail)};
};

template <>
struct Fields<ReferenceRun> {
  using S = ReferenceRun;
  static constexpr auto list =
      std::tuple{field("after_stage", &S::after_stage),
                 field("tps", &S::tps),
                 field("transactions", &S::transactions),
                 field("duration_s", &S::duration_s),
                 field("tps_per_second", &S::tps_per_second),
                 field("server_cpu_s", &S::server_cpu_s),
                 field("neighbour_cpu", &S::neighbour_cpu, neighbour_cpu_measured<S>),
                 field("per_tx", &S::per_tx, [](const S& r) { return !r.per_tx.empty(); }),
                 field("latency", &S::latency, [](const S& r) { return r.latency.p99_us > 0; }),
                 field("error", &S::error)};
};

void write_schema_name(const Run& run, Json& out);
void read_schema_name(Run& run, const Json& in, const Place& place);

template <>
struct Fields<Run> {
  using S = Run;
  static constexpr auto list = std::tuple{
      custom<S>(write_schema_name, read_schema_name), field("schema_version", &S::schema_version),
      field("pgslow_version", &S::pgslow_version), field("scenario", &S::scenario),
      field("description", &S::description), field("started_at", &S::started_at),
      field("wall_seconds", &S::wall_seconds), field("server_version", &S::server_version),
      field("server_major", &S::server_major), field("target", &S::target),
      field("workload", &S::workload), field("scale", &S::scale),
      field("data_bytes", &S::data_bytes), field("warmup_s", &S::warmup_s),
      field("duration_s", &S::duration_s), field("repeats", &S::repeats), field("mode", &S::mode),
      field("sweep", &S::sweep), field("machine", &S::machine), field("stages", &S::stages),
      field("references", &S::references), field("expectations", &S::expectations),
      // absent: the server ran unlimited
      field("envelope", &S::envelope, [](const S& r) { return !r.envelope.empty(); }),
      // absent: no data reset (bench --no-reset), or a run of a pgslow that did not say
      field("reset_method", &S::reset_method, [](const S& r) { return !r.reset_method.empty(); }),
      // absent: the clients reached the server directly (or through the driver's pool)
      field("pooler", &S::pooler, [](const S& r) { return !r.pooler.empty(); })};
};

}  // namespace json_schema
}  // namespace pgslow::report
