#pragma once
// The two configurations a bisect compares, and their difference: the candidate changes.
//
// --good and --bad each name a preset of the catalog (`default` is the empty one: the
// server as it is), a settings YAML file (a preset file or a plain `name: value` map), or a
// postgresql.conf-style file (conf_file.h).

#include <string>
#include <vector>

#include "knobs/catalog.h"
#include "knobs/validate.h"
#include "search/result.h"

namespace pgslow::search {

struct Configuration {
  std::string label;  // as the user named it
  std::vector<knobs::Setting> settings;
};

// Throws InputError naming the argument (and the closest preset, for a typo).
Configuration load_configuration(const std::string& spec, const knobs::Catalog& catalog);

struct Difference {
  std::vector<knobs::Setting> good;  // what good sets (skipped ones left out), applied under all
  std::vector<Candidate> candidates;
  std::vector<Excluded> excluded;      // skipped or invalid, with the reason: never dropped
  std::vector<std::string> identical;  // same value in both (compared as the server reads it)
};

// Validates both configurations against the live server (knobs::validate) and compares them
// setting by setting, values normalised as pg_settings shows them (8MB = 8192kB = 1024 for
// shared_buffers, ON = on = true). An error in good throws InputError: good is the baseline of
// every run. An error or a skip in bad excludes that change, with the reason.
Difference difference(const Configuration& good, const Configuration& bad,
                      const knobs::Catalog& catalog, const knobs::ServerSettings& server);

}  // namespace pgslow::search
