#include "results/waits.h"

#include <fmt/format.h>

#include <algorithm>

#include "common/format.h"

namespace pgslow::results {

namespace {

std::uint64_t backend_samples(const WaitProfile& profile) {
  std::uint64_t total = 0;
  for (const auto& [wait, n] : profile.backends) total += n;
  return total;
}

}  // namespace

bool read_from_proc(const std::string& wait) {
  return wait.ends_with(" (/proc)");
}

std::vector<WaitShare> wait_shares(const WaitProfile& profile) {
  const std::uint64_t total = backend_samples(profile);
  std::vector<WaitShare> out;
  if (total == 0) return out;
  for (const auto& [wait, n] : profile.backends) {
    if (n == 0) continue;
    out.push_back({wait, static_cast<double>(n) / static_cast<double>(total), n});
  }
  std::stable_sort(out.begin(), out.end(), [](const WaitShare& a, const WaitShare& b) {
    return a.backend_samples > b.backend_samples;
  });
  return out;
}

double wait_share(const WaitProfile& profile, const std::string& wait) {
  const std::uint64_t total = backend_samples(profile);
  const auto it = profile.backends.find(wait);
  if (total == 0 || it == profile.backends.end()) return 0;
  return static_cast<double>(it->second) / static_cast<double>(total);
}

std::string format_share(double share) {
  if (share <= 0) return "0%";
  if (share < 0.01) return "<1%";  // never "0%" for a wait that was seen
  return fmt::format("{:.0f}%", share * 100);
}

std::string top_waits_text(const WaitProfile& profile, std::size_t top) {
  const auto shares = wait_shares(profile);
  std::string text;
  for (std::size_t i = 0; i < shares.size() && i < top; ++i)
    text += (i == 0 ? "" : ", ") + shares[i].wait + " " + format_share(shares[i].share);
  return text;
}

std::string waits_text(const StageResult& stage, const WaitProfile* baseline,
                       const std::string& baseline_envelope, std::size_t top) {
  if (!stage.waits) return {};
  const auto shares = wait_shares(*stage.waits);
  if (shares.empty()) return {};
  std::string changed;
  for (const auto& c : stage.changes) changed += (changed.empty() ? "" : ", ") + c.name;
  // A swept envelope moves with the knobs and shares their effect: name it beside them.
  if (!stage.envelope.empty() && stage.envelope != baseline_envelope)
    changed += (changed.empty() ? "" : ", ") + ("envelope " + stage.envelope);
  std::string text = changed.empty() ? "" : changed + " → ";
  for (std::size_t i = 0, shown = 0; i < shares.size(); ++i) {
    if (i >= top && !read_from_proc(shares[i].wait)) continue;
    if (shown++ > 0) text += "; ";
    text += shares[i].wait + " " + format_share(shares[i].share);
    if (i == 0) text += " of backend time";
    if (baseline != nullptr)
      text += " (baseline " + format_share(wait_share(*baseline, shares[i].wait)) + ")";
  }
  const std::uint64_t n = stage.waits->samples;
  return text + fmt::format("; {} sample{}", format_count(n), n == 1 ? "" : "s");
}

const WaitProfile* baseline_waits(const StageResult& stage, const StageResult* baseline) {
  if (stage.switchback)
    return stage.switchback->reference_waits ? &*stage.switchback->reference_waits : nullptr;
  if (baseline == nullptr || baseline == &stage || !baseline->waits) return nullptr;
  return &*baseline->waits;
}

}  // namespace pgslow::results
