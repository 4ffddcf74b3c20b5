#include <fmt/format.h>

#include "driver/driver.h"

namespace pgslow::driver {

std::string_view protocol_name(Protocol p) {
  switch (p) {
    case Protocol::kSimple:
      return "simple";
    case Protocol::kExtended:
      return "extended";
    case Protocol::kPrepared:
      return "prepared";
  }
  return "prepared";
}

std::optional<Protocol> parse_protocol(std::string_view text) {
  for (Protocol p : {Protocol::kSimple, Protocol::kExtended, Protocol::kPrepared})
    if (text == protocol_name(p)) return p;
  return std::nullopt;
}

std::vector<ConfigError> validate(const DriverOptions& o, bool think_time) {
  std::vector<ConfigError> errors;
  auto add = [&](std::string msg, std::string hint) {
    ConfigError e;
    e.message = std::move(msg);
    e.hint = std::move(hint);
    errors.push_back(std::move(e));
  };
  if (o.clients < 1) add(fmt::format("--clients must be at least 1 (got {})", o.clients), "");
  if (o.workers < 0)
    add(fmt::format("--workers must be 0 (one per core) or more (got {})", o.workers), "");
  if (o.duration_s <= 0) add(fmt::format("--duration must be positive (got {})", o.duration_s), "");
  if (o.warmup_s < 0) add(fmt::format("--warmup must not be negative (got {})", o.warmup_s), "");
  if (o.ramp_s < 0) add(fmt::format("--ramp must not be negative (got {})", o.ramp_s), "");
  if (o.ramp_s > o.warmup_s)
    add(fmt::format("--ramp {:g} s ends after the warm-up of {:g} s", o.ramp_s, o.warmup_s),
        "the measured window must see every client running: raise --warmup to at least --ramp");
  if (o.rate < 0)
    add(fmt::format("--rate must not be negative (got {})", o.rate), "0 means closed loop");
  if (o.pool_size < 0)
    add(fmt::format("--pool-size must not be negative (got {})", o.pool_size),
        "0 means one connection per client");
  if (o.max_tries < 0)
    add(fmt::format("--max-tries must be 0 or more (got {})", o.max_tries),
        "1 means no retry; 0 the workload's default (tpcc-lite under repeatable-read or "
        "serializable: until the transaction commits)");
  if (o.active_clients && o.rate > 0)
    add("a switchback of the client count needs a closed loop: with --rate the clients' schedule "
        "would pile up while they stand by",
        "measure the stage by separate runs");
  if (think_time && o.rate > 0)
    add(fmt::format("--think-time cannot be combined with --rate {:g}: keying and think times "
                    "are waited only in the closed loop, where a terminal's next transaction "
                    "follows its last; a fixed rate sets the arrivals itself",
                    o.rate),
        "drop --rate (the spec's terminals: --think-time with 10 clients per warehouse) or "
        "--think-time (a fixed rate without TPC-C's waits)");
  if (o.pool_size > 0 && o.connect_per_transaction)
    add("--pool-size and --connect-per-transaction cannot be combined",
        "a pool keeps its connections open");
  return errors;
}

}  // namespace pgslow::driver
