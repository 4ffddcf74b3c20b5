#include "search/bisector.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <set>

#include "common/clock.h"
#include "common/errors.h"
#include "common/strings.h"
#include "results/stats.h"

namespace pgslow::search {
namespace {

using results::log_mean;

// ddmin's partition: `n` contiguous chunks whose sizes differ by at most one.
std::vector<std::vector<int>> split_into_chunks(const std::vector<int>& c, std::size_t n) {
  std::vector<std::vector<int>> chunks;
  std::size_t start = 0;
  for (std::size_t i = 0; i < n; ++i) {
    std::size_t size = c.size() / n + (i < c.size() % n ? 1 : 0);
    chunks.emplace_back(c.begin() + static_cast<std::ptrdiff_t>(start),
                        c.begin() + static_cast<std::ptrdiff_t>(start + size));
    start += size;
  }
  return chunks;
}

std::vector<int> minus(const std::vector<int>& a, const std::vector<int>& b) {
  std::vector<int> out;
  std::set_difference(a.begin(), a.end(), b.begin(), b.end(), std::back_inserter(out));
  return out;
}

// TPS judged the usual way: its figures read as they always did ("412 TPS", "14% slower").
bool plain_tps(const results::Metric& m) {
  return m.kind == results::Metric::Kind::kTps && !m.better;
}

// Bad against good in the metric's terms: "14% slower" (TPS), "CPU/tx +16.3%", "p99 2.5x
// higher".
std::string worse_by(const results::Metric& m, double ratio) {
  if (plain_tps(m)) return fmt::format("{:.0f}% slower", (1.0 - ratio) * 100.0);
  return results::format_metric_change(m, ratio);
}

// What the changes found make bad: "slow", "costly" (a cost per transaction), or with
// --direction faster "faster", "cheaper".
std::string outcome_word(const results::Metric& m) {
  if (m.better) return results::worse_word(m);
  return m.kind == results::Metric::Kind::kTps || m.kind == results::Metric::Kind::kP99 ? "slow"
                                                                                        : "costly";
}

// Thrown by classify when the noise grew past what the levels can separate (still_separable).
struct TooNoisy {};

}  // namespace

Bisector::Bisector(Measurer& measurer, std::vector<Candidate> candidates, Options options)
    : measurer_(measurer), options_(std::move(options)) {
  if (options_.level_repeats < 2) throw InputError("--repeats must be at least 2 (noise needs 2)");
  result_.metric = options_.metric;
  options_.max_repeats = std::max(options_.max_repeats, 1);
  // Restart-needing knobs first: ddmin's chunks are contiguous, so they share chunks and the
  // postmaster-context part of consecutive configurations changes less often.
  std::stable_partition(candidates.begin(), candidates.end(),
                        [](const Candidate& c) { return c.needs_restart; });
  result_.candidates = std::move(candidates);
}

Bisector::Subset Bisector::restart_part(const Subset& s) const {
  Subset out;
  for (int i : s)
    if (result_.candidates[static_cast<std::size_t>(i)].needs_restart) out.push_back(i);
  return out;
}

double Bisector::log_mean_of(const Subset& s) const {
  return log_mean(samples_.at(s));
}

const std::vector<double>& Bisector::measure(const Subset& s, int runs,
                                             const std::string& purpose) {
  std::vector<Setting> changes;
  RunRecord rec;
  for (int i : s) {
    const Candidate& c = result_.candidates[static_cast<std::size_t>(i)];
    changes.push_back(c.change);
    rec.knobs.push_back(c.change.name);
  }
  // runs == 0 records samples measured elsewhere (Options::known_good) without a run.
  rec.restart = runs > 0 && restart_part(s) != restart_part(last_.value_or(Subset{}));
  std::int64_t start = now_us();
  std::vector<double> got = runs > 0 ? measurer_.measure(changes, runs) : std::vector<double>{};
  rec.seconds = static_cast<double>(now_us() - start) / 1e6;
  if (got.size() != static_cast<std::size_t>(runs))
    throw RuntimeError(
        fmt::format("the measurement returned {} samples for {} runs", got.size(), runs));
  for (double sample : got)
    if (!std::isfinite(sample) || sample <= 0)
      throw RuntimeError(
          fmt::format("a run measured {}: the workload committed nothing, so this configuration "
                      "cannot be compared (is the server up, is the duration long enough?)",
                      results::format_metric_value(options_.metric, sample)));
  if (runs > 0) last_ = s;
  if (rec.restart) ++result_.restarts;
  auto& all = samples_[s];
  all.insert(all.end(), got.begin(), got.end());
  // Until the predicate decides: a run within the noise band gets more runs.
  rec.verdict = Verdict::kUncertain;
  rec.number = static_cast<int>(result_.runs.size()) + 1;
  rec.purpose = purpose;
  rec.round = purpose == "good" || purpose == "bad" ? 0 : round_;
  rec.tps = all;
  rec.new_runs = runs;
  rec.tps_level = std::exp(log_mean(all));
  result_.total_runs += runs;
  if (purpose == "search") result_.search_runs += runs;
  result_.runs.push_back(std::move(rec));
  return all;
}

// Good measured again (drift, ARCHITECTURE.md "Measurement"): `runs` more runs, and its level
// becomes the mean of its latest `window` runs; the threshold moves with it, so a configuration
// is compared with good as the machine is now, not as it was at the start.
void Bisector::refresh_good(int runs, int window) {
  const std::vector<double> all = measure({}, runs, "good");
  result_.runs.back().verdict = Verdict::kGood;
  const auto n = static_cast<std::ptrdiff_t>(
      std::min(all.size(), static_cast<std::size_t>(std::max(window, runs))));
  const double fresh = log_mean(std::vector<double>(all.end() - n, all.end()));
  threshold_log_ += fresh - good_log_;
  good_log_ = fresh;
  result_.drift = std::exp(good_log_ - first_good_log_) - 1;
  // The noise as the machine is now: good's runs in time order, from successive differences
  // (slow drift inflates them little). A machine that got less steady after the levels (another
  // build started) widens every later verdict's band instead of reading as an effect. It only
  // grows: a quiet spell does not make earlier verdicts' noise smaller.
  if (all.size() >= 3) {
    std::vector<double> logs;
    for (double tps : all) logs.push_back(std::log(tps));
    sigma_ = std::max(sigma_, std::sqrt(results::successive_difference_variance(logs)));
    result_.noise = sigma_;
  }
}

Bisector::Level Bisector::measure_level(const Subset& s, const std::vector<double>& known,
                                        const std::string& purpose) {
  Level level;
  samples_[s] = known;
  level.samples =
      measure(s, std::max(0, options_.level_repeats - static_cast<int>(known.size())), purpose);
  level.log_mean = log_mean(level.samples);
  return level;
}

// The predicate: is good plus `s` slow? One run, and more (two at a time, up to max_repeats)
// while the mean is within `band_sigmas` standard errors of the threshold. Samples are cached
// per subset, so a configuration is never measured twice for the same question, and a later
// round (with another threshold) re-decides from the samples it already has.
Verdict Bisector::classify(const Subset& s, const std::string& purpose) {
  std::size_t runs_before = result_.runs.size();
  if (samples_[s].empty()) measure(s, 1, purpose);
  Verdict verdict = Verdict::kUncertain;
  bool refreshed = false;
  while (true) {
    const auto& smp = samples_[s];
    double m = log_mean(smp);
    double se = sigma_ / std::sqrt(static_cast<double>(smp.size()));
    if (m <= threshold_log_ - options_.band_sigmas * se) {
      verdict = Verdict::kBad;
      break;
    }
    if (m >= threshold_log_ + options_.band_sigmas * se) {
      verdict = Verdict::kGood;
      break;
    }
    // Near the threshold: is any verdict still possible with the noise as it is now?
    if (!still_separable()) throw TooNoisy{};
    int have = static_cast<int>(smp.size());
    if (have >= options_.max_repeats) break;
    // Good again first, so the threshold follows the machine's drift.
    if (!refreshed) {
      refresh_good(1, 1);
      refreshed = true;
      continue;
    }
    measure(s, std::min(2, options_.max_repeats - have), purpose);
  }
  if (verdict == Verdict::kUncertain) {
    result_.uncertain = true;
    round_uncertain_ = true;
  }
  // The verdict belongs to the last run of `s` (a good re-measurement may have come between).
  for (std::size_t i = result_.runs.size(); i > runs_before; --i) {
    if (result_.runs[i - 1].purpose != "good") {
      result_.runs[i - 1].verdict = verdict;
      break;
    }
  }
  flush_progress();
  return verdict;
}

// Progress: each run once its verdict is known.
void Bisector::flush_progress() {
  for (; reported_ < result_.runs.size(); ++reported_)
    if (options_.on_run) options_.on_run(result_.runs[reported_]);
}

// Of the tests of one ddmin step, the order does not change what ddmin guarantees; take the
// free ones first (already measured), then those that keep the postmaster-context part of the
// configuration as it is, so the server restarts as rarely as possible.
std::vector<Bisector::Subset> Bisector::order_for_restarts(std::vector<Subset> tests) const {
  std::vector<Subset> ordered;
  Subset current = restart_part(last_.value_or(Subset{}));
  while (!tests.empty()) {
    auto pick = std::find_if(tests.begin(), tests.end(), [&](const Subset& t) {
      auto it = samples_.find(t);
      return it != samples_.end() && !it->second.empty();
    });
    if (pick == tests.end())
      pick = std::find_if(tests.begin(), tests.end(),
                          [&](const Subset& t) { return restart_part(t) == current; });
    if (pick == tests.end()) pick = tests.begin();
    current = restart_part(*pick);
    ordered.push_back(std::move(*pick));
    tests.erase(pick);
  }
  return ordered;
}

// ddmin (Zeller and Hildebrandt 2002, "Simplifying and isolating failure-inducing input"):
// `c` is known to be slow; returns a 1-minimal slow subset. Halves are tried before
// complements, so a single culprit among n costs at most 2 tests per halving:
// 2 * ceil(log2 n) runs when every verdict is clear.
Bisector::Subset Bisector::ddmin(Subset c) {
  std::size_t n = 2;
  while (c.size() >= 2) {
    auto chunks = split_into_chunks(c, n);
    bool reduced = false;
    for (const Subset& t : order_for_restarts(chunks)) {
      if (classify(t, "search") == Verdict::kBad) {
        c = t;
        n = 2;
        reduced = true;
        break;
      }
    }
    if (!reduced && n > 2) {
      std::vector<Subset> complements;
      for (const Subset& chunk : chunks) complements.push_back(minus(c, chunk));
      for (const Subset& t : order_for_restarts(complements)) {
        if (classify(t, "search") == Verdict::kBad) {
          c = t;
          n = std::max<std::size_t>(n - 1, 2);
          reduced = true;
          break;
        }
      }
    }
    if (!reduced) {
      if (n >= c.size()) break;
      n = std::min(n * 2, c.size());
    }
  }
  return c;
}

bool Bisector::clearly_slower(const Level& slow) const {
  double effect = good_log_ - slow.log_mean;
  double se_diff = sigma_ * std::sqrt(1.0 / options_.level_repeats +
                                      1.0 / static_cast<double>(slow.samples.size()));
  double needed = std::max({-std::log(1.0 - options_.min_effect), options_.band_sigmas * se_diff,
                            // a configuration at either level must be decidable within the
                            // repeats allowed, or every verdict of the search is ambiguous
                            2 * options_.band_sigmas * sigma_ / std::sqrt(options_.max_repeats)});
  return effect >= needed;
}

bool Bisector::still_separable() const {
  // Only the first round before any culprit: later rounds have their own remainder rules.
  if (round_ != 1 || !result_.culprits.empty()) return true;
  // The noise from every configuration measured more than once (within-configuration spread,
  // pooled): more degrees of freedom than good's runs alone, and drift only makes it larger.
  double ss = 0;
  double dof = 0;
  for (const auto& [subset, smp] : samples_) {
    if (smp.size() < 2) continue;
    ss += results::log_squared_deviations(smp);
    dof += static_cast<double>(smp.size() - 1);
  }
  const double noise = std::max(sigma_, dof > 0 ? std::sqrt(ss / dof) : 0.0);
  // Good's level over all its runs: one fresh run is too noisy a level for this question.
  const double effect = log_mean(samples_.at({})) - bad_.log_mean;
  return effect >= 2 * options_.band_sigmas * noise / std::sqrt(options_.max_repeats);
}

bool Bisector::search_round(const Subset& failing, double slow_log_mean) {
  ++round_;
  round_uncertain_ = false;
  if (round_ > 1 || !options_.threshold_tps) threshold_log_ = (good_log_ + slow_log_mean) / 2;
  Subset s = ddmin(failing);
  // A later round that could not split the remainder at all must see the whole remainder slow
  // against its own threshold, in runs of its own; otherwise nothing reproduced the slowdown
  // (noise, drift or a burst of load made the remainder look slow), and no knob is blamed.
  // The samples that started the round are not reused: they are the ones in question.
  if (round_ > 1 && s == failing) {
    samples_.erase(s);
    if (classify(s, "search") != Verdict::kBad) {
      unreproduced_ = true;
      return false;
    }
  }

  CulpritGroup g;
  g.round = round_;
  g.threshold_tps = std::exp(threshold_log_);
  for (int i : s) {
    const Candidate& c = result_.candidates[static_cast<std::size_t>(i)];
    g.knobs.push_back(c.change.name);
    g.changes.push_back(c.describe());
  }
  g.tps = std::exp(log_mean_of(s));
  g.ratio = g.tps / std::exp(good_log_);
  // Each culprit's effect alone versus good: measured once more for a group (cached for a
  // single knob, and for a pair, whose members alone ddmin has already tried).
  bool any_slow_alone = false;
  for (int i : s) {
    Subset one{i};
    Verdict v = classify(one, "solo");
    SoloEffect e;
    e.knob = result_.candidates[static_cast<std::size_t>(i)].change.name;
    e.tps = std::exp(log_mean_of(one));
    e.ratio = e.tps / std::exp(good_log_);
    e.verdict = v;
    any_slow_alone = any_slow_alone || v == Verdict::kBad;
    g.solo.push_back(e);
  }
  g.interaction = s.size() >= 2 && !any_slow_alone;
  g.certain = !round_uncertain_;
  result_.culprits.push_back(std::move(g));
  return true;
}

// The remainder against good measured right before and right after each of its runs (pairs
// bracketed by good): drift since the levels, and a machine that got noisier, must not read as
// a second culprit. One pair decides when the remainder is plainly like good, two when both
// show it plainly slow; otherwise up to `level_repeats` (at least 3) pairs, judged by their t
// interval at 99%:
// another round is a claim that another culprit exists, and a false one blames a harmless knob.
Bisector::Remainder Bisector::judge_remainder(const Subset& remaining) {
  refresh_good(1, 1);
  std::vector<double> smp;
  std::vector<double> paired;  // log(remainder) - log(good around it), one per pair
  auto measure_pair = [&] {
    const double good_before = good_log_;
    smp.push_back(measure(remaining, 1, "remaining").back());
    refresh_good(1, 1);
    paired.push_back(std::log(smp.back()) - (good_before + good_log_) / 2);
  };
  const double min_effect_log = -std::log(1.0 - options_.min_effect);
  const double pair_sigma = sigma_ * std::sqrt(1.5);  // one run minus the mean of two
  const int pairs = std::max(3, options_.level_repeats);

  measure_pair();
  // Like good: even the noise band's worth of bad luck could not make it a culprit. On a
  // machine too noisy for the pairs to resolve the smallest effect a round looks for (the 99% t
  // half-width after every pair is larger than min_effect), a remainder that this pair shows
  // less slower than min_effect is like good too: more pairs could only make it a culprit by
  // reading several times slower than this one, and would cost runs (and, with restart knobs
  // in the remainder, restarts).
  const double resolvable =
      results::t_quantile(0.995, pairs - 1) * pair_sigma / std::sqrt(static_cast<double>(pairs));
  const bool like_good = -paired.back() < min_effect_log - options_.band_sigmas * sigma_ ||
                         (resolvable > min_effect_log && -paired.back() < min_effect_log);
  // Plainly slow: twice the band's worth of good luck could not make it like good. A round is
  // a claim that another culprit exists, so one pair does not make it: a burst of load during
  // the remainder's one run (and not the good runs around it) reads as plainly slow against
  // the noise of calmer runs, and the round would then blame harmless knobs on that one
  // sample. A second pair must show it too.
  auto plainly_slow = [&] {
    return -paired.back() > min_effect_log + 2 * options_.band_sigmas * pair_sigma;
  };
  bool slow = false;
  if (!like_good && plainly_slow()) {
    measure_pair();
    slow = plainly_slow();
  }

  Remainder rest;
  rest.slower = slow;
  if (!like_good && !slow) {
    while (static_cast<int>(paired.size()) < pairs) measure_pair();
    // Slower only when the whole interval of the paired effect is below good, and the effect
    // is one the search can decide (clearly_slower's floor).
    const double n = static_cast<double>(paired.size());
    const double mean_d = results::mean(paired);
    const double se = std::max(results::stddev(paired), pair_sigma) / std::sqrt(n);
    const double upper = mean_d + results::t_quantile(0.995, n - 1) * se;
    rest.slower = upper < 0 && clearly_slower(Level{good_log_ + mean_d, smp});
  }
  rest.paired_log_effect = results::mean(paired);
  result_.remaining_tps = std::exp(log_mean(smp));
  result_.remaining_ratio = std::exp(rest.paired_log_effect);
  // The verdict belongs to the remainder's last run (good, measured after it, is good).
  for (std::size_t i = result_.runs.size(); i > 0; --i)
    if (result_.runs[i - 1].purpose == "remaining") {
      result_.runs[i - 1].verdict = rest.slower ? Verdict::kBad : Verdict::kGood;
      break;
    }
  flush_progress();
  return rest;
}

// Good and bad measured, but bad not clearly worse: why there is nothing to bisect.
std::string Bisector::no_difference_sentence() const {
  const results::Metric m = options_.metric;
  auto level = [m](double sample) {
    return plain_tps(m) ? fmt::format("{:.0f}", sample) : results::format_metric_value(m, sample);
  };
  double ratio = result_.bad_tps / result_.good_tps;
  return ratio > 1
             ? fmt::format("bad is not {} than good ({} versus {}{}): nothing to bisect",
                           results::worse_word(m), level(result_.bad_tps), level(result_.good_tps),
                           plain_tps(m) ? " TPS" : "")
             : fmt::format(
                   "good and bad are not clearly different ({} versus {}{}, {}; noise "
                   "±{:.1f}% per run, at least {:.0f}% needed): nothing to bisect",
                   level(result_.good_tps), level(result_.bad_tps), plain_tps(m) ? " TPS" : "",
                   worse_by(m, ratio), sigma_ * 100, options_.min_effect * 100);
}

// Noise grew during the search beyond what separates good from bad.
std::string Bisector::too_noisy_sentence() const {
  return fmt::format(
      "bad is {} than good, but runs now vary ±{:.1f}% per run: a configuration "
      "between them cannot be judged within {} runs, so nothing is blamed (use longer "
      "runs or more repeats)",
      plain_tps(options_.metric)
          ? worse_by(options_.metric, result_.bad_tps / result_.good_tps)
          : results::worse_word(options_.metric) + " (" +
                worse_by(options_.metric, result_.bad_tps / result_.good_tps) + ")",
      sigma_ * 100, options_.max_repeats);
}

// One sentence for the top of every rendering: the culprit groups found.
std::string Bisector::culprits_sentence() const {
  std::vector<std::string> parts;
  // The group's level against good's as a ratio of the metric's values ("0.25x good" TPS,
  // "CPU/tx 4.00x good").
  const std::string label =
      plain_tps(options_.metric) ? "" : results::metric_label(options_.metric) + " ";
  for (const auto& g : result_.culprits) {
    std::string names = join(g.knobs, " + ");
    const double ratio = results::metric_ratio(options_.metric, g.ratio);
    if (g.interaction)
      parts.push_back(fmt::format("{} ({} only together: {}{:.2f}x good)", names,
                                  results::worse_word(options_.metric), label, ratio));
    else
      parts.push_back(fmt::format("{} ({}{:.2f}x good)", names, label, ratio));
  }
  std::string conclusion = fmt::format(
      "{} of {} changes make{} bad {}: {}",
      [&] {
        std::size_t n = 0;
        for (const auto& g : result_.culprits) n += g.knobs.size();
        return n;
      }(),
      result_.candidates.size(),
      result_.culprits.size() == 1 && result_.culprits[0].knobs.size() == 1 ? "s" : "",
      outcome_word(options_.metric), join(parts, "; "));
  if (unreproduced_)
    conclusion +=
        " (the rest looked slower than good once more, but no part of it reproduced that: "
        "noise or drift, no further knob is named)";
  if (result_.uncertain)
    conclusion +=
        " (uncertain: some configurations stayed within the noise of the "
        "threshold; see the run table)";
  return conclusion;
}

Result Bisector::run() {
  std::int64_t start = now_us();
  auto finish = [&] {
    result_.wall_seconds = static_cast<double>(now_us() - start) / 1e6;
    return std::move(result_);
  };
  if (result_.candidates.empty()) {
    result_.conclusion =
        "good and bad are the same configuration: there is nothing to bisect (no run made)";
    return finish();
  }
  Subset all(result_.candidates.size());
  std::iota(all.begin(), all.end(), 0);

  Level good = measure_level({}, options_.known_good, "good");
  bad_ = measure_level(all, options_.known_bad, "bad");
  const Level& bad = bad_;
  good_log_ = good.log_mean;
  first_good_log_ = good.log_mean;
  result_.good_tps = std::exp(good.log_mean);
  result_.bad_tps = std::exp(bad.log_mean);
  double dof = static_cast<double>(good.samples.size() + bad.samples.size() - 2);
  sigma_ = std::max(options_.min_noise, std::sqrt((results::log_squared_deviations(good.samples) +
                                                   results::log_squared_deviations(bad.samples)) /
                                                  dof));
  result_.noise = sigma_;
  result_.runs[0].verdict = Verdict::kGood;
  result_.runs[1].verdict = clearly_slower(bad) ? Verdict::kBad : Verdict::kUncertain;
  flush_progress();

  if (!clearly_slower(bad)) {
    result_.conclusion = no_difference_sentence();
    return finish();
  }
  result_.clearly_different = true;
  if (options_.threshold_tps) {
    double t = std::log(*options_.threshold_tps);
    if (!(t < good_log_ && t > bad.log_mean))
      throw InputError(
          fmt::format("the threshold {} must lie between bad ({}) and good ({})",
                      results::format_metric_value(options_.metric, *options_.threshold_tps),
                      results::format_metric_value(options_.metric, result_.bad_tps),
                      results::format_metric_value(options_.metric, result_.good_tps)));
    threshold_log_ = t;
  }
  result_.threshold_tps =
      std::exp(options_.threshold_tps ? threshold_log_ : (good_log_ + bad.log_mean) / 2);

  // Round after round: a culprit group, then what is left of bad without every group found.
  // An independent second culprit that is not slow enough for the first round's threshold
  // shows up as a remainder still clearly slower than good, and gets a round of its own.
  Subset failing = all;
  double slow_log = bad.log_mean;
  while (true) {
    try {
      if (!search_round(failing, slow_log)) break;
    } catch (const TooNoisy&) {
      result_.too_noisy = true;
      result_.conclusion = too_noisy_sentence();
      return finish();
    }
    Subset found;
    for (const auto& g : result_.culprits)
      for (const auto& k : g.knobs)
        for (std::size_t i = 0; i < result_.candidates.size(); ++i)
          if (result_.candidates[i].change.name == k) found.push_back(static_cast<int>(i));
    std::sort(found.begin(), found.end());
    Subset remaining = minus(all, found);
    if (remaining.empty()) break;
    const Remainder rest = judge_remainder(remaining);
    if (!rest.slower || round_ >= options_.max_rounds) break;
    failing = remaining;
    // The remainder's level as good is now (its paired effect), not as the runs happened.
    slow_log = good_log_ + rest.paired_log_effect;
  }

  result_.conclusion = culprits_sentence();
  return finish();
}

}  // namespace pgslow::search
