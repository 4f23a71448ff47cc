#include "train/metrics.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <stdexcept>

namespace libra::train {

double LogLoss(const std::vector<float>& labels, const std::vector<float>& predictions) {
  if (labels.size() != predictions.size()) throw std::invalid_argument("LogLoss: size mismatch");
  if (labels.empty()) return 0.0;
  constexpr double kLow = 1e-7, kHigh = 1.0 - 1e-7;
  double total = 0;
  for (size_t i = 0; i < labels.size(); ++i) {
    const bool positive = labels[i] > 0.5f;
    const double raw = predictions[i];
    // A NaN prediction (a diverged model) counts as the most confident wrong
    // answer the clipping allows, so the loss stays a number and shows it.
    const double p = std::isnan(raw) ? (positive ? kLow : kHigh) : std::clamp(raw, kLow, kHigh);
    total -= positive ? std::log(p) : std::log1p(-p);
  }
  return total / static_cast<double>(labels.size());
}

double Auc(const std::vector<float>& labels, const std::vector<float>& predictions) {
  if (labels.size() != predictions.size()) throw std::invalid_argument("Auc: size mismatch");
  // std::sort needs a strict weak order, which `<` is not once a NaN is in
  // the input (undefined behaviour), and a NaN is never == itself, so a run
  // of ties starting at one would never end. NaN therefore ranks below every
  // number (a diverged model said nothing about that row) and ties with NaN.
  const auto less = [](float a, float b) {
    if (std::isnan(a)) return !std::isnan(b);
    return !std::isnan(b) && a < b;
  };
  const auto tied = [&less](float a, float b) { return !less(a, b) && !less(b, a); };
  std::vector<size_t> order(labels.size());
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(),
            [&](size_t a, size_t b) { return less(predictions[a], predictions[b]); });
  // Mann-Whitney U: sum of the (tie-averaged) ranks of the positives.
  double positive_rank_sum = 0, positives = 0;
  for (size_t i = 0; i < order.size();) {
    size_t j = i + 1;  // a run holds at least its first element
    while (j < order.size() && tied(predictions[order[j]], predictions[order[i]])) ++j;
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
