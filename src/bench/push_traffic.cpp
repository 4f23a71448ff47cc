#include "bench/push_traffic.h"

#include <algorithm>
#include <cmath>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "hot/placement.h"
#include "hotpath/messages/hot_packets.h"

namespace libra::hotpath {
namespace {

void Require(bool ok, const char* what) {
  if (!ok) throw std::invalid_argument(std::string("push traffic: ") + what);
}

}  // namespace

PushTraffic MakePushTraffic(const PushTrafficOptions& options) {
  Require(options.workers >= 1 && options.workers <= 256, "workers must be 1 to 256");
  Require(options.slots_per_packet >= 1 && options.slots_per_packet <= 32,
          "slots per packet must be 1 to 32");
  Require(options.cells_per_array >= 1, "cells per array must be positive");
  Require(options.batch >= 1, "batch must be positive");
  Require(options.fields >= 1 && options.keys >= options.fields,
          "keys must be at least fields, fields positive");
  Require(options.skew >= 0 && options.skew <= 4, "skew must be 0 to 4");
  Require(options.iterations >= 1, "iterations must be positive");

  // Key (field f, popularity rank r) is f * keys_per_field + r.
  const std::uint64_t keys_per_field = options.keys / options.fields;
  std::vector<double> popularity(keys_per_field);
  for (std::uint64_t r = 0; r < keys_per_field; ++r) {
    popularity[r] = std::pow(static_cast<double>(r + 1), -options.skew);
  }

  // The hot set: every field's ranks are equally popular, so the most
  // popular keys are the first ranks of every field.
  hot::SwitchLayout layout;
  layout.num_arrays = static_cast<std::uint32_t>(options.slots_per_packet);
  layout.cells_per_array = options.cells_per_array;
  std::vector<hot::HotKey> candidates;
  const std::uint64_t hot_ranks = std::min<std::uint64_t>(
      keys_per_field, (layout.capacity() + options.fields - 1) / options.fields);
  for (std::uint64_t r = 0; r < hot_ranks; ++r) {
    for (std::uint32_t f = 0; f < options.fields; ++f) {
      // Relative popularity as whole counts, the way a profiler ranks keys.
      const auto frequency = static_cast<std::uint64_t>(1e6 * popularity[r] / popularity[0]);
      candidates.push_back({f * keys_per_field + r, 1, std::max<std::uint64_t>(frequency, 1)});
    }
  }
  const hot::HotSet hot_set = hot::PlaceHotSet(
      hot::ChooseHotKeys(std::move(candidates), layout.capacity()), layout, hot::HeatPlacement());

  PushTraffic made;
  made.hot_keys = hot_set.size();
  made.traffic.workers = options.workers;
  made.traffic.slots_per_packet = options.slots_per_packet;
  made.traffic.cells_per_array = options.cells_per_array;

  std::mt19937_64 rng(options.seed);
  std::discrete_distribution<std::uint64_t> rank(popularity.begin(), popularity.end());
  std::uniform_real_distribution<float> gradient(-1.0f, 1.0f);
  std::vector<std::uint32_t> epoch_of_cell(hot_set.layout().capacity(), ~std::uint32_t{0});
  std::uint64_t cells_touched = 0;
  std::uint64_t occurrences = 0;
  std::uint64_t hot_occurrences = 0;
  for (std::uint32_t it = 0; it < options.iterations; ++it) {
    std::vector<std::vector<EncodedPacket>> sent(options.workers);
    for (int w = 0; w < options.workers; ++w) {
      // A worker pushes each distinct key of its batch once, in key order.
      std::vector<hot::Key> keys;
      for (std::uint32_t row = 0; row < options.batch; ++row) {
        for (std::uint32_t f = 0; f < options.fields; ++f) {
          const hot::Key key = f * keys_per_field + rank(rng);
          ++occurrences;
          if (!hot_set.IsHot(key)) continue;
          ++hot_occurrences;
          keys.push_back(key);
        }
      }
      std::sort(keys.begin(), keys.end());
      keys.erase(std::unique(keys.begin(), keys.end()), keys.end());
      std::vector<float> vals(keys.size());
      for (float& v : vals) v = gradient(rng);
      wire::Header header;
      header.type = wire::MessageType::kData;
      header.job_id = made.traffic.job_id;
      header.node_id = static_cast<std::uint16_t>(w);
      sent[w] = PackHotValues(hot_set, header, keys, CheckHotValues(hot_set, keys, vals, {}), vals)
                    .packets;
      made.values += keys.size();
      for (const hot::Key key : keys) {
        for (const hot::CellAddress& cell : hot_set.CellsOf(hot_set.Find(key))) {
          std::uint32_t& seen =
              epoch_of_cell[std::uint64_t{cell.index} * layout.num_arrays + cell.array];
          cells_touched += seen != it;
          seen = it;
        }
      }
    }
    // Workers send at the same pace, so their packets arrive interleaved.
    std::vector<dataplane::BenchPacket>& arrivals = made.traffic.epochs.emplace_back();
    for (std::size_t k = 0;; ++k) {
      bool any = false;
      for (int w = 0; w < options.workers; ++w) {
        if (k >= sent[w].size()) continue;
        any = true;
        const auto bytes = sent[w][k].view();
        arrivals.push_back({{bytes.begin(), bytes.end()}, static_cast<std::uint16_t>(w)});
      }
      if (!any) break;
    }
    made.packets += arrivals.size();
  }
  made.cells_per_epoch = double(cells_touched) / options.iterations;
  made.hot_share = occurrences == 0 ? 0 : double(hot_occurrences) / double(occurrences);
  return made;
}

}  // namespace libra::hotpath
