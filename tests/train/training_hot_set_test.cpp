#include "train/training_hot_set.h"

#include <gtest/gtest.h>

#include "common/temp_dir.h"
#include "train/synthetic_data.h"

namespace libra::train {
namespace {

// 20,000 synthetic rows (26 fields, 100,000 keys, skew 0.85) as training rows.
Dataset SmallJob(const testing::TempDir& dir) {
  SyntheticOptions synthetic;
  synthetic.rows = 20000;
  synthetic.keys = 100000;
  synthetic.seed = 3;
  const std::string path = dir.File("data.libsvm");
  SyntheticWorkload(synthetic).Write(path);
  return ReadDataset(path);
}

TEST(TrainingHotSetTest, TheCostModelKeepsAPrefixOnSlowLinksAndNothingOnFastOnes) {
  testing::TempDir dir;
  const Dataset data = SmallJob(dir);
  const auto model = CreateModel(ModelConfig{});
  TrainingHotSetOptions options;
  options.capacity_cells = 30000;
  options.workers = 4;
  options.batch = 1000;
  const TrainingHotSet forced = FindTrainingHotSet(data, *model, options);
  ASSERT_GT(forced.hot_set.size(), 1000u);
  EXPECT_TRUE(forced.cost_why.empty()) << "no model without choose_by_cost";

  options.choose_by_cost = true;
  options.link_mbit = 20;
  const TrainingHotSet slow = FindTrainingHotSet(data, *model, options);
  EXPECT_GT(slow.hot_set.size(), 0u) << slow.cost_why;
  EXPECT_LE(slow.hot_set.size(), forced.hot_set.size());
  EXPECT_EQ(slow.hot_set.size(), slow.cost.keys);
  EXPECT_LT(slow.cost.libra_seconds, slow.cost.plain_seconds);
  // The prefix: every key it keeps is one of the forced set's.
  for (const hot::HotKey& k : slow.hot_set.keys()) EXPECT_TRUE(forced.hot_set.IsHot(k.key));

  options.link_mbit = 100000;
  const TrainingHotSet fast = FindTrainingHotSet(data, *model, options);
  EXPECT_EQ(fast.hot_set.size(), 0u);
  EXPECT_NE(fast.cost_why.find("no hot set pays"), std::string::npos) << fast.cost_why;
}

}  // namespace
}  // namespace libra::train
