#include "train/training_hot_set.h"

#include <algorithm>
#include <cmath>
#include <functional>

#include "hot/placement.h"
#include "hot/sampled_rates.h"
#include "train/batch.h"

namespace libra::train {
namespace {

// The distinct parameter keys of every push of one epoch, push after push.
std::vector<ParameterKey> PushedKeys(const Dataset& train, uint32_t workers, uint32_t batch,
                                     uint64_t* pushes) {
  std::vector<ParameterKey> all, push;
  all.reserve(train.keys.size());
  for (uint32_t w = 0; w < workers; ++w) {
    const uint64_t shard_rows = train.rows() > w ? (train.rows() - w + workers - 1) / workers : 0;
    for (uint64_t first = 0; first < shard_rows; first += batch) {
      push.clear();
      for (uint64_t k = first; k < std::min<uint64_t>(shard_rows, first + batch); ++k) {
        const uint64_t row = w + k * workers;
        for (uint64_t i = train.row_begin[row]; i < train.row_begin[row + 1]; ++i) {
          push.push_back(ParameterKeyOf(train.keys[i]));
        }
      }
      std::sort(push.begin(), push.end());
      push.erase(std::unique(push.begin(), push.end()), push.end());
      all.insert(all.end(), push.begin(), push.end());
      ++*pushes;
    }
  }
  return all;
}

}  // namespace

TrainingHotSet FindTrainingHotSet(const Dataset& train, const Model& model,
                                  const TrainingHotSetOptions& options) {
  TrainingHotSet result;
  const uint32_t value_len = model.value_length();

  // The profiler, on the keys the workers will push.
  std::vector<uint64_t> keys(train.keys.size());
  std::transform(train.keys.begin(), train.keys.end(), keys.begin(), ParameterKeyOf);
  hot::ProfileOptions profile;
  profile.sample_fraction = options.sample_fraction;
  profile.capacity_cells = options.capacity_cells;
  profile.value_len = value_len;
  profile.batch_size = options.batch;
  profile.workers = options.workers;
  profile.seed = options.seed;
  profile.min_pushes_per_epoch = options.min_pushes_per_epoch;
  hot::ProfileResult found =
      hot::ProfileHotParameters(hot::SparseRows{train.row_begin, keys}, profile);
  result.profile = found.report;
  keys.clear();
  keys.shrink_to_fit();

  // Dense keys ride in every push: hotter than any feature key.
  std::vector<hot::HotKey> candidates(found.hot_set.keys().begin(), found.hot_set.keys().end());
  uint64_t hottest = 0;
  for (const hot::HotKey& k : candidates) hottest = std::max(hottest, k.frequency);
  for (uint32_t i = 0; i < model.num_dense_keys(); ++i) {
    candidates.push_back({DenseParameterKey(i), value_len, hottest + 1});
  }
  std::vector<hot::HotKey> chosen =
      hot::ChooseHotKeys(std::move(candidates), options.capacity_cells);
  const hot::SwitchLayout layout = found.hot_set.layout();
  if (options.choose_by_cost || options.link_mbit > 0) {
    // A key's pushes per epoch: its sampled updates over the sampled epochs.
    const double epochs = std::max<double>(1, static_cast<double>(found.report.sampled_epochs));
    hot::CostInput input;
    input.num_workers = options.workers;
    input.num_servers = options.servers;
    input.slots_per_packet = layout.num_arrays;
    input.capacity_values = options.capacity_cells;
    input.link_bytes_per_s = static_cast<double>(options.link_mbit) * 1e6 / 8;
    input.shared_cores = options.shared_cores;
    input.measured_plain_epoch_s = options.measured_plain_epoch_s;
    // Priced at what they are expected to cost, not at their sampled
    // counts, which overstate the tail the sample found (sampled_rates.h).
    std::vector<uint64_t> counts;
    double sampled_pushes = 0;
    for (const hot::HotKey& k : chosen) counts.push_back(k.frequency);
    const std::vector<double> expected = hot::GoodTuringCounts(counts);
    for (size_t i = 0; i < chosen.size(); ++i) {
      input.keys.push_back({chosen[i].key, chosen[i].value_len,
                            std::min<double>(options.workers, expected[i] / epochs)});
      // The dense keys' counts are made up (they are not in the sample).
      if (DenseIndexOf(chosen[i].key, model.num_dense_keys()) < 0) sampled_pushes += expected[i];
    }
    // All the sample's pushes (their sum is a fair estimate, also of keys
    // the sample missed) but the set's expected ones stay on the plain path.
    const double other =
        std::max(0.0, static_cast<double>(found.report.sampled_updates) - sampled_pushes) / epochs;
    input.other_pushes_per_epoch = other;
    input.other_values_per_epoch = other * value_len;
    if (options.choose_by_cost) {
      const hot::CostChoice choice = hot::ChooseByCost(input);
      result.cost_why = choice.why;
      result.cost = choice.chosen;
      // Both orders are by updates, most first; dense keys (capped at one
      // push per worker) stay ahead of every feature key.
      chosen.resize(choice.chosen.keys);
    } else {
      // A forced set: what the model predicts for it, so that runs of
      // forced sets check the model too.
      result.cost = hot::PredictWholeSet(input);
      result.cost_why =
          "a forced set; the cost model predicts " + hot::DescribePrediction(result.cost);
    }
  }
  result.hot_set =
      hot::PlaceHotSet(std::move(chosen), layout, *hot::MakePlacement(hot::PlacementKind::kHeat));
  for (uint32_t i = 0; i < model.num_dense_keys(); ++i) {
    result.hot_dense_keys += result.hot_set.IsHot(DenseParameterKey(i)) ? 1 : 0;
  }
  result.hot_feature_keys = result.hot_set.size() - result.hot_dense_keys;

  // One epoch of the job's pushes: update counts per key.
  std::vector<ParameterKey> pushed =
      PushedKeys(train, options.workers, options.batch, &result.pushes);
  std::sort(pushed.begin(), pushed.end());
  std::vector<uint64_t> counts;
  for (size_t i = 0; i < pushed.size();) {
    size_t j = i;
    while (j < pushed.size() && pushed[j] == pushed[i]) ++j;
    counts.push_back(j - i);
    if (result.hot_set.IsHot(pushed[i])) result.hot_key_updates += j - i;
    i = j;
  }
  result.distinct_keys = counts.size();
  result.key_updates = pushed.size() + result.pushes * model.num_dense_keys();
  result.hot_key_updates += result.pushes * result.hot_dense_keys;

  std::sort(counts.begin(), counts.end(), std::greater<>());
  constexpr int kPoints = 200;
  uint64_t last_rank = 0;
  for (int p = 0; p <= kPoints && !counts.empty(); ++p) {
    const double at =
        std::pow(static_cast<double>(counts.size()), static_cast<double>(p) / kPoints);
    const uint64_t rank = std::clamp<uint64_t>(std::llround(at), 1, counts.size());
    if (rank == last_rank) continue;
    result.updates_by_rank.emplace_back(rank, counts[rank - 1]);
    last_rank = rank;
  }
  return result;
}

}  // namespace libra::train
