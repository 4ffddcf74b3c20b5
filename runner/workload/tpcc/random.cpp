#include "workload/tpcc/random.h"

#include <array>
#include <cstdlib>

namespace pgslow::workload::tpcc {
namespace {

std::uint64_t splitmix64(std::uint64_t& x) {
  std::uint64_t z = (x += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

std::uint64_t rotl(std::uint64_t x, int k) {
  return (x << k) | (x >> (64 - k));
}

constexpr std::string_view kAlphanumeric =
    "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";

// Clause 4.3.2.3: the ten syllables, indexed by one digit of the number.
constexpr std::array<std::string_view, 10> kSyllables = {"BAR", "OUGHT", "ABLE",  "PRI",   "PRES",
                                                         "ESE", "ANTI",  "CALLY", "ATION", "EING"};

// Fills `n` characters from `alphabet`, eight per 64-bit draw. Mapping a byte onto the
// alphabet by multiply-shift keeps the bias under 1/256, which the spec's "random" allows.
void append_chars(Rng& rng, std::string& out, int n, std::string_view alphabet) {
  const auto size = static_cast<std::uint32_t>(alphabet.size());
  std::size_t pos = out.size();
  out.resize(pos + static_cast<std::size_t>(n));
  while (n > 0) {
    std::uint64_t bits = rng.next();
    for (int i = 0; i < 8 && n > 0; ++i, --n) {
      out[pos++] = alphabet[((bits & 0xff) * size) >> 8];
      bits >>= 8;
    }
  }
}

}  // namespace

Rng::Rng(std::uint64_t seed) {
  for (auto& s : s_) s = splitmix64(seed);
}

std::uint64_t Rng::next() {
  const std::uint64_t result = rotl(s_[1] * 5, 7) * 9;
  const std::uint64_t t = s_[1] << 17;
  s_[2] ^= s_[0];
  s_[3] ^= s_[1];
  s_[1] ^= s_[2];
  s_[0] ^= s_[3];
  s_[2] ^= t;
  s_[3] = rotl(s_[3], 45);
  return result;
}

std::int64_t Rng::uniform(std::int64_t lo, std::int64_t hi) {
  // Lemire's multiply-high: the ranges here are tiny next to 2^64, so the bias is nil.
  __extension__ using u128 = unsigned __int128;
  const auto range = static_cast<u128>(hi - lo + 1);
  return lo + static_cast<std::int64_t>((static_cast<u128>(next()) * range) >> 64);
}

double Rng::uniform01() {
  return static_cast<double>(next() >> 11) * 0x1.0p-53;
}

std::int64_t nurand(Rng& rng, std::int64_t a, std::int64_t x, std::int64_t y, std::int64_t c) {
  return (((rng.uniform(0, a) | rng.uniform(x, y)) + c) % (y - x + 1)) + x;
}

NURandConstants load_constants() {
  // Any values within the ranges of 2.1.6 do; fixed so that runs can obey 2.1.6.1.
  return NURandConstants{.c_last = 157, .c_id = 259, .ol_i_id = 7911};
}

bool is_valid_run_c_last(int load_c_last, int run_c_last) {
  const int delta = std::abs(run_c_last - load_c_last);
  return delta >= 65 && delta <= 119 && delta != 96 && delta != 112;
}

NURandConstants run_constants(std::uint64_t seed) {
  Rng rng(seed ^ 0x7470636321ULL);
  NURandConstants c;
  const int load_c_last = load_constants().c_last;
  do {
    c.c_last = static_cast<int>(rng.uniform(0, 255));
  } while (!is_valid_run_c_last(load_c_last, c.c_last));
  c.c_id = static_cast<int>(rng.uniform(0, 1023));
  c.ol_i_id = static_cast<int>(rng.uniform(0, 8191));
  return c;
}

void append_a_string(Rng& rng, std::string& out, int min_len, int max_len) {
  append_chars(rng, out, static_cast<int>(rng.uniform(min_len, max_len)), kAlphanumeric);
}

void append_n_string(Rng& rng, std::string& out, int min_len, int max_len) {
  append_chars(rng, out, static_cast<int>(rng.uniform(min_len, max_len)), "0123456789");
}

std::string a_string(Rng& rng, int min_len, int max_len) {
  std::string s;
  append_a_string(rng, s, min_len, max_len);
  return s;
}

std::string n_string(Rng& rng, int min_len, int max_len) {
  std::string s;
  append_n_string(rng, s, min_len, max_len);
  return s;
}

void append_item_data(Rng& rng, std::string& out) {
  const std::size_t start = out.size();
  append_a_string(rng, out, 26, 50);
  if (rng.percent(10)) {
    constexpr std::string_view kOriginal = "ORIGINAL";
    const std::size_t len = out.size() - start;
    const auto at =
        static_cast<std::size_t>(rng.uniform(0, static_cast<std::int64_t>(len - kOriginal.size())));
    out.replace(start + at, kOriginal.size(), kOriginal);
  }
}

void append_zip(Rng& rng, std::string& out) {
  append_chars(rng, out, 4, "0123456789");
  out += "11111";
}

void append_last_name(std::string& out, int number) {
  out += kSyllables[static_cast<std::size_t>(number / 100)];
  out += kSyllables[static_cast<std::size_t>(number / 10 % 10)];
  out += kSyllables[static_cast<std::size_t>(number % 10)];
}

std::string last_name(int number) {
  std::string s;
  append_last_name(s, number);
  return s;
}

void append_cents(std::string& out, std::int64_t cents) {
  if (cents < 0) {
    out += '-';
    cents = -cents;
  }
  out += std::to_string(cents / 100);
  out += '.';
  out += static_cast<char>('0' + cents % 100 / 10);
  out += static_cast<char>('0' + cents % 10);
}

std::string format_cents(std::int64_t cents) {
  std::string s;
  append_cents(s, cents);
  return s;
}

}  // namespace pgslow::workload::tpcc
