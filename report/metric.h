#pragma once
// What a search judges a configuration by (`pgslow bisect --metric`, a scenario's attribution):
// the one definition of each metric, its value of a run, its direction and its words.
//
// The search works on samples where higher is better (the metric itself, or the reciprocal of
// a cost), so "slower" is a lower log-mean for every metric and every statistic of the search
// holds unchanged. Reports turn samples and ratios back into the metric's own terms
// ("CPU/tx +12.0%", "p99 2.1x higher"), never an inverted number.

#include <optional>
#include <string>
#include <string_view>

#include "report/model.h"

namespace pgslow::report {

// enum class Metric (model.h: the results record it): kTps, kCpuPerTx, kP99.

// "tps", "cpu_per_tx", "p99"; nullopt for any other name.
std::optional<Metric> parse_metric(std::string_view name);
std::string metric_name(Metric m);
// Every valid name, for errors: "tps, cpu_per_tx or p99".
std::string metric_names();
bool higher_is_better(Metric m);
// The short label reports put before a change: "TPS", "CPU/tx", "p99".
std::string metric_label(Metric m);

// A run's value in the metric's own unit (TPS; CPU seconds per transaction; µs). nullopt when
// the run has none: no transaction finished, or (cpu_per_tx) the server's CPU time was not
// measured (metric_missing says why).
std::optional<double> metric_value(Metric m, const Measurement& run);
// Why a run can lack the metric, and what to do instead: one sentence.
std::string metric_missing(Metric m);

// A value as the search's sample (higher is better) and back: the value, or its reciprocal for
// a cost. The same function both ways.
double search_sample(Metric m, double value);
// A ratio of search samples (new / reference) as a ratio of the metric's values.
double metric_ratio(Metric m, double search_ratio);
// An interval of search samples in the metric's own terms (a cost's bounds swap); applied
// twice it gives the interval back.
EffectInterval in_metric_terms(Metric m, const EffectInterval& e);

// A search sample in one fixed unit per metric, for tables and the figures beside them: TPS,
// CPU milliseconds per transaction, p99 milliseconds; metric_unit names it ("TPS",
// "ms CPU/tx", "ms p99").
double metric_in_unit(Metric m, double sample);
std::string metric_unit(Metric m);
// A search sample for a reader: "1,234 TPS", "0.412 ms CPU/tx", "12.3 ms p99".
std::string format_metric_value(Metric m, double sample);
// A change (a ratio of search samples, new / reference) in the metric's own terms: TPS as
// format_change ("-85.1% (6.7x slower)"), a cost with its label: "CPU/tx +12.0%",
// "p99 2.1x higher", "CPU/tx -30.0%", "p99 3.0x lower".
std::string format_metric_change(Metric m, double search_ratio);
// What a worse and a better configuration are: "slower"/"faster"; a CPU cost is "costlier" or
// "cheaper".
std::string worse_word(Metric m);
std::string better_word(Metric m);

}  // namespace pgslow::report
