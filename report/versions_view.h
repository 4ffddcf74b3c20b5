#pragma once
// One scenario run on several PostgreSQL major versions (`pgslow run --versions 15,16,17,18`),
// side by side: per stage, each version's TPS and its effect against that version's own
// baseline. Every format of one run has its counterpart here (docs/versions.md).

#include <iosfwd>
#include <string>

#include "report/views.h"
#include "results/versions.h"

namespace pgslow::report {

// Each format of the side-by-side report (registered in report/registry.cpp). Throws
// std::invalid_argument when there are no runs.
void render_versions_console(const VersionRuns& runs, std::ostream& out);
void render_versions_markdown(const VersionRuns& runs, std::ostream& out);
void render_versions_json(const VersionRuns& runs, std::ostream& out);
void render_versions_csv(const VersionRuns& runs, std::ostream& out);
void render_versions_html(const VersionRuns& runs, std::ostream& out);

// "15.20" from "PostgreSQL 15.20"; the major ("15") when the version text is missing.
std::string version_label(const Run& run);

}  // namespace pgslow::report
