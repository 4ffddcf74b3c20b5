#pragma once
// A stage's wait profile as the reports show it: each wait's share of backend time, and the
// line that links a stage's knobs to its dominant waits with the baseline's share beside them
// ("random_page_cost → CPU 51% of backend time (baseline 2%)").

#include <cstdint>
#include <string>
#include <vector>

#include "results/model.h"

namespace pgslow::results {

// A wait PostgreSQL does not report, which the wait sampler read from /proc instead
// (evidence/wait_sampler.h): PostgreSQL 15 to 18 sleep commit_delay with no wait event. The
// name says where it was read; 19 reports the same sleep as Timeout:CommitDelay.
inline constexpr const char* kCommitDelayFromProc = "Timeout:CommitDelay (/proc)";
// Whether `wait` was read from /proc rather than reported by the server.
bool read_from_proc(const std::string& wait);

struct WaitShare {
  std::string wait;  // "CPU", "IO:DataFileRead", ...
  double share = 0;  // of all backend-samples, 0..1
  std::uint64_t backend_samples = 0;
};

// Every wait of `profile`, largest share first (ties by name); empty without backend-samples.
std::vector<WaitShare> wait_shares(const WaitProfile& profile);
// The share of `wait` in `profile` (0 when absent).
double wait_share(const WaitProfile& profile, const std::string& wait);
// "81%", "<1%", "0%".
std::string format_share(double share);

// "CPU 51%, IO:DataFileRead 20%": the profile's `top` largest waits with their shares (the
// dashboard's running line); empty without backend-samples.
std::string top_waits_text(const WaitProfile& profile, std::size_t top = 3);

// The stage's top `top` waits with the baseline's share beside each, and any wait read from
// /proc below them (the one figure no server view shows), led by what the stage changed: its knobs,
// and its envelope when it ran in another than `baseline_envelope` (a sweep of server.memory/cpus).
// Without a baseline profile, the shares alone. Empty when the stage has no samples.
std::string waits_text(const StageResult& stage, const WaitProfile* baseline,
                       const std::string& baseline_envelope = {}, std::size_t top = 3);

// The profile the stage is compared with: a switchback stage's reference blocks, else the
// baseline stage's (nullptr when neither was sampled).
const WaitProfile* baseline_waits(const StageResult& stage, const StageResult* baseline);

}  // namespace pgslow::results
