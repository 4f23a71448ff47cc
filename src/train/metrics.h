// Quality metrics of a CTR model on held-out rows.
#pragma once

#include <vector>

namespace libra::train {

// Mean log loss of predicted probabilities (clipped to [1e-7, 1 - 1e-7] so
// one confident mistake cannot make it infinite). A NaN prediction counts
// as the clipped worst case, so the loss is always a number.
double LogLoss(const std::vector<float>& labels, const std::vector<float>& predictions);

// Area under the ROC curve: the probability that a random positive is
// ranked above a random negative, ties counting one half. 0.5 if a class is
// missing. NaN predictions rank below every number and tie with each other;
// infinities rank as the extremes they are.
double Auc(const std::vector<float>& labels, const std::vector<float>& predictions);

}  // namespace libra::train
