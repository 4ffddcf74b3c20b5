#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <set>

#include "common/format.h"
#include "results/evidence_info.h"
#include "results/metric.h"
#include "results/stats.h"
#include "results/summary.h"
#include "results/waits.h"

// A run's facts in words: its workload, machine, measurement, clients, and each knob change.

namespace pgslow::results {

std::string interval_text(const std::optional<Change>& change) {
  return change ? format_interval(change->interval) : "—";
}

std::string describe_retries(const Measurement& m) {
  std::string out;
  for (const auto& t : m.by_type)
    if (t.retries > 0)
      out += fmt::format("{}{} {} in {}", out.empty() ? "" : ", ", t.name, format_count(t.retries),
                         format_seconds(t.retry_time_us / 1e6));
  return out;
}

std::string describe_workload(const Run& run) {
  std::string text = run.workload.empty() ? "unknown workload" : run.workload;
  if (run.scale > 0) text += fmt::format(", scale {}", run.scale);
  if (run.data_bytes > 0)
    text += fmt::format(" ({})", format_size(static_cast<double>(run.data_bytes)));
  return text;
}

std::string describe_machine(const Machine& machine) {
  std::vector<std::string> parts;
  if (machine.cores > 0) parts.push_back(fmt::format("{} cores", machine.cores));
  if (machine.memory_bytes > 0) {
    parts.push_back(format_size(static_cast<double>(machine.memory_bytes)) + " memory");
  }
  if (!machine.kernel.empty()) parts.push_back(machine.kernel);
  if (parts.empty()) return "unknown machine";
  std::string text;
  for (const auto& p : parts) text += (text.empty() ? "" : ", ") + p;
  return text;
}

std::string describe_measure(const Run& run) {
  std::string text = format_seconds(run.duration_s) + " measured";
  if (run.warmup_s > 0) text += " after " + format_seconds(run.warmup_s) + " warm-up";
  if (run.repeats > 1) text += fmt::format(", {} repeats (median shown)", run.repeats);
  if (!run.mode.empty()) text += ", " + run.mode + " stages";
  return text;
}

std::string describe_clients(const Run& run) {
  std::set<int> clients;
  for (const auto& stage : run.stages) {
    if (stage.load.clients > 0) clients.insert(stage.load.clients);
  }
  if (clients.empty()) return "clients unknown";
  if (clients.size() == 1) {
    return fmt::format("{} client{}", *clients.begin(), *clients.begin() == 1 ? "" : "s");
  }
  return fmt::format("{}-{} clients", *clients.begin(), *clients.rbegin());
}

std::string describe_change(const KnobChange& change) {
  std::string text =
      fmt::format("{} {} → {}", change.name,
                  change.old_value.empty() ? "(default)" : change.old_value, change.new_value);
  if (change.apply_by == "restart") text += " (restart)";
  return text;
}

std::string describe_reset(const Run& run) {
  // reset_seconds sums a stage's resets: one per repeat (a switchback stage resets once).
  double seconds = 0;
  std::size_t resets = 0;
  for (const auto& stage : run.stages) {
    if (stage.reset_seconds <= 0) continue;
    seconds += stage.reset_seconds;
    resets += stage.switchback ? 1 : std::max<std::size_t>(1, stage.repeats.size());
  }
  if (resets == 0) return run.reset_method;
  return fmt::format("{}, {} per reset, before each measured window", run.reset_method,
                     format_latency_us(seconds / static_cast<double>(resets) * 1e6));
}

std::vector<std::pair<std::string, std::string>> run_facts(const Run& run) {
  std::vector<std::pair<std::string, std::string>> facts;
  std::string server = run.server_version.empty() ? "unknown server" : run.server_version;
  if (!run.target.empty()) server += " (" + run.target + ")";
  facts.emplace_back("server", server);
  // Only a run with an envelope says so: one without reads as it always did.
  if (!run.envelope.empty()) facts.emplace_back("envelope", run.envelope);
  facts.emplace_back("workload", describe_workload(run) + ", " + describe_clients(run));
  if (!run.pooler.empty()) facts.emplace_back("pooler", run.pooler);
  if (!run.reset_method.empty()) facts.emplace_back("reset", describe_reset(run));
  facts.emplace_back("measure", describe_measure(run));
  if (!run.stages.empty()) facts.emplace_back("noise", describe_noise(run_noise(run)));
  if (const std::string few = few_runs_note(run); !few.empty()) facts.emplace_back("few runs", few);
  facts.emplace_back("machine", describe_machine(run.machine));
  std::string when = run.started_at.empty() ? "unknown start" : run.started_at;
  if (run.wall_seconds > 0) when += ", took " + format_seconds(run.wall_seconds);
  if (!run.pgslow_version.empty()) when += ", pgslow " + run.pgslow_version;
  facts.emplace_back("run", when);
  return facts;
}

std::string describe_skipped(const SkippedKnob& knob) {
  std::string text = knob.name;
  if (!knob.value.empty()) text += " = " + knob.value;
  return text + ": " + (knob.reason.empty() ? "skipped" : knob.reason);
}

}  // namespace pgslow::results
