// The `script` workload: pgbench-compatible script files on pgbench's tables, run natively by
// pgslow's driver (same event loop, pool, protocols, retries and reports as every workload).
// One transaction = one run of a script drawn by weight, as pgbench -f FILE@WEIGHT.

#include <fmt/format.h>

#include <map>
#include <memory>
#include <mutex>

#include "common/random.h"
#include "common/strings.h"
#include "workload/pgbench/pgbench.h"
#include "workload/script/script.h"

namespace pgslow::workload {

namespace {

using script::Command;
using script::ScriptSet;
using script::Value;
using script::Variables;

constexpr char kScriptsOption[] = "scripts";

std::vector<script::ScriptSpec> script_specs(const WorkloadParams& params,
                                             std::vector<ConfigError>& problems) {
  std::vector<script::ScriptSpec> specs;
  const auto it = params.options.find(kScriptsOption);
  if (it == params.options.end()) return specs;
  for (const auto& item : split(it->second, ',')) {
    const std::string text = trim(item);
    if (text.empty()) continue;
    if (auto spec = script::parse_script_spec(text, params.base_dir, problems))
      specs.push_back(std::move(*spec));
  }
  return specs;
}

ScriptSet parse_all(const WorkloadParams& params, std::vector<ConfigError>& problems) {
  auto specs = script_specs(params, problems);
  if (has_errors(problems)) return {};
  return script::load_scripts(specs, problems);
}

// The parsed scripts of a parameter set: validate() parses and checks them, the driver asks
// for them once per client and for the statements; they are parsed once per set.
class ScriptCache {
 public:
  void put(const WorkloadParams& params, ScriptSet set) {
    std::lock_guard lock(mu_);
    sets_[key(params)] = std::make_shared<const ScriptSet>(std::move(set));
  }
  std::shared_ptr<const ScriptSet> get(const WorkloadParams& params) {
    {
      std::lock_guard lock(mu_);
      if (auto it = sets_.find(key(params)); it != sets_.end()) return it->second;
    }
    std::vector<ConfigError> problems;
    ScriptSet set = parse_all(params, problems);
    if (has_errors(problems)) throw InputError(std::move(problems));
    put(params, std::move(set));
    return get(params);
  }

 private:
  static std::string key(const WorkloadParams& p) {
    auto it = p.options.find(kScriptsOption);
    return p.base_dir.string() + "\n" + (it == p.options.end() ? "" : it->second);
  }
  std::mutex mu_;
  std::map<std::string, std::shared_ptr<const ScriptSet>> sets_;
};

ScriptCache& cache() {
  static ScriptCache c;
  return c;
}

class ScriptClient final : public Client {
 public:
  ScriptClient(std::shared_ptr<const ScriptSet> set, const WorkloadParams& params, int index)
      : set_(std::move(set)),
        rng_(params.seed * 7919 + static_cast<std::uint64_t>(index)),
        vars_(set_->variables.names.size()) {
    vars_[Variables::kScale] = Value::of_int(params.scale);
    vars_[Variables::kClientId] = Value::of_int(index);  // pgbench's :client_id counts from 0
    vars_[Variables::kDefaultSeed] = Value::of_int(script::kDefaultSeed);
    vars_[Variables::kRandomSeed] = Value::of_int(static_cast<std::int64_t>(params.seed));
    for (const auto& s : set_->scripts) total_weight_ += s.weight;
  }

  std::size_t choose() override {
    std::int64_t r = rng_.uniform(0, total_weight_ - 1);
    chosen_ = 0;
    while (r >= set_->scripts[chosen_].weight) r -= set_->scripts[chosen_++].weight;
    // The transaction's own draws: a retry of it draws the same values.
    tx_seed_ = rng_.next();
    return chosen_;
  }

  Task<TxStatus> execute(Session& session) override {
    const script::Script& script = set_->scripts[chosen_];
    Random rng(tx_seed_);
    // The transaction's variables, kept only when it completes (a copy into storage reused
    // from one transaction to the next).
    std::vector<Value>& vars = scratch_;
    vars.assign(vars_.begin(), vars_.end());
    for (const Command& c : script.commands) {
      switch (c.kind) {
        case Command::Kind::kSet:
          vars[static_cast<std::size_t>(c.target)] = evaluate(script, c, vars, rng);
          break;
        case Command::Kind::kSleep: {
          const std::int64_t us = sleep_us(script, c, vars);
          if (us > 0) co_await session.sleep(us);
          break;
        }
        case Command::Kind::kSql: {
          params_.resize(c.slots.size());
          for (std::size_t i = 0; i < c.slots.size(); ++i) {
            if (!params_[i]) params_[i].emplace();
            vars[static_cast<std::size_t>(c.slots[i])].write_text(*params_[i]);
          }
          co_await session.execute(c.statement, params_);
          break;
        }
      }
    }
    vars_.swap(vars);
    co_return TxStatus::kCommitted;
  }

