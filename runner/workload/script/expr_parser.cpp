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
#include "workload/script/expr.h"
#include "workload/script/expr_tree.h"

// The parser of pgbench's expressions: text to the tree expr.cpp evaluates.

namespace pgslow::workload::script {

namespace {

class Parser {
 public:
  Parser(std::string_view text, const VariableLookup& lookup) : s_(text), lookup_(lookup) {}

  std::unique_ptr<Node> parse_all() {
    skip_space();
    if (pos_ >= s_.size()) throw ParseError(1, "empty expression");
    auto n = parse_or();
    skip_space();
    if (pos_ < s_.size())
      throw ParseError(column(),
                       fmt::format("unexpected '{}' after the expression", s_.substr(pos_)));
    return n;
  }

 private:
  int column() const { return static_cast<int>(pos_) + 1; }
  void skip_space() {
    while (pos_ < s_.size() && std::isspace(static_cast<unsigned char>(s_[pos_]))) ++pos_;
  }
  bool accept(std::string_view tok) {
    skip_space();
    if (s_.substr(pos_, tok.size()) != tok) return false;
    pos_ += tok.size();
    return true;
  }
  // A keyword (AND, OR, NOT, TRUE, FALSE), case-insensitive, not the start of a longer word.
  bool accept_word(std::string_view word) {
    skip_space();
    if (pos_ + word.size() > s_.size()) return false;
    for (std::size_t i = 0; i < word.size(); ++i)
      if (std::tolower(static_cast<unsigned char>(s_[pos_ + i])) != word[i]) return false;
    if (pos_ + word.size() < s_.size() && is_ident(s_[pos_ + word.size()])) return false;
    pos_ += word.size();
    return true;
  }
  static bool is_ident(char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_' ||
           (static_cast<unsigned char>(c) & 0x80) != 0;
  }
  [[noreturn]] void too_deep() const {
    throw ParseError(column(),
                     fmt::format("the expression nests deeper than {} levels (parentheses, "
                                 "function calls, unary operators or a chain of operators)",
                                 kMaxExpressionDepth),
                     /*depth_exceeded=*/true);
  }
  // One more level of the parser's recursion (a '(', a function's argument, a unary operator),
  // for as long as it lives.
  class Nesting {
   public:
    explicit Nesting(Parser& p) : p_(p) {
      if (++p_.nesting_ > kMaxExpressionDepth) p_.too_deep();
    }
    ~Nesting() { --p_.nesting_; }
    Nesting(const Nesting&) = delete;
    Nesting& operator=(const Nesting&) = delete;

   private:
    Parser& p_;
  };
  // Sets the node's height from its arguments': a tree deeper than the limit is refused.
  std::unique_ptr<Node> sized(std::unique_ptr<Node> n) const {
    for (const auto& a : n->args) n->height = std::max(n->height, a->height + 1);
    if (n->height > kMaxExpressionDepth) too_deep();
    return n;
  }
  std::unique_ptr<Node> make(Op op, std::unique_ptr<Node> l, std::unique_ptr<Node> r = {}) const {
    auto n = std::make_unique<Node>();
    n->op = op;
    n->args.push_back(std::move(l));
    if (r) n->args.push_back(std::move(r));
    return sized(std::move(n));
  }

