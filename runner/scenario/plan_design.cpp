// How a planned stage is measured (plan.h): switchback or separate runs and why, the looks of
// a stage that alternates with the baseline, and the axes it tests first.

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>

#include "common/strings.h"
#include "scenario/plan.h"
#include "scenario/plan_pooler.h"
#include "server/pooler.h"

namespace pgslow::scenario {

results::SwitchbackDesign alternating_looks_of(const MeasureSpec& m) {
  return results::alternating_looks(m.precision, m.repeats, m.budget_s,
                                    2 * (m.warmup_s + m.duration_s + 1));
}

namespace {
// Whether two loads differ in their client count and nothing else: no pooler to switch.
bool switches_clients_only(results::LoadSettings a, const results::LoadSettings& b) {
  a.clients = b.clients;
  return a == b;
}
}  // namespace

bool alternates_with_baseline(const PlannedStage& stage, int repeats) {
  return stage.reference == 0 && !stage.attribute && repeats >= 2 && !stage.switchback;
}

// Switchback (one run, switching between the baseline and the stage) when every knob the stage
// changes acts within kMaxSwitchbackCarryover seconds of a reload; separate runs otherwise.
// The reason goes into the plan and the report.
void choose_design(PlannedStage& stage, const PlannedStage& baseline, const Scenario& scenario,
                   const knobs::Catalog& catalog) {
  const MeasureSpec& m = scenario.measure;
  auto isolated = [&](std::string why) {
    stage.design_why = "separate runs: " + std::move(why);
    // Alternating with the baseline, the stage takes more pairs until its interval is narrow
    // enough, or its headline is resolved (experiment/plan_schedule.cpp).
    const bool alternates = alternates_with_baseline(stage, m.repeats);
    if (alternates && m.precision > 0)
      stage.design_why +=
          fmt::format(", paired with the baseline until its interval is ±{:g}% or {} are spent",
                      m.precision * 100, format_seconds(m.budget_s));
    else if (alternates)
      stage.design_why += fmt::format(
          ", paired with the baseline until its headline is resolved (TPS called, or TPS and its "
          "own axes each called or within ±{:g}%), at most {} pairs",
          results::kResolvedWithin * 100, alternating_looks_of(m).max_pairs);
    else if (m.precision > 0)
      stage.design_why += fmt::format(
          "; --precision needs a stage that alternates with the baseline (isolated, 2 repeats or "
          "more): this one gets its {} runs",
          m.repeats);
  };
  if (!m.switchback) return isolated("the scenario asks for them (measure.design: isolated)");
  if (stage.reference != 0) return isolated("it is compared with the stage before (cumulative)");
  if (!stage.envelope.empty())
    return isolated("it runs in an envelope of its own (server.memory/cpus), set between runs");
  const bool same_load = stage.load == baseline.load;
  if (stage.changes.empty() && same_load) return isolated("it changes no configuration");
  if (!same_load) {
    if (auto why = load_switch_refusal(scenario, baseline.load, stage.load))
      return isolated(std::move(*why));
  }
  if (stage.attribute) return isolated("attribution measures each knob in runs of its own");
  double carryover = 0;
  std::string slowest;
  const bool switches_clients = stage.load.clients != baseline.load.clients;
  const bool switches_pooler = !same_load && !switches_clients_only(stage.load, baseline.load);
  if (switches_pooler) {
    // PgBouncer takes a RELOAD at once and a smaller pool is emptied to its size as its server
    // connections are released (experiment/pooler_path.cpp waits for it, and says when it did
    // not).
    carryover = kPoolerCarryover;
    slowest = "PgBouncer's pool";
  }
  for (const auto& c : stage.changes) {
    if (c.apply_by == results::kApplyByPooler) continue;  // load_switch_refusal judged them
    if (c.apply_by == "restart") return isolated(c.name + " needs a restart");
    const knobs::Knob* k = catalog.find(c.name);
    if (k == nullptr) return isolated(c.name + " has no carryover in the knob catalog");
    if (k->carryover_per_connection)
      return isolated(c.name +
                      " stays in a connection's cached plans until it reconnects (carryover: "
                      "connection)");
    if (k->carryover_s > carryover) {
      carryover = k->carryover_s;
      slowest = c.name;
    }
  }
  if (carryover > kMaxSwitchbackCarryover)
    return isolated(
        fmt::format("{} takes {} to settle after a reload (carryover), longer than a "
                    "switchback block can wait",
                    slowest, format_seconds(carryover)));
  results::SwitchbackDesign d;
  d.settle_s = std::max(1.0, std::ceil(carryover));
  d.block_s = std::max(4.0, 3 * d.settle_s);
  d.precision = m.precision;
  if (m.precision > 0) {
    d.min_pairs = 4;
    d.max_pairs = std::max(4, static_cast<int>(m.budget_s / (2 * d.block_s)));
  } else {
    d.max_pairs = m.pairs;
  }
  stage.switchback = d;
  const bool server_knobs = std::any_of(
      stage.changes.begin(), stage.changes.end(),
      [](const results::KnobChange& c) { return c.apply_by != results::kApplyByPooler; });
  std::vector<std::string> acts;
  if (switches_clients)
    acts.push_back(fmt::format(
        "the clients beyond the {} of the smaller side stand by with their connection closed "
        "and connect again at each switch (a block counts once all {} run)",
        std::min(stage.load.clients, baseline.load.clients),
        std::max(stage.load.clients, baseline.load.clients)));
  if (switches_pooler)
    acts.push_back(fmt::format(
        "pgslow's PgBouncer takes the pool's settings on RELOAD and settles within {} (waited for "
        "at each switch)",
        format_seconds(kPoolerCarryover)));
  if (server_knobs || same_load)
    acts.push_back(
        fmt::format("every knob acts within {} of a reload",
                    carryover > 0 ? format_seconds(carryover) : std::string("a command")));
  stage.design_why = fmt::format(
      "switchback: {}, so one run switches between the baseline and this stage every {:g} s "
      "and drops the first {:g} s of each block",
      fmt::join(acts, ", and "), d.block_s, d.settle_s);
  if (d.precision > 0)
    stage.design_why +=
        fmt::format(", until its interval is ±{:g}% or {} blocks of each are measured ({:g} s)",
                    d.precision * 100, d.max_pairs, (2 * d.max_pairs + 1) * d.block_s);
  else
    stage.design_why += fmt::format(", {} blocks of each", d.max_pairs);
}

std::vector<std::string> own_axes(const PlannedStage& stage,
                                  const results::LoadSettings& baseline_load,
                                  const knobs::Catalog& catalog) {
  std::vector<std::string> out = {"tps"};
  auto add = [&](std::string_view axis) {
    if (std::find(out.begin(), out.end(), axis) == out.end()) out.emplace_back(axis);
  };
  bool through_pooler = stage.load.pooler == "pgbouncer";
  for (const auto& c : stage.changes) {
    if (c.apply_by == results::kApplyByPooler) {
      through_pooler = true;
      continue;
    }
    if (const knobs::Knob* k = catalog.find(c.name))
      for (const auto& axis : k->moves) add(axis);
  }
  const results::LoadSettings& load = stage.load;
  // A pool (PgBouncer's or the driver's) too small makes clients wait for a connection: the
  // pooler's wait, or the latency the driver's own pool adds.
  if (through_pooler && (load.pool_size != baseline_load.pool_size ||
                         load.pooler_settings != baseline_load.pooler_settings ||
                         load.pooler != baseline_load.pooler))
    add("pooler_wait_ms");
  if (load.clients != baseline_load.clients || load.pool_size != baseline_load.pool_size ||
      load.rate != baseline_load.rate || load.rate_percent != baseline_load.rate_percent ||
      load.pooler != baseline_load.pooler) {
    add("p95");
    add("p99");
  }
  // A connection per transaction forks a backend for each: the server's CPU.
  if (load.connect_per_transaction != baseline_load.connect_per_transaction) add("cpu_per_tx");
  // The axes' own order, so every format lists them alike.
  std::vector<std::string> ordered;
  for (std::string_view key : knobs::kAxisKeys)
    if (std::find(out.begin(), out.end(), key) != out.end()) ordered.emplace_back(key);
  return ordered;
}

}  // namespace pgslow::scenario
