#include "search/attribution.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <set>
#include <utility>

#include "common/clock.h"
#include "common/errors.h"
#include "common/strings.h"
#include "results/metric.h"
#include "results/stats.h"
#include "results/summary.h"

namespace pgslow::search {
namespace {

using Names = std::set<std::string>;  // a configuration: the units applied over the reference

// Two-sided 95% quantile of Student's t with `dof` degrees of freedom (report/stats, the one
// place): the noise is estimated from a handful of runs, so the normal 1.96 would claim too much.
double t975(int dof) {
  return results::t_quantile(0.975, std::max(dof, 1));
}

using results::log_mean;

// Thrown by UnitMeasurer when the next run would pass AttributionOptions::max_runs.
struct OverBudget {};

// The search and the report see units; the server sees the knobs of each unit.
class UnitMeasurer final : public Measurer {
 public:
  UnitMeasurer(Measurer& inner, std::map<std::string, std::vector<Setting>> members, int budget)
      : inner_(inner), members_(std::move(members)), budget_(budget) {}

  std::vector<Setting> expand(const std::vector<Setting>& units) const {
    std::vector<Setting> out;
    for (const auto& u : units) {
      auto it = members_.find(u.name);
      if (it == members_.end())
        out.push_back(u);
      else
        out.insert(out.end(), it->second.begin(), it->second.end());
    }
    return out;
  }
  std::vector<double> measure(const std::vector<Setting>& units, int repeats) override {
    if (budget_ > 0 && runs_ + repeats > budget_) throw OverBudget{};
    runs_ += repeats;
    return inner_.measure(expand(units), repeats);
  }
  const std::vector<Setting>& members(const std::string& unit) const { return members_.at(unit); }
  int runs() const { return runs_; }

 private:
  Measurer& inner_;
  std::map<std::string, std::vector<Setting>> members_;
  int budget_ = 0;
  int runs_ = 0;
};

class Attribution {
 public:
  Attribution(UnitMeasurer& m, AttributionOptions o) : measurer_(m), options_(std::move(o)) {}

  Attributed run(const std::vector<Candidate>& units) {
    std::int64_t start = now_us();
    Attributed out;
    for (const auto& c : units) {
      all_.insert(c.change.name);
      unit_[c.change.name] = c;
    }
    Options search = options_.search;
    // Every run the search makes, for a verdict even when the budget stops it.
    std::vector<RunRecord> made;
    search.on_run = [&](const RunRecord& rec) {
      made.push_back(rec);
      if (options_.search.on_run) options_.search.on_run(rec);
    };
    try {
      out.search = Bisector(measurer_, units, search).run();
    } catch (const OverBudget&) {
      not_split(out, made, start, over_budget_verdict(), 0);
      return out;
    }
    const Result& r = out.search;
    if (r.too_noisy) {
      // The search stopped itself: the noise it measured is the reason.
      not_split(out, r.runs, start, "not attributed (runs too noisy to split)", r.noise);
      out.attribution.restarts = r.restarts;
      return out;
    }
    // Every configuration's samples, from the search's run log (cumulative per configuration).
    for (const auto& rec : r.runs) cache_[Names(rec.knobs.begin(), rec.knobs.end())] = rec.tps;
    good_ = cache_[{}];
    sigma_ = r.noise;
    dof_ = std::max<int>(
        1, static_cast<int>(good_.size()) + static_cast<int>(cache_[all_].size()) - 2);

    results::Attribution& a = out.attribution;
    a.metric = metric();
    a.reference = options_.reference;
    a.noise = sigma_;
    a.stage = interval(all_);
    try {
      if (!r.clearly_different)
        not_attributed(a);
      else
        attribute_culprits(a, r);
    } catch (const OverBudget&) {
      a = {};
      not_split(out, out.search.runs, start, over_budget_verdict(), 0);
      return out;
    }
    a.extra_runs = measurer_.runs();
    a.restarts = r.restarts;
    a.seconds = static_cast<double>(now_us() - start) / 1e6;
    out.good_samples = good_;
    return out;
  }

