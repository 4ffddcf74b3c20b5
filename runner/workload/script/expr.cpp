#include "workload/script/expr.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <charconv>
#include <cmath>
#include <iterator>
#include <limits>
#include <numbers>
#include <span>

#include "common/strings.h"
#include "workload/script/expr_tree.h"

namespace pgslow::workload::script {

std::string Value::text() const {
  std::string out;
  write_text(out);
  return out;
}

void Value::write_text(std::string& out) const {
  switch (kind) {
    case Kind::kInt: {
      char buf[24];
      const auto end = std::to_chars(buf, buf + sizeof buf, i).ptr;
      out.assign(buf, end);
      return;
    }
    case Kind::kDouble:
      out.clear();
      fmt::format_to(std::back_inserter(out), "{:.15g}", d);  // pgbench: "%.*g", DBL_DIG digits
      return;
    case Kind::kBool:
      out = b ? "true" : "false";
      return;
  }
  out.clear();
}

namespace {

// ---- coercions, with pgbench's rules (src/bin/pgbench/pgbench.c coerceTo*) ----

std::int64_t to_int(const Value& v, const char* what) {
  switch (v.kind) {
    case Value::Kind::kInt:
      return v.i;
    case Value::Kind::kDouble: {
      const double d = std::trunc(v.d);
      if (std::isnan(d) || d < -9.2233720368547758e18 || d >= 9.2233720368547758e18)
        throw EvalError(fmt::format("double {} is out of the integer range in {}", v.d, what));
      return static_cast<std::int64_t>(d);
    }
    case Value::Kind::kBool:
      break;
  }
  throw EvalError(fmt::format("{} needs a number, not a boolean", what));
}

double to_double(const Value& v, const char* what) {
  switch (v.kind) {
    case Value::Kind::kInt:
      return static_cast<double>(v.i);
    case Value::Kind::kDouble:
      return v.d;
    case Value::Kind::kBool:
      break;
  }
  throw EvalError(fmt::format("{} needs a number, not a boolean", what));
}

bool to_bool(const Value& v) {
  switch (v.kind) {
    case Value::Kind::kInt:
      return v.i != 0;
    case Value::Kind::kDouble:
      return v.d != 0.0;
    case Value::Kind::kBool:
      return v.b;
  }
  return false;
}

bool is_double(const Value& v) {
  return v.kind == Value::Kind::kDouble;
}

void overflow_check(bool overflow, const char* what) {
  if (overflow) throw EvalError(fmt::format("bigint out of range in {}", what));
}

// ---- the random distributions (pgbench's documentation, "Random Functions") ----

void check_range(std::int64_t lo, std::int64_t hi, const char* fn) {
  if (lo > hi) throw EvalError(fmt::format("empty range given to {}: {} > {}", fn, lo, hi));
}

// Uniform in (0, 1]: log() of it is finite.
double uniform_open_low(Random& rng) {
  return 1.0 - rng.uniform01();
}

std::int64_t scaled(std::int64_t lo, std::int64_t hi, double r) {
  return lo + static_cast<std::int64_t>(static_cast<double>(hi - lo + 1) * r);
}

// The density at the upper bound is exp(-parameter) times that at the lower bound.
std::int64_t random_exponential(Random& rng, std::int64_t lo, std::int64_t hi, double param) {
  check_range(lo, hi, "random_exponential");
  if (!(param > 0)) throw EvalError("random_exponential's parameter must be greater than 0");
  const double cut = std::exp(-param);
  const double r = -std::log(cut + (1.0 - cut) * uniform_open_low(rng)) / param;  // [0, 1)
  return scaled(lo, hi, r);
}

// A normal distribution truncated to [-parameter, parameter) standard deviations and mapped
// onto the range: about 67% of the values fall in the middle 1/parameter of it.
std::int64_t random_gaussian(Random& rng, std::int64_t lo, std::int64_t hi, double param) {
  check_range(lo, hi, "random_gaussian");
  if (!(param >= 2.0)) throw EvalError("random_gaussian's parameter must be at least 2.0");
  double stdev;
  do {  // Box-Muller, redrawn until inside the cut
    const double r1 = uniform_open_low(rng), r2 = rng.uniform01();
    stdev = std::sqrt(-2.0 * std::log(r1)) * std::sin(2.0 * std::numbers::pi * r2);
  } while (stdev < -param || stdev >= param);
  return scaled(lo, hi, (stdev + param) / (param * 2.0));
}

// Bounded Zipf by rejection (Devroye, "Non-Uniform Random Variate Generation", p. 550):
// value k (counted from lo) is drawn ((k+1)/k)^s times as often as k+1.
std::int64_t random_zipfian(Random& rng, std::int64_t lo, std::int64_t hi, double s) {
  check_range(lo, hi, "random_zipfian");
  if (!(s >= 1.001 && s <= 1000))
    throw EvalError("random_zipfian's parameter must be in [1.001, 1000]");
  const double n = static_cast<double>(hi - lo + 1);
  const double b = std::pow(2.0, s - 1.0);
  for (;;) {
    const double u = uniform_open_low(rng), v = rng.uniform01();
    const double x = std::floor(std::pow(u, -1.0 / (s - 1.0)));
    const double t = std::pow(1.0 + 1.0 / x, s - 1.0);
    if (x <= n && v * x * (t - 1.0) / (b - 1.0) <= t / b)
      return lo + static_cast<std::int64_t>(x) - 1;
  }
}

// 64-bit MurmurHash2 (MurmurHash64A) of the integer's 8 bytes.
std::int64_t hash_murmur2(std::int64_t value, std::int64_t seed) {
  constexpr std::uint64_t m = 0xc6a4a7935bd1e995ULL;
  constexpr int r = 47;
  std::uint64_t h = static_cast<std::uint64_t>(seed) ^ (8 * m);
  std::uint64_t k = static_cast<std::uint64_t>(value);
  k *= m;
  k ^= k >> r;
  k *= m;
  h ^= k;
  h *= m;
  h ^= h >> r;
  h *= m;
  h ^= h >> r;
  return static_cast<std::int64_t>(h);
}

// 64-bit FNV-1a of the integer's 8 bytes, least significant first, offset by the seed.
std::int64_t hash_fnv1a(std::int64_t value, std::int64_t seed) {
  std::uint64_t h = 0xcbf29ce484222325ULL ^ static_cast<std::uint64_t>(seed);
  auto v = static_cast<std::uint64_t>(value);
  for (int i = 0; i < 8; ++i) {
    h ^= v & 0xff;
    h *= 0x100000001b3ULL;
    v >>= 8;
  }
  return static_cast<std::int64_t>(h);
}

// ---- the function table ----

Value least_or_greatest(Args a, bool least) {
  bool any_double = false;
  for (const auto& v : a) any_double = any_double || is_double(v);
  if (any_double) {
    double best = to_double(a[0], least ? "least" : "greatest");
    for (const auto& v : a) {
      const double d = to_double(v, least ? "least" : "greatest");
      best = least ? std::min(best, d) : std::max(best, d);
    }
    return Value::of_double(best);
  }
  std::int64_t best = to_int(a[0], least ? "least" : "greatest");
  for (const auto& v : a) {
    const std::int64_t x = to_int(v, least ? "least" : "greatest");
    best = least ? std::min(best, x) : std::max(best, x);
  }
  return Value::of_int(best);
}

Value int_mod(std::int64_t x, std::int64_t y, const char* what) {
  if (y == 0) throw EvalError(fmt::format("division by zero in {}", what));
  if (y == -1) return Value::of_int(0);  // INT64_MIN % -1 would trap
  return Value::of_int(x % y);
}

const Function kFunctions[] = {
    {"abs", 1, 1,
     [](Args a, Random&) {
       if (is_double(a[0])) return Value::of_double(std::fabs(a[0].d));
       const std::int64_t v = to_int(a[0], "abs");
       if (v == std::numeric_limits<std::int64_t>::min())
         throw EvalError("bigint out of range in abs");
       return Value::of_int(v < 0 ? -v : v);
     }},
    {"double", 1, 1, [](Args a, Random&) { return Value::of_double(to_double(a[0], "double")); }},
    {"exp", 1, 1,
     [](Args a, Random&) { return Value::of_double(std::exp(to_double(a[0], "exp"))); }},
    {"greatest", 1, -1, [](Args a, Random&) { return least_or_greatest(a, false); }},
    {"hash", 1, 2,
     [](Args a, Random&) {
       return Value::of_int(
           hash_murmur2(to_int(a[0], "hash"), a.size() > 1 ? to_int(a[1], "hash") : kDefaultSeed));
     }},
    {"hash_fnv1a", 1, 2,
     [](Args a, Random&) {
       return Value::of_int(hash_fnv1a(to_int(a[0], "hash_fnv1a"),
                                       a.size() > 1 ? to_int(a[1], "hash_fnv1a") : kDefaultSeed));
     }},
    {"hash_murmur2", 1, 2,
     [](Args a, Random&) {
       return Value::of_int(
           hash_murmur2(to_int(a[0], "hash_murmur2"),
                        a.size() > 1 ? to_int(a[1], "hash_murmur2") : kDefaultSeed));
     }},
    {"int", 1, 1, [](Args a, Random&) { return Value::of_int(to_int(a[0], "int")); }},
    {"least", 1, -1, [](Args a, Random&) { return least_or_greatest(a, true); }},
    {"ln", 1, 1,
     [](Args a, Random&) {
       const double x = to_double(a[0], "ln");
       if (x <= 0) throw EvalError("ln of a number that is not positive");
       return Value::of_double(std::log(x));
     }},
    {"mod", 2, 2,
     [](Args a, Random&) { return int_mod(to_int(a[0], "mod"), to_int(a[1], "mod"), "mod"); }},
    {"pi", 0, 0, [](Args, Random&) { return Value::of_double(std::numbers::pi); }},
    {"pow", 2, 2,
     [](Args a, Random&) {
       return Value::of_double(std::pow(to_double(a[0], "pow"), to_double(a[1], "pow")));
     }},
    {"power", 2, 2,
     [](Args a, Random&) {
       return Value::of_double(std::pow(to_double(a[0], "power"), to_double(a[1], "power")));
     }},
    {"random", 2, 2,
     [](Args a, Random& rng) {
       const std::int64_t lo = to_int(a[0], "random"), hi = to_int(a[1], "random");
       check_range(lo, hi, "random");
       return Value::of_int(rng.uniform(lo, hi));
     }},
    {"random_exponential", 3, 3,
     [](Args a, Random& rng) {
       return Value::of_int(random_exponential(rng, to_int(a[0], "random_exponential"),
                                               to_int(a[1], "random_exponential"),
                                               to_double(a[2], "random_exponential")));
     }},
    {"random_gaussian", 3, 3,
     [](Args a, Random& rng) {
       return Value::of_int(random_gaussian(rng, to_int(a[0], "random_gaussian"),
                                            to_int(a[1], "random_gaussian"),
                                            to_double(a[2], "random_gaussian")));
     }},
    {"random_uniform", 2, 2,  // pgslow's alias of random(), not in pgbench
     [](Args a, Random& rng) {
       const std::int64_t lo = to_int(a[0], "random_uniform"), hi = to_int(a[1], "random_uniform");
       check_range(lo, hi, "random_uniform");
       return Value::of_int(rng.uniform(lo, hi));
     }},
    {"random_zipfian", 3, 3,
     [](Args a, Random& rng) {
       return Value::of_int(random_zipfian(rng, to_int(a[0], "random_zipfian"),
                                           to_int(a[1], "random_zipfian"),
                                           to_double(a[2], "random_zipfian")));
     }},
    {"sqrt", 1, 1,
     [](Args a, Random&) {
       const double x = to_double(a[0], "sqrt");
       if (x < 0) throw EvalError("sqrt of a negative number");
       return Value::of_double(std::sqrt(x));
     }},
};

}  // namespace

const Function* find_function(std::string_view name) {
  for (const auto& f : kFunctions)
    if (name == f.name) return &f;
  return nullptr;
}

namespace {

// ---- evaluation ----

Value arithmetic(Op op, const Value& l, const Value& r) {
  const char* what = op == Op::kAdd ? "+" : op == Op::kSub ? "-" : op == Op::kMul ? "*" : "/";
  if (op == Op::kMod) return int_mod(to_int(l, "%"), to_int(r, "%"), "%");
  if (is_double(l) || is_double(r)) {
    const double a = to_double(l, what), b = to_double(r, what);
    switch (op) {
      case Op::kAdd:
        return Value::of_double(a + b);
      case Op::kSub:
        return Value::of_double(a - b);
      case Op::kMul:
        return Value::of_double(a * b);
      default:
        if (b == 0) throw EvalError("division by zero");
        return Value::of_double(a / b);
    }
  }
  const std::int64_t a = to_int(l, what), b = to_int(r, what);
  std::int64_t out = 0;
  switch (op) {
    case Op::kAdd:
      overflow_check(__builtin_add_overflow(a, b, &out), what);
      return Value::of_int(out);
    case Op::kSub:
      overflow_check(__builtin_sub_overflow(a, b, &out), what);
      return Value::of_int(out);
    case Op::kMul:
      overflow_check(__builtin_mul_overflow(a, b, &out), what);
      return Value::of_int(out);
    default:
      if (b == 0) throw EvalError("division by zero");
      if (b == -1) {  // INT64_MIN / -1 would trap
        overflow_check(__builtin_sub_overflow(std::int64_t{0}, a, &out), what);
        return Value::of_int(out);
      }
      return Value::of_int(a / b);
  }
}

Value compare(Op op, const Value& l, const Value& r) {
  int c;
  if (l.kind == Value::Kind::kBool && r.kind == Value::Kind::kBool) {
    c = (l.b > r.b) - (l.b < r.b);
  } else if (is_double(l) || is_double(r)) {
    const double a = to_double(l, "a comparison"), b = to_double(r, "a comparison");
    c = (a > b) - (a < b);
  } else {
    const std::int64_t a = to_int(l, "a comparison"), b = to_int(r, "a comparison");
    c = (a > b) - (a < b);
  }
  switch (op) {
    case Op::kEq:
      return Value::of_bool(c == 0);
    case Op::kNe:
      return Value::of_bool(c != 0);
    case Op::kLt:
      return Value::of_bool(c < 0);
    case Op::kLe:
      return Value::of_bool(c <= 0);
    case Op::kGt:
      return Value::of_bool(c > 0);
    default:
      return Value::of_bool(c >= 0);
  }
}

Value eval(const Node& n, const std::vector<Value>& vars, Random& rng, int depth = 1) {
  // The parser builds no deeper tree; checked here too, so evaluation can never recurse past it.
  if (depth > kMaxExpressionDepth)
    throw EvalError(fmt::format("the expression nests deeper than {} levels", kMaxExpressionDepth));
  const auto sub = [&](std::size_t i) { return eval(*n.args[i], vars, rng, depth + 1); };
  switch (n.op) {
    case Op::kConst:
      return n.constant;
    case Op::kVar:
      return vars[static_cast<std::size_t>(n.slot)];
    case Op::kNeg: {
      const Value v = sub(0);
      if (is_double(v)) return Value::of_double(-v.d);
      std::int64_t out = 0;
      overflow_check(__builtin_sub_overflow(std::int64_t{0}, to_int(v, "-"), &out), "-");
      return Value::of_int(out);
    }
    case Op::kBitNot:
      return Value::of_int(~to_int(sub(0), "~"));
    case Op::kNot:
      return Value::of_bool(!to_bool(sub(0)));
    case Op::kAnd:  // short-circuit, as pgbench
      return Value::of_bool(to_bool(sub(0)) && to_bool(sub(1)));
    case Op::kOr:
      return Value::of_bool(to_bool(sub(0)) || to_bool(sub(1)));
    case Op::kCall: {
      // On the stack for the usual few arguments: \set runs for every transaction.
      constexpr std::size_t kInline = 8;
      std::array<Value, kInline> inline_args;
      std::vector<Value> more;
      const std::size_t count = n.args.size();
      if (count > kInline) more.resize(count);
      Value* args = count > kInline ? more.data() : inline_args.data();
      for (std::size_t i = 0; i < count; ++i) args[i] = sub(i);
      return n.fn->call(Args(args, count), rng);
    }
    default:
      break;
  }
  const Value l = sub(0), r = sub(1);
  switch (n.op) {
    case Op::kAdd:
    case Op::kSub:
    case Op::kMul:
    case Op::kDiv:
    case Op::kMod:
      return arithmetic(n.op, l, r);
    case Op::kBitAnd:
      return Value::of_int(to_int(l, "&") & to_int(r, "&"));
    case Op::kBitOr:
      return Value::of_int(to_int(l, "|") | to_int(r, "|"));
    case Op::kBitXor:
      return Value::of_int(to_int(l, "#") ^ to_int(r, "#"));
    case Op::kShl:
      return Value::of_int(static_cast<std::int64_t>(static_cast<std::uint64_t>(to_int(l, "<<"))
                                                     << (to_int(r, "<<") & 63)));
    case Op::kShr:
      return Value::of_int(to_int(l, ">>") >> (to_int(r, ">>") & 63));
    default:
      return compare(n.op, l, r);
  }
}

// ---- parsing: precedence climbing over pgbench's grammar (src/bin/pgbench/exprparse.y) ----

}  // namespace

Expr::Expr() = default;
Expr::Expr(std::unique_ptr<Node> root) : root_(std::move(root)) {}
Expr::Expr(Expr&&) noexcept = default;
Expr& Expr::operator=(Expr&&) noexcept = default;
Expr::~Expr() = default;

Value Expr::evaluate(const std::vector<Value>& variables, Random& rng) const {
  return eval(*root_, variables, rng);
}

std::vector<std::string> function_names() {
  std::vector<std::string> names;
  for (const auto& f : kFunctions) names.emplace_back(f.name);
  return names;
}

}  // namespace pgslow::workload::script
