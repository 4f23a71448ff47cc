// The value register arrays of the switch: P arrays of the same size, array j
// addressed by slot j of a packet. They obey the same rule as RegisterArray
// (one stateful ALU per array, so one access per array per packet pass), but
// a DATA packet touches up to P of them at once, so the group checks the rule
// for all of them in one go: it keeps the set of arrays touched in the
// current pass as a bit mask, and claiming the arrays of a packet is one AND
// against it. Breaking the rule, an array the group does not have or an index
// out of range throws RegisterAccessError, in every build type.
//
// The cells of all P arrays live in one allocation, row by row: cell i of
// array j at i * P + j. A packet reads and writes the same row of many arrays
// (a packer drains its per-array queues in step, a COLLECT names a row), so
// its cells share a few cache lines; array by array, P cells a whole array
// apart sat in P lines that also fell into the same cache sets. (A Tofino
// keeps each array in its own stage's SRAM; the layout is the model's.)
#pragma once

#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "dataplane/register_array.h"

namespace libra::dataplane {

class RegisterArrayGroup {
 public:
  static constexpr std::size_t kMaxArrays = 64;  // the bit mask's width

  RegisterArrayGroup() = default;
  // `count` arrays named `prefix`0 .. `prefix`{count-1}, of `size` cells each.
  RegisterArrayGroup(std::string prefix, std::size_t count, std::size_t size)
      : cells_(count * size),
        size_(size),
        count_(count),
        missing_(count >= kMaxArrays ? 0 : ~std::uint64_t{0} << count),
        prefix_(std::move(prefix)) {
    if (count > kMaxArrays) {
      throw std::invalid_argument("a register array group holds at most 64 arrays");
    }
  }

  std::size_t count() const { return count_; }
  std::size_t size() const { return size_; }

  // One access to each array j in `arrays`, to cell offset + index[j]:
  // visit(j, cell) runs the pair program of that access. All the arrays are
  // claimed for the pass before any cell is touched.
  template <typename Visit>
  void AccessEach(PassId pass, std::uint64_t arrays, const std::uint32_t* index, std::size_t offset,
                  Visit&& visit) {
    Claim(pass, arrays);
    // Locals, not members: the visitor's stores into cells could otherwise
    // alias them and force a reload per slot.
    RegisterPair* const cells = cells_.data();
    const std::size_t size = size_;
    const std::size_t count = count_;
    for (std::uint64_t rest = arrays; rest != 0; rest &= rest - 1) {
      const auto j = static_cast<std::size_t>(__builtin_ctzll(rest));
      const std::size_t cell = offset + index[j];
      if (cell >= size) [[unlikely]]
        RefuseIndex(j, cell);
      visit(j, cells[cell * count + j]);
    }
  }

  // One access to each array j in `arrays`, all to the same cell `index`:
  // visit(row) gets the cells of that index in arrays 0 .. count() - 1, row[j]
  // being array j's, and must touch only those of `arrays`. (The cells of one
  // index are neighbours in memory, so a visitor can run the pair programs as
  // one loop.)
  template <typename Visit>
  void AccessRow(PassId pass, std::uint64_t arrays, std::size_t index, Visit&& visit) {
    Claim(pass, arrays);
    if (index >= size_) [[unlikely]]
      RefuseIndex(static_cast<std::size_t>(__builtin_ctzll(arrays | 1)), index);
    visit(cells_.data() + index * count_);
  }

  // One access to array j, cell `index`: returns the output of `program`.
  template <typename PairProgram>
  auto Execute(PassId pass, std::size_t j, std::size_t index, const PairProgram& program) {
    if (j >= count_) [[unlikely]]
      RefuseClaim(j < kMaxArrays ? std::uint64_t{1} << j : 0);
    Claim(pass, std::uint64_t{1} << j);
    if (index >= size_) [[unlikely]]
      RefuseIndex(j, index);
    return program(cells_[index * count_ + j]);
  }

  // Control-plane access (BFRuntime's register read), outside any pass.
  const RegisterPair& Peek(std::size_t j, std::size_t index) const {
    if (j >= count_ || index >= size_) throw std::out_of_range("register peek out of range");
    return cells_[index * count_ + j];
  }

 private:
  void Claim(PassId pass, std::uint64_t arrays) {
    if (pass != claimed_pass_) {
      claimed_pass_ = pass;
      claimed_ = 0;
    }
    // One test for both errors: an array claimed before in this pass, or
    // one the group does not have.
    if (((claimed_ | missing_) & arrays) != 0) [[unlikely]]
      RefuseClaim(arrays);
    claimed_ |= arrays;
  }

  [[noreturn, gnu::cold, gnu::noinline]] void RefuseClaim(std::uint64_t arrays) const {
    if ((arrays & missing_) != 0 || arrays == 0) {
      throw RegisterAccessError("register array group " + prefix_ + " has only " +
                                std::to_string(count_) + " arrays");
    }
    throw RegisterAccessError("register array " + prefix_ +
                              std::to_string(__builtin_ctzll(arrays & claimed_)) +
                              " accessed twice in one packet pass");
  }
  [[noreturn, gnu::cold, gnu::noinline]] void RefuseIndex(std::size_t j, std::size_t index) const {
    throw RegisterAccessError("register array " + prefix_ + std::to_string(j) + ": index " +
                              std::to_string(index) + " out of range " + std::to_string(size_));
  }
  std::vector<RegisterPair> cells_;  // array j, cell i at i * count_ + j
  std::size_t size_ = 0;
  std::size_t count_ = 0;
  std::uint64_t missing_ = ~std::uint64_t{0};  // bits of the arrays the group does not have
  PassId claimed_pass_ = 0;
  std::uint64_t claimed_ = 0;  // arrays accessed in claimed_pass_
  std::string prefix_;
};

}  // namespace libra::dataplane