  std::unique_ptr<Node> parse_or() {
    const Nesting level(*this);
    auto l = parse_and();
    while (accept_word("or")) l = make(Op::kOr, std::move(l), parse_and());
    return l;
  }
  std::unique_ptr<Node> parse_and() {
    auto l = parse_not();
    while (accept_word("and")) l = make(Op::kAnd, std::move(l), parse_not());
    return l;
  }
  std::unique_ptr<Node> parse_not() {
    if (accept_word("not")) {
      const Nesting level(*this);
      return make(Op::kNot, parse_not());
    }
    return parse_comparison();
  }
  std::unique_ptr<Node> parse_comparison() {
    auto l = parse_bitwise();
    // Longest operators first: "<=" before "<", "<>" before "<".
    static constexpr std::pair<std::string_view, Op> kOps[] = {
        {"<=", Op::kLe}, {">=", Op::kGe}, {"<>", Op::kNe}, {"!=", Op::kNe},
        {"==", Op::kEq}, {"=", Op::kEq},  {"<", Op::kLt},  {">", Op::kGt}};
    skip_space();
    if (s_.substr(pos_, 2) == "<<" || s_.substr(pos_, 2) == ">>") return l;
    for (const auto& [tok, op] : kOps) {
      if (accept(tok)) {
        l = make(op, std::move(l), parse_bitwise());
        skip_space();
        for (const auto& [tok2, op2] : kOps) {
          if (s_.substr(pos_, tok2.size()) == tok2 && s_.substr(pos_, 2) != "<<" &&
              s_.substr(pos_, 2) != ">>")
            throw ParseError(column(), "comparisons do not chain: add parentheses");
        }
        break;
      }
    }
    return l;
  }
  std::unique_ptr<Node> parse_bitwise() {
    auto l = parse_shift();
    for (;;) {
      if (accept("|"))
        l = make(Op::kBitOr, std::move(l), parse_shift());
      else if (accept("#"))
        l = make(Op::kBitXor, std::move(l), parse_shift());
      else if (accept("&"))
        l = make(Op::kBitAnd, std::move(l), parse_shift());
      else
        return l;
    }
  }
  std::unique_ptr<Node> parse_shift() {
    auto l = parse_additive();
    for (;;) {
      if (accept("<<"))
        l = make(Op::kShl, std::move(l), parse_additive());
      else if (accept(">>"))
        l = make(Op::kShr, std::move(l), parse_additive());
      else
        return l;
    }
  }
  std::unique_ptr<Node> parse_additive() {
    auto l = parse_multiplicative();
    for (;;) {
      if (accept("+"))
        l = make(Op::kAdd, std::move(l), parse_multiplicative());
      else if (accept("-"))
        l = make(Op::kSub, std::move(l), parse_multiplicative());
      else
        return l;
    }
  }
  std::unique_ptr<Node> parse_multiplicative() {
    auto l = parse_unary();
    for (;;) {
      if (accept("*"))
        l = make(Op::kMul, std::move(l), parse_unary());
      else if (accept("/"))
        l = make(Op::kDiv, std::move(l), parse_unary());
      else if (accept("%"))
        l = make(Op::kMod, std::move(l), parse_unary());
      else
        return l;
    }
  }
  std::unique_ptr<Node> parse_unary() {
    skip_space();
    if (pos_ < s_.size() && (s_[pos_] == '-' || s_[pos_] == '+' || s_[pos_] == '~')) {
      const Nesting level(*this);
      if (accept("-")) return make(Op::kNeg, parse_unary());
      if (accept("+")) return parse_unary();
      if (accept("~")) return make(Op::kBitNot, parse_unary());
    }
    return parse_primary();
  }
  std::unique_ptr<Node> parse_primary() {
    skip_space();
    if (pos_ >= s_.size())
      throw ParseError(column(), "unterminated expression: a value is missing at the end");
    const int at = column();
    const char c = s_[pos_];
    if (c == '(') {
      ++pos_;
      auto n = parse_or();
      if (!accept(")"))
        throw ParseError(column(), fmt::format("missing ')' for the '(' at column {}", at));
      return n;
    }
    if (c == ':') {
      std::size_t end = pos_ + 1;
      while (end < s_.size() && is_ident(s_[end])) ++end;
      const std::string_view name = s_.substr(pos_ + 1, end - pos_ - 1);
      if (name.empty()) throw ParseError(at, "':' must be followed by a variable name");
      auto slot = lookup_(name);
      if (!slot)
        throw ParseError(at,
                         fmt::format("unknown variable :{} (not set by an earlier \\set, "
                                     "nor one of :scale, :client_id, :default_seed, :random_seed)",
                                     name));
      pos_ = end;
      auto n = std::make_unique<Node>();
      n->op = Op::kVar;
      n->slot = *slot;
      return n;
    }
    if (std::isdigit(static_cast<unsigned char>(c)) || c == '.') return parse_number();
    if (std::isalpha(static_cast<unsigned char>(c)) || c == '_') {
      std::size_t end = pos_;
      while (end < s_.size() && is_ident(s_[end])) ++end;
      std::string name(s_.substr(pos_, end - pos_));
      for (char& ch : name) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
      if (name == "true" || name == "false") {
        pos_ = end;
        auto n = std::make_unique<Node>();
        n->constant = Value::of_bool(name == "true");
        return n;
      }
      pos_ = end;
      if (!accept("("))
        throw ParseError(at, fmt::format("unexpected word '{}': a function call needs '('", name));
      const Function* fn = find_function(name);
      if (fn == nullptr) {
        auto close = closest_match(name, function_names());
        throw ParseError(at,
                         fmt::format("unknown function {}(){}", name,
                                     close ? fmt::format(" (did you mean {}()?)", *close) : ""));
      }
      auto n = std::make_unique<Node>();
      n->op = Op::kCall;
      n->fn = fn;
      if (!accept(")")) {
        do {
          n->args.push_back(parse_or());
        } while (accept(","));
        if (!accept(")"))
          throw ParseError(column(), fmt::format("missing ')' closing {}( at column {}", name, at));
      }
      n = sized(std::move(n));
      const int count = static_cast<int>(n->args.size());
      if (count < fn->min_args || (fn->max_args >= 0 && count > fn->max_args)) {
        std::string want = fn->min_args == fn->max_args ? std::to_string(fn->min_args)
                           : fn->max_args < 0           ? fmt::format("at least {}", fn->min_args)
                                              : fmt::format("{} or {}", fn->min_args, fn->max_args);
        throw ParseError(at, fmt::format("{}() takes {} argument{}, got {}", name, want,
                                         want == "1" ? "" : "s", count));
      }
      return n;
    }
    throw ParseError(at, fmt::format("unexpected '{}'", c));
  }
  std::unique_ptr<Node> parse_number() {
    const int at = column();
    std::size_t end = pos_;
    bool is_dbl = false;
    while (end < s_.size() && std::isdigit(static_cast<unsigned char>(s_[end]))) ++end;
    if (end < s_.size() && s_[end] == '.') {
      is_dbl = true;
      ++end;
      while (end < s_.size() && std::isdigit(static_cast<unsigned char>(s_[end]))) ++end;
    }
    if (end < s_.size() && (s_[end] == 'e' || s_[end] == 'E')) {
      std::size_t e = end + 1;
      if (e < s_.size() && (s_[e] == '+' || s_[e] == '-')) ++e;
      if (e < s_.size() && std::isdigit(static_cast<unsigned char>(s_[e]))) {
        is_dbl = true;
        end = e;
        while (end < s_.size() && std::isdigit(static_cast<unsigned char>(s_[end]))) ++end;
      }
    }
    const std::string text(s_.substr(pos_, end - pos_));
    if (text == ".") throw ParseError(at, "unexpected '.'");
    auto n = std::make_unique<Node>();
    try {
      std::size_t used = 0;
      n->constant = is_dbl ? Value::of_double(std::stod(text, &used))
                           : Value::of_int(std::stoll(text, &used));
    } catch (const std::out_of_range&) {
      throw ParseError(at, fmt::format("number {} is out of range", text));
    }
    pos_ = end;
    return n;
  }

  std::string_view s_;
  const VariableLookup& lookup_;
  std::size_t pos_ = 0;
  int nesting_ = 0;  // the parser's recursion, in levels (Nesting)
};

}  // namespace

Expr parse_expression(std::string_view text, const VariableLookup& lookup) {
  return Expr(Parser(text, lookup).parse_all());
}

}  // namespace pgslow::workload::script
