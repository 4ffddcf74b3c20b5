#pragma once
// The warnings a stage's report carries about how it was measured, worded once from facts the
// lab measured (experiment/lab_session.cpp gathers them).

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "results/model.h"

namespace pgslow::results {

// Work other than the server and pgslow's clients took the machine's CPU during some of a
// stage's runs: the worst of them, as shares of the machine.
struct Disturbance {
  double worst = 0;           // other programs and pgslow's own other work together
  double other_programs = 0;  // of which other programs
  double pgslow_other = 0;    // of which pgslow's dashboard and evidence
  std::size_t disturbed_runs = 0;
  int runs = 0;  // the stage's runs
};
// "the machine was disturbed: work other than ... used up to 24% of its CPU during 2 of 2 runs
// of this stage (...)".
std::string disturbance_note(const Disturbance& d);

// When pgslow's client threads (`workers`; 0: one per core) were nearly always busy in one of
// `runs`, the figure measures the driver, not the server: the note that says so; nullopt
// otherwise.
std::optional<std::string> driver_bound_note(const std::vector<Measurement>& runs, int workers);

}  // namespace pgslow::results