 private:
  // The samples of a configuration, measured once (one run) when the search never did.
  const std::vector<double>& samples(const Names& n) {
    auto& s = cache_[n];
    if (s.empty()) {
      std::vector<Setting> units;
      for (const auto& name : n) units.push_back(unit_.at(name).change);
      s = measurer_.measure(units, 1);
      for (double sample : s)
        if (!std::isfinite(sample) || sample <= 0)
          throw RuntimeError(
              fmt::format("an attribution run measured {}: the workload committed nothing",
                          results::format_metric_value(metric(), sample)));
    }
    return s;
  }

  std::vector<Setting> settings_of(const Names& n) const {
    std::vector<Setting> units;
    for (const auto& name : n) units.push_back(unit_.at(name).change);
    return measurer_.expand(units);
  }

  results::EffectInterval interval(const Names& n) {
    const auto& s = samples(n);
    double d = log_mean(s) - log_mean(good_);
    double se = sigma_ * std::sqrt(1.0 / static_cast<double>(s.size()) +
                                   1.0 / static_cast<double>(good_.size()));
    // report/stats' one interval: its bounds, and what a comparison this noisy could see.
    const results::Interval i = results::log_ratio_interval(d, se, std::max(dof_, 1));
    results::EffectInterval e;
    e.ratio = i.ratio;
    e.low = i.low;
    e.high = i.high;
    e.detectable = i.detectable();
    e.runs = static_cast<int>(s.size());
    e.reference_runs = static_cast<int>(good_.size());
    if (options_.observe) e.transactions = options_.observe(settings_of(n)).transactions;
    return e;
  }

  static bool clearly_slower(const results::EffectInterval& e) { return e.high < 1.0; }

  results::Metric metric() const { return options_.search.metric; }
  std::string change(double ratio) const { return results::format_metric_change(metric(), ratio); }

  // "no measurable effect (could see ±6.2%)": what the one run of the knobs together could
  // have seen, in stage verdicts' words, so no effect and too noisy to tell read differently.
  static std::string no_effect(const results::EffectInterval& e) {
    return "no measurable effect (" + results::format_could_see(e.detectable) + ")";
  }

  std::string describe(const std::string& unit) const {
    std::vector<std::string> parts;
    for (const auto& s : measurer_.members(unit)) parts.push_back(s.name + " = " + s.value);
    return join(parts, " + ");
  }

  results::KnobEffect effect_of(const std::string& unit) const {
    results::KnobEffect k;
    for (const auto& s : measurer_.members(unit)) {
      k.knobs.push_back(s.name);
      k.values.push_back(s.value);
    }
    return k;
  }

  std::vector<results::KnobEvidence> evidence_moved(const Names& n) {
    if (!options_.observe) return {};
    Observation ref = options_.observe(settings_of({}));
    Observation alone = options_.observe(settings_of(n));
    std::vector<std::string> keys{"latency_p99"};
    for (const auto& s : settings_of(n)) {
      auto it = options_.watch.find(s.name);
      if (it == options_.watch.end()) continue;
      for (const auto& k : it->second)
        if (std::find(keys.begin(), keys.end(), k) == keys.end()) keys.push_back(k);
    }
    std::vector<results::KnobEvidence> moved;
    for (const auto& k : keys) {
      auto a = ref.evidence.find(k);
      auto b = alone.evidence.find(k);
      if (a == ref.evidence.end() || b == alone.evidence.end()) continue;
      double lo = std::min(std::abs(a->second), std::abs(b->second));
      double hi = std::max(std::abs(a->second), std::abs(b->second));
      // Moved: by a fifth at least (a counter from zero counts as moved).
      if (hi > 0 && (lo == 0 || hi / lo >= 1.2)) moved.push_back({k, a->second, b->second});
    }
    return moved;
  }

