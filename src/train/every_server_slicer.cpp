#include "train/every_server_slicer.h"

#include <algorithm>

namespace libra::train {

ps::KVWorker<float>::Slicer EveryServerSlicer(std::shared_ptr<const bool> broadcast) {
  return [broadcast](const ps::KVPairs<float>& send, const std::vector<ps::Range>& ranges,
                     ps::KVWorker<float>::SlicedKVs* sliced) {
    const size_t servers = ranges.size();
    const size_t keys = send.keys.size();
    const size_t length = keys == 0 ? 0 : send.vals.size() / keys;
    sliced->assign(servers, {false, ps::KVPairs<float>()});
    size_t begin = 0;
    for (size_t s = 0; s < servers; ++s) {
      // The last server also takes keys at or beyond its range's end.
      const size_t end =
          s + 1 == servers
              ? keys
              : static_cast<size_t>(std::lower_bound(send.keys.begin() + begin, send.keys.end(),
                                                     ranges[s + 1].begin()) -
                                    send.keys.begin());
      auto& [nonempty, part] = (*sliced)[s];
      nonempty = *broadcast || end > begin;
      part.priority = send.priority;
      if (end > begin) {
        part.keys = send.keys.segment(begin, end);
        if (!send.vals.empty()) part.vals = send.vals.segment(begin * length, end * length);
      }
      begin = end;
    }
  };
}

}  // namespace libra::train
