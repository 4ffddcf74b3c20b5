#pragma once
// How every format words a stage's attribution (model.h's Attribution): one place, so the
// console, Markdown, CSV, HTML and `pgslow bisect --isolate` say the same thing.

#include <string>
#include <vector>

#include "report/text.h"
#include "report/views.h"

namespace pgslow::report {

// "commit_delay = 10000 + commit_siblings = 0".
std::string describe_knob(const KnobEffect& k);
// "0.067x (95%: 0.061x-0.072x)"; the ratio is new / reference.
std::string format_interval(const EffectInterval& e);
// "WAL syncs/tx 0.623 → 0.0500", "p99 latency 1.2 ms → 10.3 ms": what moved when the knob
// alone was applied.
std::string describe_evidence(const KnobEvidence& e);
// The per-knob table: knob, verdict, alone, 95% interval, stage without it, transactions,
// evidence. Knobs reported as a group show the group's interval once ("as a group").
TextTable attribution_table(const Attribution& a);
// The console's form, at most `width` columns: the headline, then per knob its verdict and
// its effect alone (or the group's), then the evidence that moved, wrapped under `indent`.
std::vector<std::string> attribution_lines(const Attribution& a, const std::string& indent,
                                           std::size_t width = 100);
// "12 extra runs (3 restarts, 2 min 10 s); noise ±1.8% per run".
std::string describe_attribution_cost(const Attribution& a);

}  // namespace pgslow::report
