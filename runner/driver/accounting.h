#pragma once
// The driver's accounting, apart from libpq and the event loop: which transactions count
// (those that end inside the measured window, whenever they began; none that end in the
// warm-up), what each adds (outcome, latency, fixed-rate lateness, pool wait, switchback
// block, the live progress line), how the workers' accounts merge, and how the merged
// accounts become the run's Measurement. The worker (worker.h) records into one Accounts per
// thread; the run (driver.cpp) merges them. Unit-tested with made-up times
// (tests/unit/driver/accounting_test.cpp).

#include <atomic>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "common/progress.h"
#include "driver/driver.h"
#include "driver/histogram.h"
#include "driver/outcome.h"
#include "results/model.h"
#include "workload/workload.h"

namespace pgslow::driver {

// The measured window on the driver's clock (µs). A transaction counts when it ends in
// (start, end] and the window's end did not stop its retrying. Counting only those that also
// began after the warm-up would bias TPS low by about latency / duration per client and hide
// the slowest transactions from p99 and max: worst for the catastrophic presets.
struct Window {
  std::int64_t start = 0;        // the warm-up's end
  std::int64_t end = INT64_MAX;  // earlier when the run ends early (a stop, on_poll)
  bool counts(std::int64_t ended, const Outcome& o) const {
    return ended > start && ended <= end && !o.window_closed;
  }
};

// One transaction as its client saw it end, or fail to start (a refused connect).
struct Finished {
  std::size_t type = 0;
  Outcome outcome;
  std::int64_t scheduled = 0;  // latency counts from here (fixed rate: the arrival)
  std::int64_t started = 0;    // when it began: later than scheduled by the schedule's lag
  std::int64_t granted = 0;    // pool mode: when a connection was granted (wait from started)
  std::int64_t ended = 0;
  bool connected = true;  // false: no connection, it never ran
  int block = -1;         // switchback: the block completions count in now; -1: none
  std::int64_t latency() const { return ended - scheduled; }
};

// What the accounts are of: the run's transaction types and modes.
struct AccountsShape {
  std::size_t types = 1;
  bool fixed_rate = false;
  bool pooled = false;
  int max_blocks = 0;  // switchback blocks; 0: not a switchback run
  // The run's live count per block, read by on_poll (one per block; nullptr: none).
  std::atomic<std::uint64_t>* block_finished = nullptr;
  // The intervals of each type's series over time (Measurement::type_series); 0: none kept.
  // `interval_count` of them cover the planned window: allocated before the clock starts.
  std::int64_t interval_us = 0;
  std::size_t interval_count = 0;
};

// One transaction type in one interval of the window.
struct IntervalTally {
  std::uint64_t finished = 0;  // committed or rolled back
  std::uint64_t failed = 0;
  CoarseHistogram latency;  // of those that finished
  void record(bool did_fail, std::int64_t latency_us);
  void merge(const IntervalTally& other);
};

enum class Wait { kKeying, kThink };

// What one worker counted; the run merges its workers' into one.
class Accounts {
 public:
  Accounts() = default;
  explicit Accounts(const AccountsShape& shape);

  // Adds one transaction; returns whether it counted (its client's counters go with it).
  bool record(const Finished& tx, const Window& window);
  // A keying or think time of a transaction of `type` that began at `from`: counted when it
  // began inside the window and the window's end did not cut it short (`cut_short`).
  void record_wait(Wait kind, std::size_t type, std::int64_t from, std::int64_t waited_us,
                   const Window& window, bool cut_short);
  // At the window's end: a transaction of `type` under way since its scheduled start `since`
  // (0: none under way). Not counted, but reported.
  void record_in_flight(std::int64_t since, std::size_t type, const Window& window);
  // A commit of the workload probe's type (driver.cpp reads the probe as the window starts
  // and ends): `read_start`/`read_end` time the first read (read_end 0: not read yet);
  // `undecided`: near the window's end, judged after the run against both reads.
  void record_probe_commit(std::int64_t started, std::int64_t ended, const Window& window,
                           std::int64_t read_start, std::int64_t read_end, bool undecided);
  void merge(const Accounts& other);

