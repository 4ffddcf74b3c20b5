#include "report/workshop.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "report/evidence_info.h"
#include "report/stats.h"
#include "report/summary.h"
#include "report/text.h"

namespace pgslow::report {

namespace {

// Seconds per block: long enough that block means are nearly independent at the
// autocorrelation a per-second TPS series shows on a busy machine.
constexpr std::size_t kBlockSeconds = 3;

// Two-sided 95% quantile of Student's t for `df` degrees of freedom.
double t95(std::size_t df) {
  static constexpr double kTable[] = {0,     12.71, 4.303, 3.182, 2.776, 2.571, 2.447,
                                      2.365, 2.306, 2.262, 2.228, 2.201, 2.179, 2.160,
                                      2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086};
  if (df == 0) return kTable[1];
  if (df < std::size(kTable)) return kTable[df];
  return df < 40 ? 2.03 : 1.96;
}

struct Sample {
  double mean = 0;
  double se = 0;  // standard error of the mean
  std::size_t blocks = 0;
};

// Block means of every repeat's per-second series (the repeats' TPS when a series is missing).
Sample sample_of(const StageResult& stage) {
  std::vector<double> blocks;
  for (const Measurement& m : stage.repeats) {
    const auto& s = m.tps_per_second;
    if (s.size() < kBlockSeconds) {
      if (stage.repeats.size() > 1 || s.empty()) {
        blocks.push_back(m.tps);
      } else {
        for (double v : s) blocks.push_back(v);
      }
      continue;
    }
    for (std::size_t i = 0; i + kBlockSeconds <= s.size(); i += kBlockSeconds) {
      double sum = 0;
      for (std::size_t k = i; k < i + kBlockSeconds; ++k) sum += s[k];
      blocks.push_back(sum / kBlockSeconds);
    }
  }
  // Too short for blocks (a few seconds): the seconds themselves, which understates the
  // spread a little but never claims certainty from a single number.
  if (blocks.size() < 4) {
    std::vector<double> seconds;
    for (const Measurement& m : stage.repeats)
      seconds.insert(seconds.end(), m.tps_per_second.begin(), m.tps_per_second.end());
    if (seconds.size() > blocks.size()) blocks = std::move(seconds);
  }
  Sample out;
  out.blocks = blocks.size();
  out.mean = mean(blocks);
  out.se = blocks.size() > 1 ? stddev(blocks) / std::sqrt(static_cast<double>(blocks.size())) : 0;
  return out;
}

std::uint64_t transactions_of(const StageResult& stage) {
  std::uint64_t n = 0;
  for (const Measurement& m : stage.repeats) n += m.committed + m.rolled_back;
  return n;
}

}  // namespace

Effect measure_effect(const StageResult& stage, const StageResult& reference) {
  Effect e;
  if (stage.repeats.empty() || reference.repeats.empty()) return e;
  Sample a = sample_of(stage);
  Sample b = sample_of(reference);
  e.transactions = transactions_of(stage);
  e.reference_transactions = transactions_of(reference);
  if (b.mean <= 0) return e;
  e.known = true;
  // A stage that completed nothing: the ratio is 0 and no interval on the log scale exists.
  if (a.mean <= 0) {
    e.verdict = Effect::Verdict::kSlower;
    return e;
  }
  e.ratio = a.mean / b.mean;
  const double rel = std::sqrt(std::pow(a.se / a.mean, 2) + std::pow(b.se / b.mean, 2));
  const double t = t95(std::min(a.blocks, b.blocks) > 0 ? std::min(a.blocks, b.blocks) - 1 : 0);
  e.low = e.ratio * std::exp(-t * rel);
  e.high = e.ratio * std::exp(t * rel);
  if (e.high < 1) {
    e.verdict = Effect::Verdict::kSlower;
  } else if (e.low > 1) {
    e.verdict = Effect::Verdict::kFaster;
  } else {
    e.verdict = Effect::Verdict::kWithinNoise;
  }
  return e;
}

std::string describe_ratio(double ratio) {
  if (ratio > 0 && ratio < 0.5) return fmt::format("{}x slower", format_number(1 / ratio, 2));
  return format_change(ratio);
}

std::string describe_effect(const Effect& e) {
  if (!e.known) return "not measured (a stage did not run)";
  const std::string counts =
      fmt::format("{} vs {} transactions", format_number(static_cast<double>(e.transactions), 1),
                  format_number(static_cast<double>(e.reference_transactions), 1));
  if (e.ratio <= 0) return fmt::format("nothing completed ({})", counts);
  auto side = [](double r) {
    return r < 0.5 ? fmt::format("{}x slower", format_number(1 / r, 2)) : format_change(r);
  };
  if (e.verdict == Effect::Verdict::kWithinNoise) {
    const double half = std::max(std::abs(e.high - 1), std::abs(1 - e.low)) * 100;
    return fmt::format("within noise ({}, 95% interval ±{:.1f}%; {})", format_change(e.ratio), half,
                       counts);
  }
  return fmt::format("{} (95% interval {} to {}; {})", describe_ratio(e.ratio), side(e.low),
                     side(e.high), counts);
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

void render_reveal(const Reveal& r, std::ostream& out) {
  out << fmt::format("  {} against {}: {}\n\n", r.stage, r.reference_stage,
                     describe_effect(r.effect));
  if (!r.latency.empty()) {
    TextTable t;
    t.header = {"stage", "clients", "tps", "mean latency", "p50", "p99", "clients / tps"};
    t.right = {false, true, true, true, true, true, true};
    for (const auto& [name, c] : r.latency) {
      t.rows.push_back(
          {name, std::to_string(c.clients), format_number(c.tps), format_latency_us(c.mean_us),
           format_latency_us(c.p50_us), format_latency_us(c.p99_us),
           c.littles_law_us > 0 ? format_latency_us(c.littles_law_us) : "(fixed rate)"});
    }
    out << t.render("  ");
    out << "  Little's law: in a closed loop, mean latency = clients / tps.\n\n";
  }
  if (!r.predictions.empty()) {
    TextTable t;
    t.header = {"who", "question", "prediction", "against the measurement"};
    t.right = {false, false, false, false};
    for (const PredictionRow& p : r.predictions)
      t.rows.push_back({p.participant, p.question, p.answer, p.verdict});
    out << t.render("  ") << "\n";
  }
  if (!r.evidence.empty()) {
    TextTable t;
    t.header = {"evidence", r.reference_stage, r.stage};
    t.right = {false, true, true};
    for (const EvidenceRow& e : r.evidence) t.rows.push_back({e.label, e.reference, e.stage});
    out << "  The evidence:\n" << t.render("  ") << "\n";
  }
  if (!r.gap.empty()) out << fmt::format("  Why: {}\n\n", r.gap);
}

}  // namespace pgslow::report
