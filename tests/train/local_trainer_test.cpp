#include "train/local_trainer.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <fstream>
#include <sstream>

#include "common/temp_dir.h"
#include "train/metrics.h"
#include "train/synthetic_data.h"

namespace libra::train {
namespace {

using testing::TempDir;

Dataset Generate(const TempDir& dir, const SyntheticOptions& options, const std::string& name) {
  SyntheticWorkload(options).Write(dir.File(name));
  return ReadDataset(dir.File(name), {.use_cache = false});
}

double BaseRateLogLoss(const Dataset& train, const Dataset& test) {
  double positives = 0;
  for (float y : train.labels) positives += y;
  const float rate = static_cast<float>(positives / train.rows());
  return LogLoss(test.labels, std::vector<float>(test.rows(), rate));
}

// The generator's labels come from a hidden model, so a trained model must
// beat the best constant prediction on held-out rows by a clear margin.
TEST(LocalTrainerTest, LearnsTheHiddenModelOfSyntheticData) {
  TempDir dir;
  Dataset all =
      Generate(dir, {.rows = 30000, .keys = 6000, .fields = 6, .skew = 1.0, .seed = 11}, "d.svm");
  auto [train, test] = SplitHoldout(all, 0.2);
  EXPECT_EQ(test.rows(), 6000u);
  const double base = BaseRateLogLoss(train, test);
  for (ModelKind kind :
       {ModelKind::kLogisticRegression, ModelKind::kFactorizationMachine, ModelKind::kDeepFm}) {
    LocalTrainer trainer({.kind = kind, .embedding_dim = 4, .hidden_units = {8}, .num_fields = 1},
                         {.kind = OptimizerKind::kAdagrad, .learning_rate = 0.05f, .l2 = 1e-4f});
    auto records = trainer.Train(train, test, {.epochs = 2, .batch_size = 100});
    ASSERT_EQ(records.size(), 2u);
    EXPECT_LT(records[0].test.log_loss, base - 0.02) << ModelKindName(kind);
    EXPECT_GT(records[0].test.auc, 0.65) << ModelKindName(kind);
    EXPECT_GT(records[0].samples_per_second, 0);
  }
}

TEST(LocalTrainerTest, EveryOptimizerReducesTheTrainingLoss) {
  TempDir dir;
  Dataset all =
      Generate(dir, {.rows = 20000, .keys = 2000, .fields = 5, .skew = 1.0, .seed = 3}, "d.svm");
  auto [train, test] = SplitHoldout(all, 0.25);
  for (auto [kind, rate] : {std::pair{OptimizerKind::kSgd, 0.5f},
                            {OptimizerKind::kAdagrad, 0.05f},
                            {OptimizerKind::kFtrl, 0.1f}}) {
    LocalTrainer trainer({.kind = ModelKind::kLogisticRegression},
                         {.kind = kind, .learning_rate = rate, .l1 = 0.0f, .l2 = 1e-4f});
    auto records = trainer.Train(train, test, {.epochs = 3, .batch_size = 50});
    EXPECT_LT(records.back().train_log_loss, records.front().train_log_loss)
        << OptimizerKindName(kind);
    EXPECT_LT(records.back().test.log_loss, BaseRateLogLoss(train, test) - 0.02)
        << OptimizerKindName(kind);
  }
}

double LiblinearHeldOutLogLoss(const TempDir& dir, const std::string& train,
                               const std::string& test, double c) {
  const std::string model = dir.File("model"), out = dir.File("predictions");
  const std::string cmd_train = "liblinear-train -q -s 0 -B 1 -c " + std::to_string(c) + " " +
                                train + " " + model + " >/dev/null";
  const std::string cmd_predict =
      "liblinear-predict -b 1 " + test + " " + model + " " + out + " >/dev/null";
  if (std::system(cmd_train.c_str()) != 0 || std::system(cmd_predict.c_str()) != 0) return -1;
  std::ifstream predictions(out);
  std::string header_line, word;
  std::getline(predictions, header_line);
  std::istringstream header(header_line);
  header >> word;  // "labels"
  int positive_column = -1;
  for (int column = 0; header >> word; ++column) {
    if (word == "1") positive_column = column;
  }
  Dataset test_data = ReadDataset(test, {.use_cache = false});
  std::vector<float> p;
  for (std::string line; std::getline(predictions, line);) {
    std::istringstream fields(line);
    double label, prob[2];
    fields >> label >> prob[0] >> prob[1];
    p.push_back(static_cast<float>(prob[positive_column]));
  }
  return LogLoss(test_data.labels, p);
}

// Quality against a standard single-machine solver: LIBLINEAR's L2-regularised
// logistic regression (-s 0, best of a few C) on the same split.
TEST(LocalTrainerTest, LogisticRegressionMatchesLiblinearHeldOutLogLoss) {
  if (std::system("command -v liblinear-train >/dev/null 2>&1") != 0) {
    GTEST_SKIP() << "liblinear-train not installed (apt-get install liblinear-tools)";
  }
  TempDir dir;
  SyntheticWorkload({.rows = 60000, .keys = 20000, .fields = 10, .skew = 0.85, .seed = 5})
      .Write(dir.File("all.svm"));
  Dataset all = ReadDataset(dir.File("all.svm"), {.use_cache = false});
  {
    std::ifstream in(dir.File("all.svm"));
    std::ofstream train_file(dir.File("train.svm")), test_file(dir.File("test.svm"));
    std::string line;
    for (size_t r = 0; std::getline(in, line); ++r) {
      (r < 48000 ? train_file : test_file) << line << "\n";
    }
  }
  double best_liblinear = 1e9;
  for (double c : {0.05, 0.2, 1.0}) {
    const double loss =
        LiblinearHeldOutLogLoss(dir, dir.File("train.svm"), dir.File("test.svm"), c);
    ASSERT_GT(loss, 0) << "liblinear failed for C=" << c;
    best_liblinear = std::min(best_liblinear, loss);
  }
  auto [train, test] = SplitHoldout(all, 0.2);
  LocalTrainer trainer({.kind = ModelKind::kLogisticRegression},
                       {.kind = OptimizerKind::kAdagrad, .learning_rate = 0.05f, .l2 = 1e-4f});
  auto records = trainer.Train(train, test, {.epochs = 6, .batch_size = 100});
  const double ours = records.back().test.log_loss;
  EXPECT_LT(ours, best_liblinear * 1.01) << "libra " << ours << " liblinear " << best_liblinear;
  RecordProperty("libra_log_loss", std::to_string(ours));
  RecordProperty("liblinear_log_loss", std::to_string(best_liblinear));
}

}  // namespace
}  // namespace libra::train
