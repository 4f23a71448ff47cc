#include "hotpath/controller/join_counts.h"

#include <optional>
#include <stdexcept>

namespace libra::hotpath {

bool JoinCounts::Add(std::string body, int sender, bool later) {
  if (later) {
    kept_.push_back({std::move(body), sender});
    return true;
  }
  const std::optional<JoinRequest> join = DecodeJoin(body);
  if (!join) return false;
  AddSampledCounts(join->counts, &sums_);
  return true;
}

void JoinCounts::SumKept() {
  for (const Kept& kept : kept_) {
    const std::optional<JoinRequest> join = DecodeJoin(kept.body);
    if (!join) {
      throw std::runtime_error("the JOIN of node " + std::to_string(kept.sender) +
                               " holds malformed counts");
    }
    AddSampledCounts(join->counts, &sums_);
  }
  kept_.clear();
}

}  // namespace libra::hotpath
