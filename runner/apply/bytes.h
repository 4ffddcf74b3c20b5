#pragma once
// Byte-level helpers for the journal: the original postgresql.auto.conf is kept as base64
// inside JSON (it may hold any byte), and its sha256 lets restore prove the bytes are back.

#include <string>
#include <string_view>

namespace pgslow::apply {

// Lower-case hex SHA-256 of `bytes`.
std::string sha256_hex(std::string_view bytes);

// Standard base64 (RFC 4648, with padding).
std::string base64_encode(std::string_view bytes);
// Throws RuntimeError when `text` is not valid base64 (a damaged journal).
std::string base64_decode(std::string_view text);

// Obfuscates text so that a glance (`cat journal.json`) does not read it: XOR with a fixed key,
// then base64. Not encryption: it keeps a workshop's hidden answer from a participant's eyes,
// not from someone who reads pgslow's source. unseal(seal(x)) == x; unseal throws
// RuntimeError on text that is not base64.
std::string seal(std::string_view text);
std::string unseal(std::string_view sealed);

}  // namespace pgslow::apply
