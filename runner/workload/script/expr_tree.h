#pragma once
// The tree of a parsed expression, shared by the parser (expr_parser.cpp) and the evaluator
// (expr.cpp); callers see only Expr (expr.h).

#include <memory>
#include <span>
#include <string_view>
#include <vector>

#include "workload/script/expr.h"

namespace pgslow::workload::script {

enum class Op {
  kConst,
  kVar,
  kNeg,
  kBitNot,
  kNot,
  kAdd,
  kSub,
  kMul,
  kDiv,
  kMod,
  kEq,
  kNe,
  kLt,
  kLe,
  kGt,
  kGe,
  kAnd,
  kOr,
  kBitAnd,
  kBitOr,
  kBitXor,
  kShl,
  kShr,
  kCall
};

using Args = std::span<const Value>;

// A built-in function of pgbench's expressions (pgbench.c's PGBENCH_FUNCTIONS).
struct Function {
  const char* name;
  int min_args;
  int max_args;  // -1: any number
  Value (*call)(Args, Random&);
};

// The function named `name`, or nullptr.
const Function* find_function(std::string_view name);

struct Node {
  Op op = Op::kConst;
  Value constant;
  int slot = 0;
  const Function* fn = nullptr;
  std::vector<std::unique_ptr<Node>> args;
  int height = 1;  // levels of this node's tree: at most kMaxExpressionDepth
};

}  // namespace pgslow::workload::script
