#pragma once
// What pgslow hands a target that sets parameters with its own command (the command target's
// `apply:`), instead of ALTER SYSTEM: a stage's values, or the original ones at restore, under
// the same journal rules (the originals are recorded before the command runs, and every value
// is read back from pg_settings after it).

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "apply/journal.h"
#include "knobs/validate.h"
#include "pg/connection.h"
#include "server/server_control.h"

namespace pgslow::apply {

// pg_settings.sourcefile of every parameter (lower-case name -> file; empty when the value
// comes from no file, or the role may not see it).
std::map<std::string, std::string> source_files(pg::Connection& conn);

// A stage: each knob's value, and every parameter an earlier stage set that this one does not
// back at its original (each stage starts from the original). `knobs` pairs the live setting
// with its verdict.
server::ParameterChange stage_parameters(
    const Journal& journal,
    const std::vector<std::pair<const knobs::ServerSetting*, const knobs::SettingVerdict*>>& knobs,
    const knobs::ServerSettings& current, const std::map<std::string, std::string>& files_now);

// The original value of every parameter pgslow changed: null ("remove your entry") when the
// original was the server's default or came from another configuration file than the one
// that holds pgslow's value now (the command's own file), else the original value (in the
// server's base unit). `running` and `files_now` describe the server now, nullptr when it is
// down (then a restart is asked for, and only the original's source decides: restore then
// asks again once the server is up). A parameter already at its original from its original
// file is left out.
server::ParameterChange original_parameters(const Journal& journal,
                                            const knobs::ServerSettings* running,
                                            const std::map<std::string, std::string>* files_now);

}  // namespace pgslow::apply
