#include "apply/bytes.h"

#include <openssl/evp.h>

#include <array>
#include <memory>

#include "common/errors.h"

namespace pgslow::apply {

std::string sha256_hex(std::string_view bytes) {
  std::array<unsigned char, EVP_MAX_MD_SIZE> digest{};
  unsigned int length = 0;
  if (EVP_Digest(bytes.data(), bytes.size(), digest.data(), &length, EVP_sha256(), nullptr) != 1)
    throw RuntimeError("cannot compute sha256 (OpenSSL EVP_Digest failed)");
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  out.reserve(2 * length);
  for (unsigned int i = 0; i < length; ++i) {
    out.push_back(kHex[digest[i] >> 4]);
    out.push_back(kHex[digest[i] & 0xf]);
  }
  return out;
}

namespace {
constexpr char kAlphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

int decode_char(char c) {
  if (c >= 'A' && c <= 'Z') return c - 'A';
  if (c >= 'a' && c <= 'z') return c - 'a' + 26;
  if (c >= '0' && c <= '9') return c - '0' + 52;
  if (c == '+') return 62;
  if (c == '/') return 63;
  return -1;
}
}  // namespace

std::string base64_encode(std::string_view bytes) {
  std::string out;
  out.reserve((bytes.size() + 2) / 3 * 4);
  std::size_t i = 0;
  auto byte = [&](std::size_t k) {
    return static_cast<unsigned>(static_cast<unsigned char>(bytes[k]));
  };
  for (; i + 3 <= bytes.size(); i += 3) {
    unsigned v = (byte(i) << 16) | (byte(i + 1) << 8) | byte(i + 2);
    out.push_back(kAlphabet[(v >> 18) & 63]);
    out.push_back(kAlphabet[(v >> 12) & 63]);
    out.push_back(kAlphabet[(v >> 6) & 63]);
    out.push_back(kAlphabet[v & 63]);
  }
  std::size_t rest = bytes.size() - i;
  if (rest == 1) {
    unsigned v = byte(i) << 16;
    out.push_back(kAlphabet[(v >> 18) & 63]);
    out.push_back(kAlphabet[(v >> 12) & 63]);
    out += "==";
  } else if (rest == 2) {
    unsigned v = (byte(i) << 16) | (byte(i + 1) << 8);
    out.push_back(kAlphabet[(v >> 18) & 63]);
    out.push_back(kAlphabet[(v >> 12) & 63]);
    out.push_back(kAlphabet[(v >> 6) & 63]);
    out.push_back('=');
  }
  return out;
}

std::string base64_decode(std::string_view text) {
  if (text.size() % 4 != 0) throw RuntimeError("invalid base64: length is not a multiple of 4");
  std::string out;
  out.reserve(text.size() / 4 * 3);
  for (std::size_t i = 0; i < text.size(); i += 4) {
    int a = decode_char(text[i]);
    int b = decode_char(text[i + 1]);
    bool last = i + 4 == text.size();
    bool pad2 = last && text[i + 2] == '=' && text[i + 3] == '=';
    bool pad1 = last && !pad2 && text[i + 3] == '=';
    int c = pad2 ? 0 : decode_char(text[i + 2]);
    int d = (pad1 || pad2) ? 0 : decode_char(text[i + 3]);
    if (a < 0 || b < 0 || c < 0 || d < 0)
      throw RuntimeError("invalid base64: unexpected character near offset " + std::to_string(i));
    unsigned v = (static_cast<unsigned>(a) << 18) | (static_cast<unsigned>(b) << 12) |
                 (static_cast<unsigned>(c) << 6) | static_cast<unsigned>(d);
    out.push_back(static_cast<char>((v >> 16) & 0xff));
    if (!pad2) out.push_back(static_cast<char>((v >> 8) & 0xff));
    if (!pad1 && !pad2) out.push_back(static_cast<char>(v & 0xff));
  }
  return out;
}

namespace {
std::string xor_key(std::string_view text) {
  static constexpr std::string_view kKey = "pgslow: a mystery stays hidden until it is revealed";
  std::string out(text);
  for (std::size_t i = 0; i < out.size(); ++i)
    out[i] = static_cast<char>(out[i] ^ kKey[i % kKey.size()]);
  return out;
}
}  // namespace

std::string seal(std::string_view text) {
  return base64_encode(xor_key(text));
}

std::string unseal(std::string_view sealed) {
  return xor_key(base64_decode(sealed));
}

}  // namespace pgslow::apply