  // The units `n` together (one knob alone, or the harmless group) against the reference on every
  // axis, from the runs the lab recorded.
  std::vector<results::AxisEffect> axes_alone(const Names& n) {
    if (!options_.observe) return {};
    return results::compare_configuration_axes(options_.observe(settings_of(n)).runs,
                                               options_.observe(settings_of({})).runs);
  }

  std::string over_budget_verdict() const {
    return fmt::format("not attributed (over the budget of {} runs)", options_.max_runs);
  }

  // The budget ran out, or the search found the runs too noisy to split the stage: the
  // stage's effect from the level runs when they were made, and every knob "not attributed"
  // (`why`) with the noise that stopped the search (at least `noise`).
  void not_split(Attributed& out, const std::vector<RunRecord>& made, std::int64_t start,
                 const std::string& why, double noise) {
    results::Attribution& a = out.attribution;
    a.metric = metric();
    a.reference = options_.reference;
    for (const auto& rec : made) cache_[Names(rec.knobs.begin(), rec.knobs.end())] = rec.tps;
    good_ = cache_[{}];
    const auto& bad = cache_[all_];
    if (good_.size() >= 2 && !bad.empty()) {
      double ss = 0;
      int dof = 0;
      for (const std::vector<double>* v : {&std::as_const(good_), &bad}) {
        ss += results::log_squared_deviations(*v);
        dof += static_cast<int>(v->size()) - 1;
      }
      sigma_ = std::max({options_.search.min_noise, noise, std::sqrt(ss / std::max(1, dof))});
      dof_ = std::max(1, dof);
      a.noise = sigma_;
      a.stage = interval(all_);
      a.headline = fmt::format(
          "{}: {}; not attributed: runs varied ±{:.0f}% on this machine, too much to split {} "
          "knobs within {} runs (use longer runs or more repeats)",
          options_.stage, change(a.stage.ratio), sigma_ * 100, all_.size(), options_.max_runs);
    } else {
      a.headline =
          fmt::format("{}: not attributed within {} runs", options_.stage, options_.max_runs);
    }
    for (const auto& u : all_) {
      results::KnobEffect k = effect_of(u);
      k.verdict = why;
      a.knobs.push_back(std::move(k));
    }
    a.extra_runs = measurer_.runs();
    a.seconds = static_cast<double>(now_us() - start) / 1e6;
    out.good_samples = good_;
  }

  void not_attributed(results::Attribution& a) {
    const std::string stage = options_.stage;
    std::string verdict;
    if (a.stage.low > 1.0) {
      verdict = "not attributed (the stage is " + results::better_word(metric()) + ")";
      a.headline = fmt::format("{}: {}; attribution looks for slowdowns: not attributed", stage,
                               change(a.stage.ratio));
    } else if (clearly_slower(a.stage)) {
      verdict = fmt::format("not attributed (stage below the {:.0f}% attribution needs)",
                            options_.search.min_effect * 100);
      a.headline = fmt::format("{}: {}; smaller than the {:.0f}% an attribution needs", stage,
                               change(a.stage.ratio), options_.search.min_effect * 100);
    } else {
      verdict = "no measurable effect";
      a.harmless = a.stage;
      a.harmless_axes = axes_alone(all_);
      a.headline =
          fmt::format("{}: {}; {} knobs, none to blame", stage, no_effect(a.stage), all_.size());
    }
    for (const auto& u : all_) {
      results::KnobEffect k = effect_of(u);
      k.verdict = verdict;
      a.knobs.push_back(std::move(k));
    }
  }

