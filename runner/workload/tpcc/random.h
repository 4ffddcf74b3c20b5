#pragma once
// The spec's random rules (clauses 2.1.5, 2.1.6, 4.3.2): a fast seeded generator, NURand,
// a-strings and n-strings, zip codes and customer last names. The loader appends straight
// into COPY buffers, so the string generators append rather than return.

#include <cstdint>
#include <string>
#include <string_view>

namespace pgslow::workload::tpcc {

// xoshiro256** seeded through splitmix64: fast, small state, and the same seed gives the same
// sequence on every platform (std::uniform_int_distribution does not promise that).
class Rng {
 public:
  explicit Rng(std::uint64_t seed);
  std::uint64_t next();
  // A uniform integer within [lo, hi], both inclusive (the spec's "random(x .. y)").
  std::int64_t uniform(std::int64_t lo, std::int64_t hi);
  // A uniform double within [0, 1).
  double uniform01();
  // True with probability percent / 100.
  bool percent(int percent) { return uniform(1, 100) <= percent; }

 private:
  std::uint64_t s_[4];
};

// NURand(A, x, y) = (((random(0, A) | random(x, y)) + C) % (y - x + 1)) + x   (clause 2.1.6)
std::int64_t nurand(Rng& rng, std::int64_t a, std::int64_t x, std::int64_t y, std::int64_t c);

// The run-time constant C of each NURand use (clause 2.1.6.1).
struct NURandConstants {
  int c_last = 0;   // A = 255: customer last names
  int c_id = 0;     // A = 1023: customer ids
  int ol_i_id = 0;  // A = 8191: item ids
};

// The constants the loader uses. Fixed, so any run knows them without reading the data.
NURandConstants load_constants();
// The constants of one run, drawn from its seed; C_LAST obeys the delta rule of 2.1.6.1
// against load_constants().
NURandConstants run_constants(std::uint64_t seed);
// Clause 2.1.6.1: delta = |C_LAST(run) - C_LAST(load)| lies in [65 .. 119], and is neither
// 96 nor 112.
bool is_valid_run_c_last(int load_c_last, int run_c_last);

// Clause 4.3.2.2: a-string [x .. y] (alphanumeric) and n-string [x .. y] (digits), of a random
// length within [min_len, max_len].
void append_a_string(Rng& rng, std::string& out, int min_len, int max_len);
void append_n_string(Rng& rng, std::string& out, int min_len, int max_len);
std::string a_string(Rng& rng, int min_len, int max_len);
std::string n_string(Rng& rng, int min_len, int max_len);

// I_DATA and S_DATA (4.3.3.1): a-string [26 .. 50]; in 10% of rows "ORIGINAL" replaces eight
// characters at a random position.
void append_item_data(Rng& rng, std::string& out);

// Clause 4.3.2.7: n-string of 4 digits followed by "11111".
void append_zip(Rng& rng, std::string& out);

// Clause 4.3.2.3: the last name of a number 0 .. 999, three syllables from the digits
// (371 -> "PRICALLYOUGHT").
void append_last_name(std::string& out, int number);
std::string last_name(int number);

// Money as integral cents, printed as "123.45" (NUMERIC text, exact).
void append_cents(std::string& out, std::int64_t cents);
std::string format_cents(std::int64_t cents);

}  // namespace pgslow::workload::tpcc
