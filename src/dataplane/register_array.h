// Register arrays with the access rule of a Tofino pipeline: each array has
// one stateful ALU, so a packet may touch an array at most once per pass. The
// rule is checked in every build type; breaking it is a bug in the program and
// throws RegisterAccessError.
//
// The check costs one compare per access: every pass has a distinct id and the
// array remembers the id of the last pass that touched it (a generation
// counter), folded into the same branch as the bounds check.
//
// The operations are the ones a stateful ALU offers on a 32-bit cell (read,
// write, add, saturating add) and on a pair of 32-bit halves, whose update is
// one of the small conditional programs in stateful_ops.h.
#pragma once

#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

#include "wire/fixed_point.h"

namespace libra::dataplane {

class RegisterAccessError : public std::logic_error {
 public:
  using std::logic_error::logic_error;
};

// Identifies one packet's pass through the pipeline. Pass 0 is never used.
using PassId = std::uint64_t;

struct RegisterPair {
  std::uint32_t hi = 0;
  std::uint32_t lo = 0;
};

template <typename Cell>
class RegisterArray {
 public:
  RegisterArray() = default;
  RegisterArray(std::string name, std::size_t size)
      : cells_(size), size_(size), name_(std::move(name)) {}

  const std::string& name() const { return name_; }
  std::size_t size() const { return size_; }

  Cell Read(PassId pass, std::size_t index) { return Access(pass, index); }

  void Write(PassId pass, std::size_t index, Cell value) { Access(pass, index) = value; }

  // Returns the new value.
  std::uint32_t Add(PassId pass, std::size_t index,
                    std::uint32_t addend) requires std::is_same_v<Cell, std::uint32_t> {
    Cell& cell = Access(pass, index);
    cell += addend;
    return cell;
  }

  SaturatingSum SaturatingAdd(PassId pass, std::size_t index,
                              std::int32_t addend) requires std::is_same_v<Cell, std::uint32_t> {
    Cell& cell = Access(pass, index);
    const SaturatingSum sum = dataplane::SaturatingAdd(static_cast<std::int32_t>(cell), addend);
    cell = static_cast<std::uint32_t>(sum.value);
    return sum;
  }

  // Runs one conditional pair program (see stateful_ops.h) on the cell and
  // returns its output.
  template <typename PairProgram>
  auto Execute(PassId pass, std::size_t index,
               const PairProgram& program) requires std::is_same_v<Cell, RegisterPair> {
    return program(Access(pass, index));
  }

  // Control-plane access (BFRuntime's register reset/read), outside any pass.
  void Clear() { cells_.assign(cells_.size(), Cell{}); }
  const Cell& Peek(std::size_t index) const { return cells_.at(index); }

 private:
  Cell& Access(PassId pass, std::size_t index) {
    if ((pass == last_pass_) | (index >= size_)) [[unlikely]] {
      RefuseAccess(pass, index);
    }
    last_pass_ = pass;
    return cells_[index];
  }

  [[noreturn, gnu::cold, gnu::noinline]] void RefuseAccess(PassId pass, std::size_t index) const {
    if (pass == last_pass_) {
      throw RegisterAccessError("register array " + name_ + " accessed twice in one packet pass");
    }
    throw RegisterAccessError("register array " + name_ + ": index " + std::to_string(index) +
                              " out of range " + std::to_string(size_));
  }

  // The data path's fields first: one cache line holds what an access reads.
  std::vector<Cell> cells_;
  std::size_t size_ = 0;
  PassId last_pass_ = 0;
  std::string name_;
};

}  // namespace libra::dataplane
