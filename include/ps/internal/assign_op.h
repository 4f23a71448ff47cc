// Assignment operators chosen at run time, as PS-lite's parallel_kv_match.h
// and applications use them: AssignFunc(lhs, op, &rhs) does `rhs op= lhs`.
#pragma once

#include "ps/internal/utils.h"

namespace ps {

enum AssignOp {
  ASSIGN,  // rhs = lhs
  PLUS,    // rhs += lhs
  MINUS,   // rhs -= lhs
  TIMES,   // rhs *= lhs
  DIVIDE,  // rhs /= lhs
  AND,     // rhs &= lhs (integers only: AssignFuncInt)
  OR,      // rhs |= lhs
  XOR      // rhs ^= lhs
};

// *rhs op= lhs for the arithmetic operators; the bit operators stop the
// program (use AssignFuncInt).
template <typename T>
inline void AssignFunc(const T& lhs, AssignOp op, T* rhs) {
  switch (op) {
    case ASSIGN:
      *rhs = lhs;
      break;
    case PLUS:
      *rhs += lhs;
      break;
    case MINUS:
      *rhs -= lhs;
      break;
    case TIMES:
      *rhs *= lhs;
      break;
    case DIVIDE:
      *rhs /= lhs;
      break;
    default:
      LOG(FATAL) << "AssignFunc: operator " << static_cast<int>(op)
                 << " needs an integer type (AssignFuncInt)";
  }
}

// *rhs op= lhs for every operator, bit operators included.
template <typename T>
inline void AssignFuncInt(const T& lhs, AssignOp op, T* rhs) {
  switch (op) {
    case AND:
      *rhs &= lhs;
      break;
    case OR:
      *rhs |= lhs;
      break;
    case XOR:
      *rhs ^= lhs;
      break;
    default:
      AssignFunc(lhs, op, rhs);
  }
}

}  // namespace ps