  std::vector<Tally> tallies;              // per type
  std::vector<std::uint64_t> counters;     // Client::take_counters() of counted transactions
  std::vector<std::uint64_t> finished;     // switchback: committed + rolled back, per block
  std::vector<Histogram> block_latency;    // switchback: per block
  std::uint64_t block_failed[2] = {0, 0};  // per configuration (even blocks: the reference)
  Histogram schedule_lag;                  // fixed rate: started - scheduled
  std::uint64_t on_time = 0;  // fixed rate: counted transactions started within kOnTimeLagUs
  Histogram pool_wait;        // pool mode: granted - started
  Histogram connect_time;     // every connection opened
  std::uint64_t reconnects = 0;
  std::int64_t window_end = 0;  // when counting stopped
  // Transactions under way when the window closed, and the longest of them had run by then:
  // a lower bound on its latency (it ends after the window and is not counted).
  std::uint64_t in_flight_at_end = 0;
  std::int64_t in_flight_longest_us = 0;
  std::vector<std::uint64_t> in_flight_by_type;
  // Keying and think times waited inside the window, per type: how many, and how long.
  struct Waits {
    std::uint64_t keyings = 0, thinks = 0;
    std::int64_t keying_us = 0, think_us = 0;
  };
  std::vector<Waits> waits;
  // Completions (committed + rolled back) per minute of the window, per type.
  std::vector<std::vector<std::uint64_t>> per_minute;
  // Per interval of shape.interval_us, per type: shape.interval_count of them (none when 0).
  std::vector<std::vector<IntervalTally>> intervals;
  std::int64_t interval_us() const { return shape_.interval_us; }
  // Probe commits between the two reads for sure, in flight at the first read, and (start,
  // end) of those judged after the run.
  std::uint64_t probe_sure = 0;
  std::uint64_t probe_in_flight = 0;
  std::vector<std::pair<std::int64_t, std::int64_t>> probe_pending;
  // The live progress line's count since the last publication: every completion, warm-up
  // included, and the failures that ended by the window's end.
  Histogram live;
  std::uint64_t live_failed = 0;
  // Switchback: copies the latency of every block recorded into since the last call into
  // `blocks` (one per block), so a look during the run reads each block's tail; blocks run one
  // after another, so those are a range and usually one block.
  void publish_blocks(std::vector<Histogram>& blocks);

 private:
  AccountsShape shape_;
  int latest_block_ = -1;     // the latest block recorded into
  int published_block_ = -1;  // latest_block_ at the last publish_blocks
};

// One timed read of the workload's probe.
struct ProbeRead {
  double value = 0;
  std::int64_t began = 0, ended = 0;
};

// The commits judged after the run (Accounts::probe_pending) against both reads, added to
// `run`'s probe_sure / probe_in_flight; those outside the reads are left out.
void judge_pending_probes(const Accounts& merged, const ProbeRead& first, const ProbeRead& last,
                          workload::RunCounts& run);

// What the run knows besides the accounts.
struct RunFacts {
  std::vector<std::string> type_names;  // transaction_types(); empty: one, `workload_name`
  std::string workload_name;
  std::int64_t measure_start = 0;
  bool fixed_rate = false;
  bool pooled = false;
  int clients = 0;
  int connected = 0;  // clients, or pool connections in pool mode
  int refused = 0;
};

// The run's Measurement from its workers' merged accounts: counts, TPS over the window, latency,
// lateness, pool wait, failures by class (not the per-second series, the headline, the audit).
results::Measurement measurement_of(const Accounts& merged, const RunFacts& facts);

// The workload's counts (for its headline and audit) from the merged accounts and the
// Measurement: all but the run's settings and the probe's reads.
void add_run_counts(const Accounts& merged, const results::Measurement& m,
                    std::size_t counter_count, workload::RunCounts& run);

// A switchback run's tallies from the merged accounts.
BlockTallies block_tallies(const Accounts& merged);

// The per-second series and the progress line's ticks: each tick divides what the workers
// published since the last one by the time that really passed.
class SecondSeries {
 public:
  SecondSeries(std::int64_t t0, std::int64_t measure_start)
      : t0_(t0), measure_start_(measure_start), last_(t0) {}
  struct Second {
    ProgressTick tick;
    std::uint64_t failed_shown = 0;  // the line's count: the warm-up's, then the window's
  };
  // A tick at `now`: `second` holds what was published since the last tick, `failed_total`
  // the failures published so far. Inside the window and not at a stop, the second joins the
  // series.
  Second tick(std::int64_t now, const Histogram& second, std::uint64_t failed_total, bool stopping);
  std::vector<double> tps_per_second;
  std::vector<double> p99_per_second;

 private:
  std::int64_t t0_;
  std::int64_t measure_start_;
  std::int64_t last_;
  std::uint64_t failed_before_ = 0;
  std::uint64_t failed_in_warmup_ = 0;
};

}  // namespace pgslow::driver
