#pragma once
// What the report says about each stage, decided once for every format: the TPS figure, the
// change versus the previous stage and the baseline (or "no measurable effect" inside the
// noise band), the transaction count behind the figure, and the evidence that moved most.

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "report/model.h"

namespace pgslow::report {

// Noise band when a stage has a single repeat: changes within ±5% are not called effects.
inline constexpr double kDefaultNoiseBand = 0.05;
// With repeats, the band is the larger relative spread ((max - min) / median) of the two
// stages compared, but never below this floor.
inline constexpr double kMinNoiseBand = 0.02;
// A TPS figure resting on fewer transactions than this says how many it rests on.
inline constexpr std::uint64_t kFewTransactions = 100;
// Evidence whose larger raw count is below this is not a "mover" (one checkpoint is not news).
inline constexpr double kMinEvidenceCount = 3;
// The same for byte counters: under 1 MiB in both stages is not a mover.
inline constexpr double kMinEvidenceBytes = 1024.0 * 1024;

// One evidence figure compared with the baseline, normalised (per transaction, per minute).
struct EvidenceMove {
  std::string key;
  std::string label;    // "read syscalls/tx"
  double baseline = 0;  // normalised; the reference stage's value (baseline or previous)
  double stage = 0;     // normalised
  double score = 0;     // |log ratio|: how far it moved
  std::string text;     // "hit ratio 99.9% → 70.5%"
};

// The change of a stage against a reference stage.
struct Change {
  double ratio = 0;       // tps / reference tps
  double noise_band = 0;  // relative; within it the change is "no measurable effect"
  bool measurable = false;
  std::string text;  // "-85.1% (6.7x slower)" or "no measurable effect"
};

struct StageSummary {
  std::size_t index = 0;  // into Run::stages
  bool ran = false;       // false: the stage failed (error) or has no measurement
  double tps = 0;         // median over repeats
  double tps_min = 0;
  double tps_max = 0;
  std::size_t repeats = 0;
  std::uint64_t transactions = 0;  // behind the median figure (committed + rolled back)
  bool few_transactions = false;
  double p99_us = 0;                  // of the median repeat
  double window_seconds = 0;          // the evidence window
  std::optional<Change> vs_previous;  // the last earlier stage that ran
  std::optional<Change> vs_baseline;  // stage 0, when it ran
  // Up to two, largest first, versus the previous stage that ran (cumulative runs) or the
  // baseline (mode "isolated").
  std::vector<EvidenceMove> movers;
  std::string tps_text;  // "1,052" or "1,052 (1,010-1,090)" with repeats
  std::string note;      // "12 transactions" when few, else empty
};

// The median repeat: the one whose TPS is the median (the lower middle for an even count).
const Measurement* median_repeat(const StageResult& stage);

// Compares `stage` with `reference` (both ran).
Change compare_stages(const StageResult& stage, const StageResult& reference);

// Evidence of `stage` compared with `baseline`, every key both have, largest move first.
std::vector<EvidenceMove> evidence_moves(const StageResult& stage, const StageResult& baseline);

// The normalised value of one evidence key in one stage, and how it is written
// ("70.5%", "640/tx", "41/min"); nullopt when the stage lacks the key or a divisor.
std::optional<double> normalised_evidence(const StageResult& stage, const std::string& key);
std::string format_evidence_value(const std::string& key, double normalised);
// "read syscalls/tx", "checkpoints requested/min", "hit ratio".
std::string evidence_label(const std::string& key);

// The `n` figures a stage's row shows: families ranked by their largest move, one key each.
std::vector<EvidenceMove> top_movers(const std::vector<EvidenceMove>& moves, std::size_t n);

std::vector<StageSummary> summarize(const Run& run);

// The header line facts, one place for every format: "tpcc, scale 4 (412 MB)", "2 cores, 23 GB".
std::string describe_workload(const Run& run);
std::string describe_machine(const Machine& machine);
std::string describe_measure(const Run& run);  // "60 s measured after 10 s warm-up, 3 repeats"
std::string describe_clients(const Run& run);  // "8 clients" or "8-100 clients"
// "shared_buffers 128MB → 2MB", with " (restart)" when it needs one.
std::string describe_change(const KnobChange& change);
// The header of every format as (label, value) lines: server, workload, measure, machine, run.
std::vector<std::pair<std::string, std::string>> run_facts(const Run& run);
// "summarize_wal = on: needs PostgreSQL 17".
std::string describe_skipped(const SkippedKnob& knob);

}  // namespace pgslow::report
