#pragma once
// Options several commands share, defined once.

#include <CLI/CLI.hpp>
#include <memory>
#include <optional>
#include <ostream>
#include <string>

#include "cli/context.h"
#include "common/progress.h"
#include "driver/driver.h"
#include "knobs/catalog.h"
#include "results/model.h"
#include "server/pooler.h"

namespace pgslow::cli {

// --protocol/-M simple|extended|prepared, like pgbench -M (run and bench).
void add_protocol_option(CLI::App* cmd, driver::Protocol& protocol);

// The load's options bench takes (results/load_fields.h: --clients, --pool-size, --rate, -C), one
// per row that names an option: a new load setting with an option is one row there.
void add_load_options(CLI::App* cmd, results::LoadSettings& load);

// --pooler pgbouncer[:MODE][,name=value...] | CONNINFO (run and bench; docs/pooler.md): the
// clients go through pgslow's own PgBouncer, or through the target's own pooler.
void add_pooler_option(CLI::App* cmd, std::optional<server::PoolerSpec>& pooler);

// --scale (-s) and --warehouses: one option, the workload's data size, under pgbench's name and
// tpcc-lite's (load, bench, check-data, bisect, cliff); giving both is refused. Returns --scale.
CLI::Option* add_size_option(CLI::App* cmd, int& scale, const std::string& help);

// A metric's name as the user gave it (results/metric.h's names; an evidence key must be one the
// evidence code reports): nullopt with `error` naming the valid ones and the nearest.
std::optional<results::Metric> parse_metric_option(const std::string& name, std::string& error);

// --metric tps|p99|cpu_per_tx|wal_bytes_per_tx|<evidence key>: what a search judges by (bisect,
// run's attributions); an unknown name is refused with the valid ones and "did you mean".
// `what` ends the help text ("default tps").
// `is_auto` (run only): "auto" is accepted too, sets it and leaves `metric` unset.
void add_metric_option(CLI::App* cmd, std::optional<results::Metric>& metric,
                       const std::string& what, bool* is_auto = nullptr);

// KNOB=VALUE arguments (mystery fix, cliff --set) as settings: each a knob of the catalog, none
// given twice. Only names and values: nothing here reads a file; the values are checked against
// the live server later, like a stage's.
std::vector<knobs::Setting> parse_knob_assignments(const std::vector<std::string>& args,
                                                   const knobs::Catalog& catalog);

// The progress lines of a command that measures: on the console (common/progress.h: -q, -P).
std::unique_ptr<Progress> command_progress(const Context& ctx);

// Writes a result file the user asked for (--json FILE, ...) durably, and says so; `-` writes
// it to standard output instead.
void write_requested_output(const std::string& path, const std::string& text, Progress& progress);

// Where a command prints its human-readable result: standard output, or standard error when
// one of `paths` (--json FILE, --markdown FILE, ...) is `-`, so that standard output carries
// that document alone (`pgslow bench --json - | jq`). More than one `-` is refused: call it
// before measuring.
std::ostream& result_stream(const std::vector<std::string>& paths);

}  // namespace pgslow::cli
