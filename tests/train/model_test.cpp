#include "train/model.h"

#include <gtest/gtest.h>

#include <cmath>

#include "train/batch.h"
#include "train/random.h"

namespace libra::train {
namespace {

// Four rows over three fields; keys repeat across rows and within a field so
// that gradients of shared parameters are summed.
Dataset SmallData() {
  Dataset d;
  d.num_fields = 3;
  auto row = [&](float label, std::vector<std::tuple<FeatureKey, float, uint32_t>> features) {
    for (auto [key, value, field] : features) d.AddFeature(key, value, field);
    d.EndRow(label);
  };
  row(1, {{1, 1.0f, 0}, {5, 0.5f, 1}, {9, 2.0f, 2}});
  row(0, {{1, 1.0f, 0}, {6, 1.5f, 1}, {7, -1.0f, 1}});
  row(1, {{2, 0.7f, 0}, {5, 1.0f, 1}, {9, 1.0f, 2}, {10, 0.3f, 2}});
  row(0, {{3, 1.0f, 0}});
  return d;
}

double MeanLoss(const Model& model, const Batch& batch, const std::vector<float>& params) {
  std::vector<float> predictions(batch.rows());
  return model.Evaluate(batch, params.data(), predictions.data(), nullptr) /
         static_cast<double>(batch.rows());
}

void CheckGradients(const ModelConfig& config) {
  auto model = CreateModel(config);
  Dataset data = SmallData();
  Batch batch;
  MakeBatch(data, 0, data.rows(), model->num_dense_keys(), &batch);
  const uint32_t length = model->value_length();
  std::vector<float> params(batch.keys.size() * length);
  for (size_t k = 0; k < batch.keys.size(); ++k) {
    model->InitialValue(batch.keys[k], &params[k * length]);
  }
  // Move away from the (often zero) initial point so every term matters.
  SplitMix64 rng(3);
  for (float& p : params) p += static_cast<float>(0.3 * rng.Normal());

  std::vector<float> predictions(batch.rows()), gradients(params.size());
  model->Evaluate(batch, params.data(), predictions.data(), gradients.data());
  size_t checked_nonzero = 0;
  for (size_t j = 0; j < params.size(); ++j) {
    const float saved = params[j];
    const float step = 2e-3f;  // small enough not to cross a ReLU kink
    params[j] = saved + step;
    const double up = MeanLoss(*model, batch, params);
    params[j] = saved - step;
    const double down = MeanLoss(*model, batch, params);
    params[j] = saved;
    const double numeric = (up - down) / (2 * step);
    EXPECT_NEAR(gradients[j], numeric, 2e-3 + 2e-2 * std::fabs(numeric))
        << ModelKindName(config.kind) << " parameter " << j << " (key slot " << j / length
        << ", value " << j % length << ")";
    checked_nonzero += std::fabs(numeric) > 1e-4;
  }
  EXPECT_GT(checked_nonzero, params.size() / 3);
}

TEST(ModelTest, LogisticRegressionGradientMatchesFiniteDifferences) {
  CheckGradients({.kind = ModelKind::kLogisticRegression});
}

TEST(ModelTest, FactorizationMachineGradientMatchesFiniteDifferences) {
  CheckGradients({.kind = ModelKind::kFactorizationMachine, .embedding_dim = 4});
}

TEST(ModelTest, DeepFmGradientMatchesFiniteDifferences) {
  CheckGradients(
      {.kind = ModelKind::kDeepFm, .embedding_dim = 3, .hidden_units = {5, 4}, .num_fields = 3});
}

TEST(ModelTest, ValueLengthsAndDenseKeys) {
  auto lr = CreateModel({.kind = ModelKind::kLogisticRegression});
  EXPECT_EQ(lr->value_length(), 1u);
  EXPECT_EQ(lr->num_dense_keys(), 1u);
  auto fm = CreateModel({.kind = ModelKind::kFactorizationMachine, .embedding_dim = 8});
  EXPECT_EQ(fm->value_length(), 9u);
  auto deep = CreateModel(
      {.kind = ModelKind::kDeepFm, .embedding_dim = 8, .hidden_units = {16}, .num_fields = 4});
  // bias + (32*16 + 16) + (16 + 1) = 546 values over 9-value keys.
  EXPECT_EQ(deep->num_dense_parameters(), 546u);
  EXPECT_EQ(deep->num_dense_keys(), 61u);
  EXPECT_THROW(ParseModelKind("svm"), std::invalid_argument);
}

TEST(ModelTest, BatchKeysAreSortedUniqueAndIncludeDenseKeys) {
  Dataset data = SmallData();
  Batch batch;
  MakeBatch(data, 0, data.rows(), 2, &batch);
  EXPECT_TRUE(std::is_sorted(batch.keys.begin(), batch.keys.end()));
  EXPECT_EQ(std::adjacent_find(batch.keys.begin(), batch.keys.end()), batch.keys.end());
  EXPECT_EQ(batch.keys.size(), 8u + 2u);  // keys 1, 2, 3, 5, 6, 7, 9, 10 plus two dense
  for (size_t i = 0; i < batch.slots.size(); ++i) {
    EXPECT_EQ(batch.keys[batch.slots[i]], ParameterKeyOf(data.keys[i]));
  }
  for (uint32_t i = 0; i < 2; ++i) {
    EXPECT_EQ(DenseIndexOf(batch.keys[batch.dense_slots[i]], 2), i);
  }
  EXPECT_EQ(DenseIndexOf(ParameterKeyOf(5), 2), -1);
}

// Large enough for MakeBatch's bucketed sort, with keys repeated many times
// (a hot key in every row) and rows picked out of order.
TEST(ModelTest, LargeBatchesGiveEveryOccurrenceTheSlotOfItsKey) {
  Dataset data;
  uint64_t state = 7;
  for (int r = 0; r < 3000; ++r) {
    data.AddFeature(1, 1.0f, 0);  // in every row
    for (uint32_t f = 1; f < 6; ++f) {
      state = state * 6364136223846793005ULL + 1442695040888963407ULL;
      data.AddFeature((state >> 33) % (f * 500) + f * 100000, 1.0f, f);
    }
    data.EndRow(r % 2);
  }
  std::vector<uint32_t> rows;
  for (uint32_t r = 2999; r > 1000; r -= 3) rows.push_back(r);
  Batch batch;
  MakeBatch(data, rows, 3, &batch);

  std::vector<ParameterKey> expected_keys;
  for (uint32_t r : rows) {
    for (uint64_t i = data.row_begin[r]; i < data.row_begin[r + 1]; ++i)
      expected_keys.push_back(ParameterKeyOf(data.keys[i]));
  }
  const std::vector<ParameterKey> occurrences = expected_keys;
  for (uint32_t i = 0; i < 3; ++i) expected_keys.push_back(DenseParameterKey(i));
  std::sort(expected_keys.begin(), expected_keys.end());
  expected_keys.erase(std::unique(expected_keys.begin(), expected_keys.end()), expected_keys.end());
  EXPECT_EQ(batch.keys, expected_keys);
  ASSERT_EQ(batch.slots.size(), occurrences.size());
  for (size_t i = 0; i < occurrences.size(); ++i) {
    ASSERT_EQ(batch.keys[batch.slots[i]], occurrences[i]) << "occurrence " << i;
  }
  for (uint32_t i = 0; i < 3; ++i)
    EXPECT_EQ(batch.keys[batch.dense_slots[i]], DenseParameterKey(i));
  EXPECT_EQ(batch.rows(), rows.size());
  EXPECT_EQ(batch.row_begin.back(), occurrences.size());

  // The same batch again, reusing the memory: the same result.
  Batch again = batch;
  MakeBatch(data, rows, 3, &again);
  EXPECT_EQ(again.keys, batch.keys);
  EXPECT_EQ(again.slots, batch.slots);
}

TEST(ModelTest, InitialValuesAreDeterministicAndBreakSymmetry) {
  auto fm = CreateModel({.kind = ModelKind::kFactorizationMachine, .embedding_dim = 4});
  float a[5], b[5], c[5];
  fm->InitialValue(ParameterKeyOf(1), a);
  fm->InitialValue(ParameterKeyOf(1), b);
  fm->InitialValue(ParameterKeyOf(2), c);
  EXPECT_EQ(std::vector<float>(a, a + 5), std::vector<float>(b, b + 5));
  EXPECT_EQ(a[0], 0.0f);
  EXPECT_NE(a[1], c[1]);
  EXPECT_NE(a[1], 0.0f);
}

}  // namespace
}  // namespace libra::train
