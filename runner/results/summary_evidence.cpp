#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <set>

#include "results/evidence_info.h"
#include "results/metric.h"
#include "results/stats.h"
#include "results/summary.h"
#include "results/waits.h"

// The evidence of a stage against its baseline: each key normalised (per transaction, per
// minute, or as is), labelled, and the moves worth a reader's attention.

namespace pgslow::results {

namespace {

// A move smaller than this (20%) is not worth a reader's attention.
const double kMinScore = std::log(1.2);

// What one raw unit of `key` is worth after normalisation in `stage` (1 / transactions,
// 60 / seconds, or 1 for ratios and levels); nullopt when the divisor is unknown.
std::optional<double> unit_weight(const StageResult& stage, const std::string& key) {
  const double seconds = window_seconds(stage);
  const Measurement* m = median_repeat(stage);
  switch (evidence_info(key).scale) {
    case EvidenceScale::kRatio:
    case EvidenceScale::kLevel:
    case EvidenceScale::kDriver:
      return 1.0;
    case EvidenceScale::kPerMinute:
      if (seconds <= 0) return std::nullopt;
      return 60 / seconds;
    case EvidenceScale::kPerTransaction: {
      // Transactions in the evidence window, which may be longer than the measured run.
      const double tx = m != nullptr ? m->tps * seconds : 0;
      if (tx <= 0) return std::nullopt;
      return 1 / tx;
    }
  }
  return std::nullopt;
}

}  // namespace

std::optional<double> normalised_evidence(const StageResult& stage, const std::string& key) {
  const auto it = stage.evidence.find(key);
  if (it == stage.evidence.end() || !std::isfinite(it->second)) return std::nullopt;
  const auto weight = unit_weight(stage, key);
  if (!weight) return std::nullopt;
  return it->second * *weight;
}

std::string evidence_label(const std::string& key) {
  const EvidenceInfo info = evidence_info(key);
  std::string label(info.label);
  switch (info.scale) {
    case EvidenceScale::kPerTransaction:
      return label + "/tx";
    case EvidenceScale::kPerMinute:
      return label + "/min";
    default:
      return label;
  }
}

std::string format_evidence_value(const std::string& key, double normalised) {
  const EvidenceInfo info = evidence_info(key);
  if (info.scale == EvidenceScale::kRatio) return format_percent(normalised);
  if (info.bytes) return format_size(normalised);
  return format_number(normalised);
}

std::vector<EvidenceMove> evidence_moves(const StageResult& stage, const StageResult& baseline) {
  std::vector<EvidenceMove> moves;
  for (const auto& [key, raw] : stage.evidence) {
    const EvidenceInfo info = evidence_info(key);
    if (info.scale == EvidenceScale::kDriver) continue;
    // A stage through PgBouncer against a baseline without it: the baseline's clients waited
    // in no pooler, so its pooler figures are 0 (docs/pooler.md).
    const bool pooler_key = key.starts_with("pooler_");
    const auto base_found = baseline.evidence.find(key);
    if (base_found == baseline.evidence.end() && !pooler_key) continue;
    const double base_raw = base_found == baseline.evidence.end() ? 0 : base_found->second;
    const auto s = normalised_evidence(stage, key);
    const auto b = base_found == baseline.evidence.end() ? std::optional<double>(0)
                                                         : normalised_evidence(baseline, key);
    if (!s || !b) continue;
    double score = 0;
    if (info.scale == EvidenceScale::kRatio) {
      // A hit ratio moving 99.9% -> 70.5% is a miss ratio moving 0.1% -> 29.5%: 300x.
      const double ms = std::clamp(1 - *s, 0.0, 1.0);
      const double mb = std::clamp(1 - *b, 0.0, 1.0);
      const double eps = 1e-4;
      score = std::fabs(std::log((ms + eps) / (mb + eps)));
    } else {
      const double min_count = info.bytes ? kMinEvidenceBytes : kMinEvidenceCount;
      if (std::max(raw, base_raw) < min_count) continue;
      // Each side is smoothed by what one event weighs there, so 0 -> 41 has a finite score
      // and a count resting on a handful of transactions cannot outrank a real move.
      const double eps_s = *unit_weight(stage, key);
      const double eps_b = unit_weight(baseline, key).value_or(eps_s);
      score = std::fabs(std::log((std::fabs(*s) + eps_s) / (std::fabs(*b) + eps_b)));
    }
    if (score < kMinScore) continue;
    // A move that rounds to the same figure ("0 B → 0 B") says nothing to a reader.
    if (format_evidence_value(key, *b) == format_evidence_value(key, *s)) continue;
    EvidenceMove move;
    move.key = key;
    move.label = evidence_label(key);
    move.baseline = *b;
    move.stage = *s;
    move.score = score;
    move.text = fmt::format("{} {} → {}", move.label, format_evidence_value(key, *b),
                            format_evidence_value(key, *s));
    moves.push_back(std::move(move));
  }
  std::stable_sort(moves.begin(), moves.end(),
                   [](const EvidenceMove& x, const EvidenceMove& y) { return x.score > y.score; });
  return moves;
}

std::vector<EvidenceMove> top_movers(const std::vector<EvidenceMove>& moves, std::size_t n) {
  // Families in order of their largest move; each shown by its headline key when it moved.
  std::vector<std::string> families;
  for (const auto& m : moves) {
    const std::string family(evidence_info(m.key).family);
    if (std::find(families.begin(), families.end(), family) == families.end()) {
      families.push_back(family);
    }
  }
  std::vector<EvidenceMove> out;
  for (const auto& family : families) {
    if (out.size() == n) break;
    // `moves` is sorted, so the family's first entry is its largest move.
    const EvidenceMove* top = nullptr;
    for (const auto& m : moves) {
      if (top == nullptr && evidence_info(m.key).family == family) top = &m;
    }
    // The headline (first in catalog order) reads best ("hit ratio" over "blocks read/tx");
    // it stands for the family unless it moved less than half as far as the top key.
    const EvidenceMove* pick = top;
    for (const auto& info : evidence_catalog()) {
      if (info.family != family) continue;
      for (const auto& m : moves) {
        if (m.key == info.key && m.score >= top->score / 2) pick = &m;
      }
      break;
    }
    out.push_back(*pick);
  }
  return out;
}

}  // namespace pgslow::results
