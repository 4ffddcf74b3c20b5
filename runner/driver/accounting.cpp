#include "driver/accounting.h"

#include <algorithm>
#include <cmath>

namespace pgslow::driver {

Accounts::Accounts(const AccountsShape& shape) : shape_(shape) {
  tallies.resize(shape.types);
  // Allocated before the clock starts: the hot path only records.
  block_latency.resize(static_cast<std::size_t>(shape.max_blocks));
  if (shape.interval_us > 0)
    intervals.assign(shape.interval_count, std::vector<IntervalTally>(shape.types));
  finished.assign(static_cast<std::size_t>(shape.max_blocks), 0);
}

bool Accounts::record(const Finished& tx, const Window& window) {
  const bool failed = tx.outcome.kind == Outcome::Kind::kFailed;
  // The live line counts a failure that ended inside the window (or the warm-up): the
  // statements the window's end cancels fail after it and are in flight, not failed, and so
  // is a transaction whose retrying the window's end stopped.
  if (failed) {
    if (tx.ended <= window.end && !tx.outcome.window_closed) ++live_failed;
  } else {
    live.record(tx.latency());
  }
  if (!window.counts(tx.ended, tx.outcome)) return false;
  if (shape_.max_blocks > 0 && tx.block >= 0 && tx.block < shape_.max_blocks) {
    const auto b = static_cast<std::size_t>(tx.block);
    if (failed) {
      ++block_failed[tx.block & 1];
    } else {
      if (shape_.block_finished != nullptr)
        shape_.block_finished[b].fetch_add(1, std::memory_order_relaxed);
      ++finished[b];
      block_latency[b].record(tx.latency());
      latest_block_ = std::max(latest_block_, tx.block);
    }
  }
  tallies[tx.type].add(tx.outcome, tx.latency());
  if (shape_.interval_us > 0) {
    // Allocated for the planned window: a counted transaction ends inside it.
    const auto k = static_cast<std::size_t>((tx.ended - window.start - 1) / shape_.interval_us);
    if (k < intervals.size()) intervals[k][tx.type].record(failed, tx.latency());
  }
  if (!failed) {
    // (start, start + 1 min] is the first minute, as each interval of the series is.
    const auto minute = static_cast<std::size_t>((tx.ended - window.start - 1) / 60'000'000);
    if (per_minute.size() <= minute) per_minute.resize(minute + 1);
    if (per_minute[minute].empty()) per_minute[minute].assign(shape_.types, 0);
    ++per_minute[minute][tx.type];
  }
  if (shape_.fixed_rate) {
    schedule_lag.record(tx.started - tx.scheduled);
    if (static_cast<double>(tx.started - tx.scheduled) <= results::kOnTimeLagUs) ++on_time;
  }
  if (shape_.pooled && tx.connected) pool_wait.record(tx.granted - tx.started);
  return true;
}

void Accounts::record_wait(Wait kind, std::size_t type, std::int64_t from, std::int64_t waited_us,
                           const Window& window, bool cut_short) {
  if (cut_short || from < window.start) return;
  if (waits.size() <= type) waits.resize(type + 1);
  Waits& w = waits[type];
  if (kind == Wait::kKeying) {
    ++w.keyings;
    w.keying_us += waited_us;
  } else {
    ++w.thinks;
    w.think_us += waited_us;
  }
}

void Accounts::record_in_flight(std::int64_t since, std::size_t type, const Window& window) {
  if (in_flight_by_type.size() < shape_.types) in_flight_by_type.resize(shape_.types, 0);
  if (since <= 0 || since >= window.end) return;
  ++in_flight_at_end;
  ++in_flight_by_type[type];
  in_flight_longest_us = std::max(in_flight_longest_us, window.end - since);
}

void Accounts::record_probe_commit(std::int64_t started, std::int64_t ended, const Window& window,
                                   std::int64_t read_start, std::int64_t read_end, bool undecided) {
  if (ended < window.start) return;  // before the first read began
  if (read_end == 0 || undecided) {
    probe_pending.emplace_back(started, ended);
    return;
  }
  if (ended <= read_start) return;
  if (started >= read_end)
    ++probe_sure;
  else
    ++probe_in_flight;
}

namespace {
template <class T>
void add_each(std::vector<T>& into, const std::vector<T>& from) {
  if (into.size() < from.size()) into.resize(from.size());
  for (std::size_t i = 0; i < from.size(); ++i) into[i] += from[i];
}
// The same for tallies that merge (histograms, a type's or an interval's tally).
template <class T>
void merge_each(std::vector<T>& into, const std::vector<T>& from) {
  if (into.size() < from.size()) into.resize(from.size());
  for (std::size_t i = 0; i < from.size(); ++i) into[i].merge(from[i]);
}
}  // namespace

void IntervalTally::record(bool did_fail, std::int64_t latency_us) {
  if (did_fail) {
    ++failed;
  } else {
    ++finished;
    latency.record(latency_us);
  }
}

void IntervalTally::merge(const IntervalTally& o) {
  finished += o.finished;
  failed += o.failed;
  latency.merge(o.latency);
}

void Accounts::publish_blocks(std::vector<Histogram>& blocks) {
  // Blocks follow one another: those recorded into since the last call are the one published
  // last (it may have grown) up to the latest.
  for (int b = std::max(published_block_, 0);
       b <= latest_block_ && b < static_cast<int>(blocks.size()); ++b)
    blocks[static_cast<std::size_t>(b)] = block_latency[static_cast<std::size_t>(b)];
  published_block_ = latest_block_;
}

void Accounts::merge(const Accounts& o) {
  merge_each(tallies, o.tallies);
  add_each(counters, o.counters);
  add_each(finished, o.finished);
  merge_each(block_latency, o.block_latency);
  for (int p = 0; p < 2; ++p) block_failed[p] += o.block_failed[p];
  schedule_lag.merge(o.schedule_lag);
  on_time += o.on_time;
  pool_wait.merge(o.pool_wait);
  connect_time.merge(o.connect_time);
  reconnects += o.reconnects;
  window_end = std::max(window_end, o.window_end);
  in_flight_at_end += o.in_flight_at_end;
  in_flight_longest_us = std::max(in_flight_longest_us, o.in_flight_longest_us);
  add_each(in_flight_by_type, o.in_flight_by_type);
  if (waits.size() < o.waits.size()) waits.resize(o.waits.size());
  for (std::size_t i = 0; i < o.waits.size(); ++i) {
    waits[i].keyings += o.waits[i].keyings;
    waits[i].thinks += o.waits[i].thinks;
    waits[i].keying_us += o.waits[i].keying_us;
    waits[i].think_us += o.waits[i].think_us;
  }
  if (per_minute.size() < o.per_minute.size()) per_minute.resize(o.per_minute.size());
  for (std::size_t k = 0; k < o.per_minute.size(); ++k) add_each(per_minute[k], o.per_minute[k]);
  if (intervals.size() < o.intervals.size()) intervals.resize(o.intervals.size());
  for (std::size_t k = 0; k < o.intervals.size(); ++k) merge_each(intervals[k], o.intervals[k]);
  probe_sure += o.probe_sure;
  probe_in_flight += o.probe_in_flight;
  probe_pending.insert(probe_pending.end(), o.probe_pending.begin(), o.probe_pending.end());
  live.merge(o.live);
  live_failed += o.live_failed;
}

void judge_pending_probes(const Accounts& merged, const ProbeRead& first, const ProbeRead& last,
                          workload::RunCounts& run) {
  run.probe_sure += merged.probe_sure;
  run.probe_in_flight += merged.probe_in_flight;
  for (const auto& [began, ended] : merged.probe_pending) {
    if (ended <= first.began || began >= last.ended) continue;  // outside
    if (began >= first.ended && ended <= last.began)
      ++run.probe_sure;
    else
      ++run.probe_in_flight;
  }
}

namespace {

// Every type's series over the window's intervals (those the window reached, counted or not).
void add_type_series(const Accounts& merged, results::Measurement& m) {
  if (merged.interval_us() <= 0 || m.by_type.size() < 2) return;
  m.type_series_interval_s = static_cast<double>(merged.interval_us()) / 1e6;
  const auto n = static_cast<std::size_t>(std::ceil(m.duration_s / m.type_series_interval_s));
  const IntervalTally none;
  for (std::size_t i = 0; i < m.by_type.size(); ++i) {
    results::TypeSeries s;
    s.name = m.by_type[i].name;
    for (std::size_t k = 0; k < n; ++k) {
      const bool kept = k < merged.intervals.size() && i < merged.intervals[k].size();
      const IntervalTally& t = kept ? merged.intervals[k][i] : none;
      s.finished.push_back(t.finished);
      s.failed.push_back(t.failed);
      s.p90_us.push_back(t.latency.percentile(0.90));
    }
    m.type_series.push_back(std::move(s));
  }
}

}  // namespace

results::Measurement measurement_of(const Accounts& merged, const RunFacts& facts) {
  results::Measurement m;
  Tally total;
  for (std::size_t i = 0; i < merged.tallies.size(); ++i) {
    total.merge(merged.tallies[i]);
    m.by_type.push_back(merged.tallies[i].result(
        i < facts.type_names.size() ? facts.type_names[i] : facts.workload_name));
  }
  m.duration_s = std::max(0.0, static_cast<double>(merged.window_end - facts.measure_start) / 1e6);
  m.committed = total.committed;
  m.rolled_back = total.rolled_back;
  m.failed = total.failed;
  m.retries = total.retries;
  m.tps = m.duration_s > 0 ? static_cast<double>(m.committed + m.rolled_back) / m.duration_s : 0;
  m.reconnects = merged.reconnects;
  m.in_flight_at_end = merged.in_flight_at_end;
  m.in_flight_longest_us = static_cast<double>(merged.in_flight_longest_us);
  m.latency = total.latency.summary();
  if (facts.fixed_rate) m.schedule_lag = merged.schedule_lag.summary();
  if (facts.pooled) m.pool_wait = merged.pool_wait.summary();
  m.connect_time = merged.connect_time.summary();
  if (facts.fixed_rate && merged.schedule_lag.count() > 0)
    m.on_time_ratio =
        static_cast<double>(merged.on_time) / static_cast<double>(merged.schedule_lag.count());
  m.connections_refused = facts.refused;
  total.add_failures_to(m.failures_by_class);
  m.clients_requested = facts.clients;
  m.clients_connected = facts.pooled ? (facts.connected > 0 ? facts.clients : 0) : facts.connected;
  add_type_series(merged, m);
  return m;
}

void add_run_counts(const Accounts& merged, const results::Measurement& m,
                    std::size_t counter_count, workload::RunCounts& run) {
  const std::size_t types = merged.tallies.size();
  run.duration_s = m.duration_s;
  run.by_type = m.by_type;
  run.in_flight_by_type.assign(types, 0);
  for (std::size_t i = 0; i < merged.in_flight_by_type.size() && i < types; ++i)
    run.in_flight_by_type[i] = merged.in_flight_by_type[i];
  run.waits_by_type.assign(types, {});
  for (std::size_t i = 0; i < merged.waits.size() && i < types; ++i) {
    const Accounts::Waits& w = merged.waits[i];
    run.waits_by_type[i] = {.keyings = w.keyings,
                            .thinks = w.thinks,
                            .keying_s = static_cast<double>(w.keying_us) / 1e6,
                            .think_s = static_cast<double>(w.think_us) / 1e6};
  }
  // Whole minutes of the window only: a last partial minute is no rate.
  const auto whole_minutes = static_cast<std::size_t>(m.duration_s / 60);
  run.per_minute.assign(whole_minutes, std::vector<std::uint64_t>(types, 0));
  for (std::size_t k = 0; k < whole_minutes && k < merged.per_minute.size(); ++k)
    for (std::size_t i = 0; i < merged.per_minute[k].size() && i < types; ++i)
      run.per_minute[k][i] = merged.per_minute[k][i];
  run.counters.assign(counter_count, 0);
  for (std::size_t i = 0; i < counter_count && i < merged.counters.size(); ++i)
    run.counters[i] = merged.counters[i];
}

BlockTallies block_tallies(const Accounts& merged) {
  BlockTallies t;
  Histogram config_latency[2];  // even blocks run the reference, odd ones the stage
  for (std::size_t b = 0; b < merged.block_latency.size(); ++b) {
    t.finished.push_back(b < merged.finished.size() ? merged.finished[b] : 0);
    const Histogram& h = merged.block_latency[b];
    t.block_latency.push_back(h.summary());
    config_latency[b & 1].merge(h);
  }
  for (int p = 0; p < 2; ++p) {
    t.latency[p] = config_latency[p].summary();
    t.counted[p] = config_latency[p].count();
    t.failed[p] = merged.block_failed[p];
  }
  return t;
}

SecondSeries::Second SecondSeries::tick(std::int64_t now, const Histogram& second,
                                        std::uint64_t failed_total, bool stopping) {
  const double secs = static_cast<double>(now - last_) / 1e6;
  const double tps = secs > 0 ? static_cast<double>(second.count()) / secs : 0;
  if (now > measure_start_ && !stopping) {
    tps_per_second.push_back(tps);
    p99_per_second.push_back(second.percentile(0.99));
  }
  Second s;
  const bool warming_up = now <= measure_start_;
  // Failures of the warm-up: the line shows them while warming up, then counts again from the
  // measured window, as the report does (a warm-up failure is not in the report's count).
  if (warming_up) failed_in_warmup_ = failed_total;
  s.failed_shown = warming_up ? failed_total : failed_total - failed_in_warmup_;
  s.tick.elapsed_s = static_cast<double>(now - t0_) / 1e6;
  s.tick.warmup = warming_up;
  s.tick.tps = tps;
  s.tick.p50_us = second.percentile(0.50);
  s.tick.p99_us = second.percentile(0.99);
  s.tick.failed_per_s = secs > 0 ? static_cast<double>(failed_total - failed_before_) / secs : 0;
  failed_before_ = failed_total;
  last_ = now;
  return s;
}

}  // namespace pgslow::driver
