#pragma once
// What a test compares to say the shared cluster's configuration is back as it was: the bytes
// of postgresql.auto.conf and every value of pg_settings.

#include <map>
#include <string>

namespace pgslow::testing {

struct ServerState {
  std::string auto_conf_sha256;
  std::map<std::string, std::string> settings;  // pg_settings name -> setting
};

// The shared cluster's state now.
ServerState server_state();

// The configuration is back, byte for byte and value for value, and the journal of the shared
// cluster's workdir is gone (gtest expectations).
void expect_restored(const ServerState& before);

}  // namespace pgslow::testing