  void attribute_culprits(results::Attribution& a, const Result& r) {
    Names culprits;
    for (const auto& g : r.culprits) culprits.insert(g.knobs.begin(), g.knobs.end());
    const double stage_log = std::log(a.stage.ratio);
    std::vector<results::KnobEffect> found;
    double solo_log_sum = 0;
    bool redundant = false;
    for (const auto& g : r.culprits) {
      for (const auto& u : g.knobs) {
        results::KnobEffect k = effect_of(u);
        k.alone = interval({u});
        Names without = all_;
        without.erase(u);
        k.without = interval(without);
        k.evidence = evidence_moved({u});
        k.axes = axes_alone({u});
        std::vector<std::string> others;
        for (const auto& o : g.knobs)
          if (o != u) others.push_back(describe(o));
        // Slow alone: clearly (by the interval) and by at least the effect a search resolves,
        // so a few percent of drift between the first and the last runs blames no one.
        bool alone_slow =
            clearly_slower(*k.alone) && k.alone->ratio <= 1.0 - options_.search.min_effect;
        bool still_slow =
            clearly_slower(*k.without) && k.without->ratio <= 1.0 - options_.search.min_effect;
        if (!alone_slow && !others.empty()) {
          k.verdict = "only with " + join(others, " + ");
        } else if (alone_slow && (std::log(k.alone->ratio) <= 0.8 * stage_log || !still_slow)) {
          k.verdict = "the cause";
          solo_log_sum += std::log(k.alone->ratio);
          if (still_slow && std::log(k.without->ratio) <= 0.8 * stage_log) {
            redundant = true;
            k.note = fmt::format("the stage without it is still {}: another knob does the same",
                                 change(k.without->ratio));
          }
        } else {
          k.verdict = "contributes";
          solo_log_sum += std::log(k.alone->ratio);
          if (!alone_slow) k.note = "uncertain: alone it stays within the noise";
        }
        found.push_back(std::move(k));
      }
    }
    // Solo effects that do not multiply up to the stage's: an interaction among the culprits
    // (or with the harmless ones). Either-one-suffices culprits are expected not to add up.
    if (!redundant && found.size() >= 2 && solo_log_sum != 0 &&
        std::abs(solo_log_sum - stage_log) > t975(dof_) * sigma_ * 2 &&
        std::abs(std::exp(solo_log_sum - stage_log) - 1) > options_.search.min_effect)
      a.note = fmt::format("not additive: the culprits alone multiply to {}, the whole stage is {}",
                           change(std::exp(solo_log_sum)), change(a.stage.ratio));
    if (r.uncertain)
      a.note += std::string(a.note.empty() ? "" : "; ") +
                "some verdicts stayed within the noise of the threshold";

    Names rest;
    for (const auto& u : all_)
      if (culprits.count(u) == 0) rest.insert(u);
    std::string rest_verdict = "no measurable effect";
    if (!rest.empty()) {
      a.harmless = interval(rest);
      a.harmless_axes = axes_alone(rest);
      if (clearly_slower(*a.harmless) && a.harmless->ratio <= 1.0 - options_.search.min_effect)
        rest_verdict = fmt::format("not attributed (search stopped after {} rounds)",
                                   options_.search.max_rounds);
    }

    auto rank = [](const results::KnobEffect& k) {
      if (k.verdict == "the cause") return 0;
      if (k.verdict == "contributes") return 1;
      return 2;
    };
    std::stable_sort(found.begin(), found.end(), [&](const auto& x, const auto& y) {
      if (rank(x) != rank(y)) return rank(x) < rank(y);
      return x.alone->ratio < y.alone->ratio;
    });
    // The headline: the causes by name, then the rest in one clause.
    std::vector<std::string> causes, contributors, only;
    for (const auto& k : found) {
      std::string d = describe(join(k.knobs, " + "));
      if (k.verdict == "the cause")
        causes.push_back(d);
      else if (k.verdict == "contributes")
        contributors.push_back(d);
      else
        only.push_back(d);
    }
    std::vector<std::string> parts{fmt::format("{}: {}", options_.stage, change(a.stage.ratio))};
    if (causes.size() == 1) parts.push_back(causes[0] + " is the cause");
    if (causes.size() > 1)
      parts.push_back(join(causes, " and ") +
                      (redundant ? " are each the cause alone" : " are the causes"));
    if (!contributors.empty())
      parts.push_back(join(contributors, " and ") +
                      (contributors.size() == 1 ? " contributes" : " contribute"));
    if (!only.empty()) parts.push_back(join(only, " and ") + " slow only together");
    if (!rest.empty()) {
      std::size_t knobs = 0;
      for (const auto& u : rest) knobs += measurer_.members(u).size();
      parts.push_back(fmt::format(
          "{} other knob{}: {}", knobs, knobs == 1 ? "" : "s",
          rest_verdict == "no measurable effect" ? no_effect(*a.harmless) : rest_verdict));
    }
    a.headline = join(parts, "; ");
    a.knobs = std::move(found);
    for (const auto& u : rest) {
      results::KnobEffect k = effect_of(u);
      k.verdict = rest_verdict;
      a.knobs.push_back(std::move(k));
    }
  }

