#pragma once
// What a search judges a configuration by (`pgslow bisect --metric --direction`, a scenario's
// attribution): the one definition of each metric, its value of a run, its direction and its
// words.
//
// The search works on samples where higher is better (the metric itself, or the reciprocal of
// a cost), so "slower" is a lower log-mean for every metric and every statistic of the search
// holds unchanged. Looking for what made it BETTER (--direction faster) flips the samples once
// more, here (search_sample), and nowhere else. Reports turn samples and ratios back into the
// metric's own terms ("CPU/tx +12.0%", "p99 2.1x higher", "WAL/tx -35.0%"), never an inverted
// number.

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "results/model.h"

namespace pgslow::results {

// struct Metric (model.h: the results record it): kTps, kCpuPerTx, kP99, or an evidence key per
// committed transaction; `better` is the direction.

// "tps", "cpu_per_tx", "p99", "wal_bytes_per_tx" (wal_bytes per transaction), or an evidence key
// the report compares per transaction ("blocks_read", "temp_bytes": evidence_info.h); nullopt
// for any other name. The direction is the caller's (slower unless set).
std::optional<Metric> parse_metric(std::string_view name);
std::string metric_name(const Metric& m);
// Every valid name, for errors: "tps, p99, cpu_per_tx, wal_bytes_per_tx or an evidence key
// counted per transaction (blocks_read, temp_bytes, ...)".
std::string metric_names();
// Every name a user could mean, for "did you mean": the metrics and the per-transaction keys.
std::vector<std::string> metric_name_list();
// Whether a higher value of the metric itself is better for the user (TPS), whatever the
// direction of the search.
bool higher_is_better(const Metric& m);
// "slower" or "faster": which way the search looks (Metric::better).
std::string direction_name(const Metric& m);
// The short label reports put before a change: "TPS", "CPU/tx", "p99", "WAL/tx",
// "blocks_read/tx".
std::string metric_label(const Metric& m);

// A run's value in the metric's own unit (TPS; CPU seconds per transaction; µs; the evidence
// key's unit per committed transaction, read from `evidence`, the run's own evidence). nullopt
// when the run has none: no transaction finished, the server's CPU time was not measured, or
// the evidence key is missing (metric_missing says why). An evidence count below a thousandth
// per transaction reads as a thousandth: the search works on logs, and none is not zero cost.
std::optional<double> metric_value(const Metric& m, const Measurement& run,
                                   const std::map<std::string, double>& evidence = {});
// Whether metric_value needs the run's own evidence (an evidence key per transaction).
bool needs_evidence(const Metric& m);
// Why a run can lack the metric, and what to do instead: one sentence.
std::string metric_missing(const Metric& m);

// A value as the search's sample (higher is better in the search's direction) and back: the
// value, or its reciprocal for a cost, flipped once more when the search looks for what made
// it better. The same function both ways.
double search_sample(const Metric& m, double value);
// The sample of a configuration the server rejects: worst for the user on this metric, so a
// cause when the search looks for what made it worse, never a helper when it looks for what
// made it better (experiment/lab_measurer.h's failure rule).
double rejected_sample(const Metric& m);
// A ratio of search samples (new / reference) as a ratio of the metric's values.
double metric_ratio(const Metric& m, double search_ratio);
// An interval of search samples in the metric's own terms (bounds swap when the ratio is
// inverted); applied twice it gives the interval back.
EffectInterval in_metric_terms(const Metric& m, const EffectInterval& e);

// A search sample in one fixed unit per metric, for tables and the figures beside them: TPS,
// CPU milliseconds per transaction, p99 milliseconds, bytes or counts per transaction;
// metric_unit names it ("TPS", "ms CPU/tx", "ms p99", "B WAL/tx", "blocks_read/tx").
double metric_in_unit(const Metric& m, double sample);
std::string metric_unit(const Metric& m);
// A search sample for a reader: "1,234 TPS", "0.412 ms CPU/tx", "12.3 ms p99".
std::string format_metric_value(const Metric& m, double sample);
// A change (a ratio of search samples, new / reference) in the metric's own terms: TPS as
// format_change ("-85.1% (6.7x slower)"), a cost with its label: "CPU/tx +12.0%",
// "p99 2.1x higher", "WAL/tx -30.0%", "blocks_read/tx 3.0x lower".
std::string format_metric_change(const Metric& m, double search_ratio);
// What a configuration the search looks for and its opposite are, for the user: "slower" /
// "faster" (TPS, p99), "costlier" / "cheaper" (a cost per transaction); swapped for
// --direction faster (the search then looks for "faster").
std::string worse_word(const Metric& m);
std::string better_word(const Metric& m);

}  // namespace pgslow::results