 private:
  static Value evaluate(const script::Script& script, const Command& c,
                        const std::vector<Value>& vars, Random& rng) {
    try {
      return c.expr.evaluate(vars, rng);
    } catch (const script::EvalError& e) {
      // pgbench aborts the client; pgslow ends the run with where and why.
      throw RuntimeError(fmt::format("{}:{}: {}", script.file, c.line, e.what()));
    }
  }

  // A \sleep's microseconds; a :variable's value is checked now (a negative one sleeps no
  // time, as in pgbench).
  static std::int64_t sleep_us(const script::Script& script, const Command& c,
                               const std::vector<Value>& vars) {
    if (c.sleep_slot < 0) return c.sleep_value * c.sleep_unit_us;  // checked by the parser
    const Value& v = vars[static_cast<std::size_t>(c.sleep_slot)];
    if (v.kind != Value::Kind::kInt)
      throw RuntimeError(
          fmt::format("{}:{}: \\sleep needs an integer, got {}", script.file, c.line, v.text()));
    if (v.i <= 0) return 0;
    if (auto us = script::sleep_us(v.i, c.sleep_unit_us)) return *us;
    throw RuntimeError(fmt::format(
        "{}:{}: \\sleep of {} {} is out of range: its microseconds do not fit in 64 bits",
        script.file, c.line, v.i,
        c.sleep_unit_us == 1      ? "us"
        : c.sleep_unit_us == 1000 ? "ms"
                                  : "s"));
  }

  std::shared_ptr<const ScriptSet> set_;
  Random rng_;
  std::vector<Value> vars_;
  std::vector<Value> scratch_;  // the variables of the transaction under way
  pg::Params params_;           // of the statement under way, reused
  std::int64_t total_weight_ = 0;
  std::size_t chosen_ = 0;
  std::uint64_t tx_seed_ = 0;
};

class ScriptWorkload final : public PgbenchTables {
 public:
  std::string_view name() const override { return "script"; }
  std::string_view description() const override {
    return "Your own transactions: pgbench-compatible script files (\\set with pgbench's "
           "expressions and random functions, :variables, \\sleep, FILE@WEIGHT) on pgbench's "
           "tables. What it stresses is what the scripts do.";
  }
  std::vector<ConfigError> validate(WorkloadParams& params) const override {
    std::vector<ConfigError> problems = validate_pgbench_scale(params);
    for (const auto& [key, value] : params.options) {
      if (key == kScriptsOption) continue;
      ConfigError e;
      e.message = fmt::format("unknown option \"{}\" for the script workload", key);
      e.hint = "it takes scripts: FILE[@WEIGHT], ... (and scale)";
      problems.push_back(std::move(e));
    }
    ScriptSet set = parse_all(params, problems);
    if (!has_errors(problems)) cache().put(params, std::move(set));
    return problems;
  }
  std::vector<std::string> transaction_types(const WorkloadParams& params) const override {
    std::vector<std::string> names;
    for (const auto& s : cache().get(params)->scripts) names.push_back(s.name);
    return names;
  }
  std::vector<StatementDef> statements(const WorkloadParams& params) const override {
    std::vector<StatementDef> defs;
    for (const auto& s : cache().get(params)->scripts) {
      for (const auto& c : s.commands) {
        if (c.kind == Command::Kind::kSql)
          defs.push_back({c.statement, c.parameterised_sql(), /*text_substitution=*/true});
      }
    }
    return defs;
  }
  std::unique_ptr<Client> make_client(const WorkloadParams& params,
                                      int client_index) const override {
    return std::make_unique<ScriptClient>(cache().get(params), params, client_index);
  }
  std::vector<CheckResult> check(pg::Connection& conn,
                                 const WorkloadParams& params) const override {
    return check_pgbench_sizes(conn, params.scale);
  }
};

}  // namespace

std::unique_ptr<Workload> make_script_workload() {
  return std::make_unique<ScriptWorkload>();
}

}  // namespace pgslow::workload