  UnitMeasurer& measurer_;
  AttributionOptions options_;
  Names all_;
  std::map<std::string, Candidate> unit_;
  std::map<Names, std::vector<double>> cache_;
  std::vector<double> good_;
  double sigma_ = 0;
  int dof_ = 1;
};

}  // namespace

std::vector<std::vector<std::string>> together_groups(const knobs::Catalog& catalog) {
  std::vector<std::vector<std::string>> out;
  for (const auto& k : catalog.knobs())
    if (!k.acts_with.empty()) {
      std::vector<std::string> group = k.acts_with;
      group.push_back(k.name);
      out.push_back(std::move(group));
    }
  return out;
}

std::vector<Candidate> attribution_units(const std::vector<Candidate>& candidates,
                                         const std::vector<std::vector<std::string>>& together) {
  std::vector<Candidate> out;
  std::set<std::size_t> merged;
  for (const auto& group : together) {
    std::vector<std::size_t> present;
    for (const auto& name : group)
      for (std::size_t i = 0; i < candidates.size(); ++i)
        if (iequals(candidates[i].change.name, name) && merged.count(i) == 0) present.push_back(i);
    if (present.size() < 2) continue;
    Candidate u;
    std::vector<std::string> names, values, goods;
    for (std::size_t i : present) {
      const Candidate& c = candidates[i];
      names.push_back(c.change.name);
      values.push_back(c.change.value);
      goods.push_back(c.good_value.value_or(c.server_value));
      u.needs_restart = u.needs_restart || c.needs_restart;
      merged.insert(i);
    }
    u.change.name = join(names, " + ");
    u.change.value = join(values, ", ");
    u.good_value = join(goods, ", ");
    out.push_back(std::move(u));
  }
  for (std::size_t i = 0; i < candidates.size(); ++i)
    if (merged.count(i) == 0) out.push_back(candidates[i]);
  return out;
}

Attributed attribute(Measurer& measurer, const std::vector<Candidate>& candidates,
                     AttributionOptions options) {
  std::map<std::string, std::vector<Setting>> members;
  std::vector<Candidate> units = attribution_units(candidates, options.together);
  for (const auto& u : units) {
    std::vector<Setting>& m = members[u.change.name];
    for (const auto& c : candidates)
      for (const auto& part : split(u.change.name, '+'))
        if (iequals(trim(part), c.change.name)) m.push_back(c.change);
  }
  for (double tps : options.search.known_good)
    if (!std::isfinite(tps) || tps <= 0)
      throw RuntimeError("the reference has a run that committed nothing: nothing to compare");
  for (double tps : options.search.known_bad)
    if (!std::isfinite(tps) || tps <= 0)
      throw RuntimeError("the stage has a run that committed nothing: nothing to attribute");
  UnitMeasurer unit_measurer(measurer, std::move(members), options.max_runs);
  return Attribution(unit_measurer, std::move(options)).run(units);
}

int expected_attribution_runs(int units, int repeats, int level_repeats) {
  if (units < 2) return 0;
  int levels = 2 * std::max(0, level_repeats - repeats);
  int search = 2 * static_cast<int>(std::ceil(std::log2(units)));
  // + the stage without its cause (the remainder), and good measured again right before and
  // after it (drift control, docs/bisect.md).
  return levels + search + 1 + 2;
}

}  // namespace pgslow::search
