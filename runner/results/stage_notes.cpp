#include "results/stage_notes.h"

#include <fmt/format.h>

#include <algorithm>
#include <thread>

namespace pgslow::results {

std::string disturbance_note(const Disturbance& d) {
  return fmt::format(
      "the machine was disturbed: work other than the server and pgslow's clients used up to "
      "{:.0f}% of its CPU during {} of {} run{} of this stage (other programs {:.0f}%, pgslow's "
      "dashboard and evidence {:.0f}%); its figures may be slower than the configuration alone "
      "explains",
      d.worst * 100, d.disturbed_runs, d.runs, d.runs == 1 ? "" : "s", d.other_programs * 100,
      d.pgslow_other * 100);
}

std::optional<std::string> driver_bound_note(const std::vector<Measurement>& runs, int workers) {
  const int threads = workers > 0 ? workers : static_cast<int>(std::thread::hardware_concurrency());
  double busiest = 0;
  for (const auto& m : runs) {
    const int used = std::min(std::max(1, threads), std::max(1, m.clients_connected));
    if (m.duration_s > 0 && m.client_cpu_s > 0)
      busiest = std::max(busiest, m.client_cpu_s / (m.duration_s * used));
  }
  if (busiest < 0.9) return std::nullopt;
  return fmt::format(
      "the driver may be the bottleneck: pgslow's client threads were busy {:.0f}% of the time; "
      "the server could go faster than this figure (give the driver more threads with "
      "--workers, or fewer clients)",
      busiest * 100);
}

}  // namespace pgslow::results
