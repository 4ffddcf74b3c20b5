#include "report/load_columns.h"

#include <fmt/format.h>

#include <algorithm>

#include "results/load_fields.h"
#include "results/stats.h"

namespace pgslow::report {

namespace {

const std::string kNone = "—";

std::string ms(double micros) {
  return fmt::format("{}", micros / 1000);
}

// Whether the stage's clients shared the driver's own pool (results/load_fields.h).
bool driver_pool(const StageResult& stage) {
  return results::driver_pooled(stage.load);
}

bool any_stage(const Run& run, bool (*pred)(const StageResult&)) {
  for (const auto& s : run.stages)
    if (pred(s)) return true;
  return false;
}

}  // namespace

std::string describe_rate_kept(const StageResult& stage, const Measurement& m) {
  const double offered = stage.load.rate;
  std::string text = fmt::format("{} of {}/s", format_number(m.tps), format_number(offered));
  if (offered > 0) text += " (" + format_percent(m.tps / offered) + ")";
  return text;
}

std::vector<LoadColumn> load_columns(const Run& run) {
  std::vector<LoadColumn> cols;
  cols.push_back({"mean", "mean_ms",
                  [](const StageResult&, const Measurement* m) {
                    return m ? format_latency_us(m->latency.mean_us) : kNone;
                  },
                  [](const StageResult&, const Measurement* m) {
                    return m ? ms(m->latency.mean_us) : std::string();
                  }});
  if (any_stage(run, driver_pool)) {
    cols.push_back({"pool wait p50", "pool_wait_p50_ms",
                    [](const StageResult& s, const Measurement* m) {
                      return m && driver_pool(s) ? format_latency_us(m->pool_wait.p50_us) : kNone;
                    },
                    [](const StageResult& s, const Measurement* m) {
                      return m && driver_pool(s) ? ms(m->pool_wait.p50_us) : std::string();
                    }});
    cols.push_back({"pool wait p99", "pool_wait_p99_ms",
                    [](const StageResult& s, const Measurement* m) {
                      return m && driver_pool(s) ? format_latency_us(m->pool_wait.p99_us) : kNone;
                    },
                    [](const StageResult& s, const Measurement* m) {
                      return m && driver_pool(s) ? ms(m->pool_wait.p99_us) : std::string();
                    }});
  }
  if (any_stage(run, fixed_rate)) {
    cols.push_back({"rate kept", "rate_offered",
                    [](const StageResult& s, const Measurement* m) {
                      return m && fixed_rate(s) ? describe_rate_kept(s, *m) : kNone;
                    },
                    [](const StageResult& s, const Measurement*) {
                      return fixed_rate(s) ? fmt::format("{}", s.load.rate) : std::string();
                    }});
    cols.push_back({"lag p99", "schedule_lag_p99_ms",
                    [](const StageResult& s, const Measurement* m) {
                      return m && fixed_rate(s) ? format_latency_us(m->schedule_lag.p99_us) : kNone;
                    },
                    [](const StageResult& s, const Measurement* m) {
                      return m && fixed_rate(s) ? ms(m->schedule_lag.p99_us) : std::string();
                    }});
    cols.push_back({"on time", "on_time_ratio",
                    [](const StageResult& s, const Measurement* m) {
                      return m && fixed_rate(s) ? format_percent(m->on_time_ratio) : kNone;
                    },
                    [](const StageResult& s, const Measurement* m) {
                      return m && fixed_rate(s) ? fmt::format("{}", m->on_time_ratio)
                                                : std::string();
                    }});
  }
  if (any_stage(run, [](const StageResult& s) { return s.load.connect_per_transaction; })) {
    cols.push_back({"connect p50", "connect_p50_ms",
                    [](const StageResult&, const Measurement* m) {
                      return m ? format_latency_us(m->connect_time.p50_us) : kNone;
                    },
                    [](const StageResult&, const Measurement* m) {
                      return m ? ms(m->connect_time.p50_us) : std::string();
                    }});
    cols.push_back({"connect p99", "connect_p99_ms",
                    [](const StageResult&, const Measurement* m) {
                      return m ? format_latency_us(m->connect_time.p99_us) : kNone;
                    },
                    [](const StageResult&, const Measurement* m) {
                      return m ? ms(m->connect_time.p99_us) : std::string();
                    }});
  }
  // Idle-connection memory where the scenario varies the connections (clients or pool size).
  if (any_stage(run,
                [](const StageResult& s) {
                  for (const auto& m : s.repeats)
                    if (m.idle_connections_measured > 0) return true;
                  return false;
                }) &&
      std::any_of(run.stages.begin(), run.stages.end(), [&](const StageResult& s) {
        return results::server_connections(s.load) !=
               results::server_connections(run.stages.front().load);
      })) {
    cols.push_back({"mem/idle conn", "idle_connection_pss_bytes",
                    [](const StageResult&, const Measurement* m) {
                      return m && m->idle_connections_measured > 0
                                 ? format_size(m->idle_connection_pss_bytes)
                                 : kNone;
                    },
                    [](const StageResult&, const Measurement* m) {
                      return m && m->idle_connections_measured > 0
                                 ? fmt::format("{}", m->idle_connection_pss_bytes)
                                 : std::string();
                    }});
  }
  if (any_stage(run, [](const StageResult& s) {
        for (const auto& m : s.repeats)
          if (m.failed > 0) return true;
        return false;
      })) {
    cols.push_back({"failed", "failed",
                    [](const StageResult&, const Measurement* m) {
                      return m ? format_number(static_cast<double>(m->failed)) : kNone;
                    },
                    [](const StageResult&, const Measurement* m) {
                      return m ? std::to_string(m->failed) : std::string();
                    }});
  }
  if (any_stage(run, [](const StageResult& s) {
        for (const auto& m : s.repeats)
          if (m.connections_refused > 0) return true;
        return false;
      })) {
    cols.push_back({"refused", "connections_refused",
                    [](const StageResult&, const Measurement* m) {
                      return m ? std::to_string(m->connections_refused) : kNone;
                    },
                    [](const StageResult&, const Measurement* m) {
                      return m ? std::to_string(m->connections_refused) : std::string();
                    }});
  }
  return cols;
}

}  // namespace pgslow::report
