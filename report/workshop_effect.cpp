#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>
#include <sstream>

#include "common/strings.h"
#include "report/axes_view.h"
#include "report/cliff_view.h"
#include "report/json.h"
#include "report/json_schema.h"
#include "report/text.h"
#include "report/workshop.h"
#include "results/evidence_info.h"
#include "results/metric.h"
#include "results/stats.h"
#include "results/summary.h"
#include "results/waits.h"

// The workshop's effects: one stage against another (report::Effect), how they read, and
// the latency check of a reveal.

namespace pgslow::report {

Effect measure_effect(const StageResult& stage, const StageResult& reference) {
  Effect e;
  if (stage.repeats.empty() || reference.repeats.empty()) return e;
  const Runs a = runs_of(stage);
  const Runs b = runs_of(reference);
  e.transactions = a.transactions;
  e.reference_transactions = b.transactions;
  if (b.log_tps.empty()) return e;  // the reference completed nothing: no ratio exists
  e.known = true;
  // A stage that completed nothing: the ratio is 0 and no interval on the log scale exists.
  if (a.log_tps.empty()) {
    e.verdict = Verdict::kSlower;
    return e;
  }
  const Change c = compare_runs(a, b);
  e.ratio = c.ratio;
  e.interval = c.interval;
  e.verdict = verdict_of(c.interval);
  return e;
}

void add_axes_in_run(Effect& e, const Run& run, const StageResult& stage) {
  if (run.stages.empty() || &stage < run.stages.data() ||
      &stage >= run.stages.data() + run.stages.size())
    return;
  const auto i = static_cast<std::size_t>(&stage - run.stages.data());
  const StageSummary s = summarize(run).at(i);
  e.axes = s.axes;
  e.axes_verdict = s.verdict;
}

std::vector<std::string> effect_axes_lines(const Effect& e, std::size_t width) {
  if (e.axes.empty() || e.axes_verdict.sentence.empty()) return {};
  std::vector<std::string> out{"every axis: " + e.axes_verdict.sentence};
  for (const auto& l : wrap_items(axis_items(e.axes, true), width)) out.push_back(l);
  return out;
}

Effect effect_in_run(const Run& run, const StageResult& stage, const StageResult& reference) {
  Effect e = measure_effect(stage, reference);
  if (!e.known || e.ratio <= 0 || run.stages.empty() || &reference != &run.stages.front()) return e;
  const auto i = static_cast<std::size_t>(&stage - run.stages.data());  // stage is run's
  const StageSummary s = summarize(run).at(i);
  e.axes = s.axes;
  e.axes_verdict = s.verdict;
  const std::optional<Change>& c = s.vs_baseline;
  if (!c) return e;
  e.ratio = c->ratio;
  e.interval = c->interval;
  e.verdict = verdict_of(c->interval);
  e.reference_transactions = c->reference_transactions;
  return e;
}

std::string describe_ratio(double ratio) {
  if (ratio > 0 && ratio < 0.5) return fmt::format("{}x slower", format_number(1 / ratio, 2));
  return format_change(ratio);
}

std::string describe_effect(const Effect& e) {
  if (!e.known) return "not measured (a stage did not run)";
  const std::string counts = fmt::format("{} vs {} transactions", format_count(e.transactions),
                                         format_count(e.reference_transactions));
  if (e.ratio <= 0) return fmt::format("nothing completed ({})", counts);
  switch (e.verdict) {
    case Verdict::kSlower:
    case Verdict::kFaster:
      // At the level it was stated at: Holm's rule over the stage's axes states TPS above 95%.
      return fmt::format("{} ({} interval {} to {}; {})", describe_ratio(e.ratio),
                         format_confidence(e.interval.confidence), describe_ratio(e.interval.low),
                         describe_ratio(e.interval.high), counts);
    case Verdict::kWithinNoise:
      return fmt::format("{} ({}; {})", format_verdict(e.interval), format_change(e.ratio), counts);
    case Verdict::kUnknown:
      break;
  }
  return fmt::format("{} ({}; {})", format_change(e.ratio), format_verdict(e.interval), counts);
}

std::string few_runs_hint(const Effect& e) {
  if (!e.known || e.verdict != Verdict::kWithinNoise ||
      e.interval.df >= results::kFewDegreesOfFreedom)
    return {};
  return "the noise rests on " + results::degrees_of_freedom_text(e.interval.df) +
         "; --repeats 3 with a shorter --duration gives it enough to call an effect on a machine "
         "this noisy";
}

LatencyCheck latency_check(const StageResult& stage) {
  LatencyCheck c;
  std::uint64_t n = 0;
  for (const Measurement& m : stage.repeats) {
    const auto k = m.committed + m.rolled_back;
    c.mean_us += m.latency.mean_us * static_cast<double>(k);
    n += k;
  }
  if (n > 0) c.mean_us /= static_cast<double>(n);
  if (const Measurement* m = median_repeat(stage)) {
    c.p50_us = m->latency.p50_us;
    c.p99_us = m->latency.p99_us;
  }
  std::vector<double> tps;
  for (const Measurement& m : stage.repeats) tps.push_back(m.tps);
  c.tps = median(tps);
  c.clients = stage.load.clients;
  if (stage.load.rate <= 0 && c.tps > 0) c.littles_law_us = c.clients / c.tps * 1e6;
  return c;
}

std::vector<EvidenceRow> evidence_rows(const StageResult& stage, const StageResult& reference,
                                       const std::vector<std::string>& keys) {
  std::vector<EvidenceRow> rows;
  std::vector<std::string> wanted = keys;
  if (wanted.empty()) {
    for (const EvidenceMove& m : top_movers(evidence_moves(stage, reference), 6))
      wanted.push_back(m.key);
  }
  for (const std::string& key : wanted) {
    auto a = normalised_evidence(stage, key);
    auto b = normalised_evidence(reference, key);
    if (!a || !b) continue;
    rows.push_back(
        {evidence_label(key), format_evidence_value(key, *b), format_evidence_value(key, *a)});
  }
  return rows;
}

std::vector<EvidenceRow> evidence_rows(const std::map<std::string, double>& stage,
                                       const std::map<std::string, double>& reference,
                                       const std::vector<std::string>& keys) {
  std::vector<EvidenceRow> rows;
  for (const std::string& key : keys) {
    auto a = stage.find(key);
    auto b = reference.find(key);
    if (a == stage.end() || b == reference.end()) continue;
    rows.push_back({evidence_label(key), format_evidence_value(key, b->second),
                    format_evidence_value(key, a->second)});
  }
  return rows;
}

std::vector<EvidenceRow> wait_rows(const StageResult& stage, const StageResult& reference,
                                   std::size_t top, const std::string& label_prefix) {
  return wait_rows(stage.waits, reference.waits, top, label_prefix);
}

std::vector<EvidenceRow> wait_rows(const std::optional<WaitProfile>& stage,
                                   const std::optional<WaitProfile>& reference, std::size_t top,
                                   const std::string& label_prefix) {
  std::vector<EvidenceRow> rows;
  if (!stage || !reference) return rows;
  const auto shares = results::wait_shares(*stage);
  for (std::size_t i = 0; i < shares.size() && i < top; ++i) {
    rows.push_back({label_prefix + shares[i].wait,
                    results::format_share(results::wait_share(*reference, shares[i].wait)),
                    results::format_share(shares[i].share)});
  }
  return rows;
}

}  // namespace pgslow::report
