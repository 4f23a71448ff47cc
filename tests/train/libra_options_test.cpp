// The `libra train` Libra flags as the LIBRA_* environment of every node.
#include "train/libra_options.h"

#include <gtest/gtest.h>

#include <stdexcept>

namespace libra::train {
namespace {

TEST(LibraOptionsTest, SamplingCountsTheFractionOfPushesRoundedUpAndHidesTheJoinBehindAsMany) {
  EXPECT_EQ(SampleEpochs(0.05, 200), 20u) << "10 counted, 10 while the controller chooses";
  EXPECT_EQ(SampleEpochs(0.05, 201), 22u);
  EXPECT_EQ(SampleEpochs(0.001, 10), 2u) << "one push counted, one to hide the JOIN behind";
  EXPECT_EQ(SampleEpochs(0.001, 2), 1u) << "at least one sampled push";
  EXPECT_EQ(SampleEpochs(0.05, 18), 2u);
  EXPECT_EQ(SampleEpochs(1.0, 7), 14u) << "every push counted: the job stays plain";
}

TEST(LibraOptionsTest, TheEnvironmentNamesTheSwitchAndHowTheHotSetIsFound) {
  LibraOptions sampled;
  sampled.local_switch = true;
  sampled.sample_fraction = 0.1;
  sampled.capacity = "5000";
  sampled.job_token = "secret";
  const auto env = LibraEnvironment(sampled, "127.0.0.1:5000", "127.0.0.1:5001", 95);
  EXPECT_EQ(env.at("LIBRA_SWITCH"), "127.0.0.1:5000");
  EXPECT_EQ(env.at("LIBRA_SWITCH_CONTROL"), "127.0.0.1:5001");
  EXPECT_EQ(env.at("LIBRA_SAMPLE_EPOCHS"), "20");
  EXPECT_EQ(env.at("LIBRA_CAPACITY"), "5000");
  EXPECT_EQ(env.at("LIBRA_JOB_TOKEN"), "secret");
  EXPECT_EQ(env.count("LIBRA_HOT_SET"), 0u);

  LibraOptions from_file;
  from_file.switch_address = "10.0.0.1:9000";
  from_file.switch_control = "10.0.0.1:9001";
  from_file.hot_set_path = "/data/hot.set";
  const auto file_env = LibraEnvironment(from_file, "10.0.0.1:9000", "10.0.0.1:9001", 95);
  EXPECT_EQ(file_env.at("LIBRA_HOT_SET"), "/data/hot.set");
  EXPECT_EQ(file_env.count("LIBRA_SAMPLE_EPOCHS"), 0u);
  EXPECT_EQ(file_env.count("LIBRA_JOB_TOKEN"), 0u) << "the runtime's default token";
}

TEST(LibraOptionsTest, TheCostModelChoosesTheHotSetUnlessACapacityForcesOne) {
  LibraOptions automatic;
  automatic.local_switch = true;
  automatic.link_mbit = 100;
  const auto env = LibraEnvironment(automatic, "127.0.0.1:5000", "127.0.0.1:5001", 95);
  EXPECT_EQ(env.at("LIBRA_CAPACITY"), "auto");
  EXPECT_EQ(env.at("LIBRA_LINK_MBIT"), "100");
  EXPECT_NO_THROW(automatic.Validate());
  for (const char* bad : {"", "-1", "many", "12x", "99999999999999999999"}) {
    LibraOptions wrong = automatic;
    wrong.capacity = bad;
    EXPECT_THROW(wrong.Validate(), std::invalid_argument) << bad;
  }
  LibraOptions plain;
  plain.capacity = "100";
  EXPECT_THROW(plain.Validate(), std::invalid_argument) << "a capacity needs the switch";
}

TEST(LibraOptionsTest, ConflictingOrIncompleteFlagsAreRefused) {
  LibraOptions off;
  EXPECT_NO_THROW(off.Validate());
  EXPECT_FALSE(off.enabled());
  LibraOptions both;
  both.local_switch = true;
  both.switch_address = "127.0.0.1:1";
  both.switch_control = "127.0.0.1:2";
  EXPECT_THROW(both.Validate(), std::invalid_argument);
  LibraOptions half;
  half.switch_address = "127.0.0.1:1";
  EXPECT_THROW(half.Validate(), std::invalid_argument);
  LibraOptions hot_set_alone;
  hot_set_alone.hot_set_path = "x";
  EXPECT_THROW(hot_set_alone.Validate(), std::invalid_argument);
  LibraOptions missing_file;
  missing_file.local_switch = true;
  missing_file.hot_set_path = "/nonexistent/hot.set";
  EXPECT_ANY_THROW(missing_file.Validate());
}

}  // namespace
}  // namespace libra::train
