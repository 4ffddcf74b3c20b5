// pgslow scenarios, pgslow workloads: what there is to run, one line each. Nothing here reaches
// a server.

#include <fmt/format.h>

#include <cmath>

#include "cli/commands.h"
#include "common/strings.h"
#include "knobs/catalog.h"
#include "report/text.h"
#include "scenario/library.h"
#include "workload/registry.h"

namespace pgslow::cli {

namespace {

// A list's duration: whole minutes, as an estimate reads ("~4 min", "<1 min").
std::string about_minutes(double seconds) {
  if (seconds < 60) return "<1 min";
  return fmt::format("~{:.0f} min", std::round(seconds / 60));
}

// The table cut to the terminal's width: the last column (the description) first, then the one
// before it.
void print_list(report::TextTable table) {
  table.fit(report::output_columns(), "", {table.header.size() - 1, table.header.size() - 2});
  fmt::print("{}", table.render());
}

// A note under a list, broken at the terminal's width.
void print_note(const std::string& text) {
  for (const std::string& line : report::wrap_text(text, report::output_columns()))
    fmt::print("{}\n", line);
}

void list_scenarios() {
  const knobs::Catalog catalog = knobs::Catalog::load_default();
  report::TextTable t{{"scenario", "measuring", "needs", "what it does"}, {false, true}, {}};
  for (const scenario::LibraryScenario& s : scenario::library_scenarios(catalog)) {
    if (!s.problem.empty()) {
      t.rows.push_back({s.name, "", "", "does not parse: " + s.problem});
      continue;
    }
    t.rows.push_back({s.name, about_minutes(s.estimated_seconds),
                      s.needs.empty() ? "-" : join(s.needs, ", "), first_sentence(s.description)});
  }
  print_list(std::move(t));
  fmt::print("\n");
  print_note(
      "needs: root for a cgroup envelope (docs/envelope.md); PG N+: some of its knobs exist from "
      "PostgreSQL N on (an older server skips them).");
  print_note(
      "`pgslow run NAME` runs one (the data load is not in its time); `pgslow plan NAME` shows "
      "its stages and the time on your server.");
}

void list_workloads() {
  report::TextTable t{{"workload", "what it runs"}, {}, {}};
  for (const std::string& name : workload::workload_names())
    t.rows.push_back(
        {name, first_sentence(std::string(workload::find_workload(name).description()))});
  print_list(std::move(t));
  fmt::print("\n");
  print_note(
      "`pgslow bench --workload NAME` runs one like pgbench; docs/workloads.md explains each.");
}

}  // namespace

void add_list_commands(CLI::App& app, Context& ctx) {
  app.add_subcommand("scenarios",
                     "list the scenarios of the library: name, measuring time, what each needs, "
                     "what it does")
      ->callback([&ctx] {
        before_command(ctx, "scenarios");
        list_scenarios();
      });
  app.add_subcommand("workloads", "list the workloads, one line each")->callback([&ctx] {
    before_command(ctx, "workloads");
    list_workloads();
  });
}

}  // namespace pgslow::cli
