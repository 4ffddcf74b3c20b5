#pragma once
// pgbench's expression language, as `\set` uses it (docs/workloads.md, "script"): integer and
// double arithmetic, comparisons, boolean logic, bitwise operators and pgbench's functions,
// random_zipfian and friends included. Variables are resolved to slots when an expression
// is parsed, so evaluating one looks nothing up by name.

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "common/random.h"

namespace pgslow::workload::script {

// A value of pgbench's expression language: an integer, a double or a boolean.
struct Value {
  enum class Kind { kInt, kDouble, kBool };
  Kind kind = Kind::kInt;
  std::int64_t i = 0;
  double d = 0;
  bool b = false;
  static Value of_int(std::int64_t v) { return {Kind::kInt, v, 0, false}; }
  static Value of_double(double v) { return {Kind::kDouble, 0, v, false}; }
  static Value of_bool(bool v) { return {Kind::kBool, 0, 0, v}; }
  // As pgbench writes it into SQL: 42, 3.14159265358979, true.
  std::string text() const;
  // The same into `out`, reusing its storage (a statement's parameter, per transaction).
  void write_text(std::string& out) const;
};

// A syntax error, unknown function or variable, or wrong argument count: the 1-based column
// in the expression's text where it is.
class ParseError : public std::runtime_error {
 public:
  ParseError(int column, const std::string& message, bool depth_exceeded = false)
      : std::runtime_error(message), column_(column), depth_exceeded_(depth_exceeded) {}
  int column() const { return column_; }
  // The expression nests deeper than kMaxExpressionDepth.
  bool depth_exceeded() const { return depth_exceeded_; }

 private:
  int column_;
  bool depth_exceeded_;
};

// What evaluation can fail on (division by zero, an out-of-range integer, an empty random
// range): pgbench aborts the client; pgslow ends the run with this message.
class EvalError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct Node;

class Expr {
 public:
  Expr();
  explicit Expr(std::unique_ptr<Node> root);
  Expr(Expr&&) noexcept;
  Expr& operator=(Expr&&) noexcept;
  ~Expr();
  // Evaluates with the variables' current values (indexed by slot) and the client's random
  // generator.
  Value evaluate(const std::vector<Value>& variables, Random& rng) const;

 private:
  std::unique_ptr<Node> root_;
};

// hash()'s seed when none is given, and :default_seed: fixed (pgbench draws one per run), so
// runs with the same --seed draw the same values.
constexpr std::int64_t kDefaultSeed = 0x5eed;

// How deeply an expression may nest: parentheses, function calls, unary operators and chains
// of binary operators (1 + 1 + ... is a tree as deep as it is long). pgbench-compatible
// scripts need a few levels, a generated one a few dozen; parsing and evaluation recurse once
// per level, so the bound keeps a hostile script from overflowing the stack.
constexpr int kMaxExpressionDepth = 256;

// Slot of a variable by name, or nothing when the name is not defined at this point.
using VariableLookup = std::function<std::optional<int>(std::string_view)>;

// Parses one expression (the whole of `text`); throws ParseError, also for an expression
// deeper than kMaxExpressionDepth.
Expr parse_expression(std::string_view text, const VariableLookup& lookup);

// The names of pgbench's functions that pgslow supports, for docs and hints.
std::vector<std::string> function_names();

}  // namespace pgslow::workload::script
