#include "hotpath/worker/hot_key_routes.h"

#include <algorithm>
#include <stdexcept>

#include "hot/prefetch.h"
#include "hotpath/messages/written_keys.h"

namespace libra::hotpath {

HotKeyRoutes::HotKeyRoutes(std::shared_ptr<const hot::HotSet> hot_set,
                           std::vector<std::uint32_t> owners, std::uint32_t num_servers)
    : hot_set_(std::move(hot_set)), owners_(std::move(owners)) {
  position_ = OwnedKeyPositions(*hot_set_, owners_, &keys_of_server_);
  // OwnedKeyPositions sizes the list by the highest owner; servers above it
  // own nothing.
  if (keys_of_server_.size() < num_servers) keys_of_server_.resize(num_servers, 0);
}

std::vector<FallbackPush> HotKeyRoutes::SplitByServer(std::uint32_t epoch, std::uint32_t worker,
                                                      std::span<const hot::Key> keys,
                                                      std::span<const float> vals) const {
  std::vector<FallbackPush> pushes(keys_of_server_.size());
  for (FallbackPush& push : pushes) {
    push.epoch = epoch;
    push.worker = worker;
  }
  std::size_t offset = 0;
  for (hot::Key key : keys) {
    const auto [index, len] = hot_set_->Lookup(key);
    FallbackPush& push = pushes.at(owners_[index]);
    push.keys.push_back(key);
    push.vals.insert(push.vals.end(), vals.begin() + offset, vals.begin() + offset + len);
    offset += len;
  }
  return pushes;
}

std::vector<HotKeyRoutes::Report> HotKeyRoutes::WrittenKeysOf(
    std::uint32_t epoch, std::uint32_t worker, std::span<const hot::Key> hot_keys,
    std::span<const float> vals, const SumCheck& check,
    std::span<const hot::HotSet::Entry> entries) const {
  if (!entries.empty() && entries.size() != hot_keys.size()) {
    throw std::invalid_argument("written keys: " + std::to_string(entries.size()) +
                                " hot-set entries for " + std::to_string(hot_keys.size()) +
                                " keys");
  }
  std::vector<hot::HotSet::Entry> looked_up;
  entries = hot_set_->EntriesOf(hot_keys, entries, &looked_up);
  std::vector<std::vector<std::uint32_t>> positions(keys_of_server_.size());
  std::vector<std::uint64_t> terms(keys_of_server_.size(), 0);
  const SumCheck::Epoch coefficients = check.ForEpoch(epoch);
  std::size_t offset = 0;
  for (std::size_t i = 0; i < hot_keys.size(); ++i) {
    // The keys' owners and positions scatter over arrays of the hot set's
    // size: fetched a few keys ahead (as HotSet::PrefetchAhead).
    if (i + hot::HotSet::kLookAhead < hot_keys.size()) {
      const std::uint32_t ahead = entries[i + hot::HotSet::kLookAhead].index;
      if (ahead < owners_.size()) {
        hot::PrefetchForRead(owners_.data() + ahead);
        hot::PrefetchForRead(position_.data() + ahead);
      }
    }
    const hot::Key key = hot_keys[i];
    const auto [index, len] = entries[i];
    const std::uint32_t owner = owners_[index];
    if (len > vals.size() - offset) {
      throw std::invalid_argument("written keys: fewer values than the keys' lengths");
    }
    positions[owner].push_back(position_[index]);
    terms[owner] =
        SumCheck::Add(terms[owner], coefficients.KeyTerm(key, vals.subspan(offset, len)));
    offset += len;
  }
  std::vector<Report> reports(keys_of_server_.size());
  for (std::size_t s = 0; s < positions.size(); ++s) {
    if (keys_of_server_[s] == 0) continue;
    // A push's keys ascend, and so do their positions; a caller's unsorted
    // push (PS-lite asks for sorted keys but does not check) is sorted here.
    if (!std::is_sorted(positions[s].begin(), positions[s].end())) {
      std::sort(positions[s].begin(), positions[s].end());
    }
    positions[s].erase(std::unique(positions[s].begin(), positions[s].end()), positions[s].end());
    reports[s].has_keys = true;
    reports[s].keys.epoch = epoch;
    reports[s].keys.worker = worker;
    reports[s].keys.key_set = EncodeKeySet(positions[s], keys_of_server_[s]);
    reports[s].keys.sum_term = terms[s];
  }
  return reports;
}

}  // namespace libra::hotpath
