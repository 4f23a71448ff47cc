#include "train/metrics.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <stdexcept>

namespace libra::train {

double LogLoss(const std::vector<float>& labels, const std::vector<float>& predictions) {
  if (labels.size() != predictions.size()) throw std::invalid_argument("LogLoss: size mismatch");
  if (labels.empty()) return 0.0;
  double total = 0;
  for (size_t i = 0; i < labels.size(); ++i) {
    const double p = std::clamp(static_cast<double>(predictions[i]), 1e-7, 1.0 - 1e-7);
    total -= labels[i] > 0.5f ? std::log(p) : std::log1p(-p);
  }
  return total / static_cast<double>(labels.size());
}

double Auc(const std::vector<float>& labels, const std::vector<float>& predictions) {
  if (labels.size() != predictions.size()) throw std::invalid_argument("Auc: size mismatch");
  std::vector<size_t> order(labels.size());
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(),
            [&](size_t a, size_t b) { return predictions[a] < predictions[b]; });
  // Mann-Whitney U: sum of the (tie-averaged) ranks of the positives.
  double positive_rank_sum = 0, positives = 0;
  for (size_t i = 0; i < order.size();) {
    size_t j = i;
    while (j < order.size() && predictions[order[j]] == predictions[order[i]]) ++j;
    const double average_rank = 0.5 * static_cast<double>(i + 1 + j);  // ranks i+1 .. j
    for (size_t k = i; k < j; ++k) {
      if (labels[order[k]] > 0.5f) {
        positive_rank_sum += average_rank;
        positives += 1;
      }
    }
    i = j;
  }
  const double negatives = static_cast<double>(labels.size()) - positives;
  if (positives == 0 || negatives == 0) return 0.5;
  return (positive_rank_sum - positives * (positives + 1) / 2) / (positives * negatives);
}

}  // namespace libra::train
