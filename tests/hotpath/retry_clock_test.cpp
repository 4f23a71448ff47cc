#include "hotpath/node/retry_clock.h"

#include <gtest/gtest.h>

#include <stdexcept>

namespace libra::hotpath {
namespace {

using std::chrono::microseconds;
using std::chrono::milliseconds;

RetryPolicy Policy() {
  RetryPolicy p;
  p.initial_timeout = milliseconds(5);
  p.min_timeout = milliseconds(5);
  p.max_timeout = milliseconds(400);
  p.max_retries = 3;
  return p;
}

TEST(RetryClockTest, BacksOffAndGivesUpAfterTheRetries) {
  RetryClock clock(Policy());
  EXPECT_EQ(clock.timeout(), milliseconds(5));
  EXPECT_TRUE(clock.OnTimeout());
  EXPECT_EQ(clock.timeout(), milliseconds(10));
  EXPECT_TRUE(clock.OnTimeout());
  EXPECT_TRUE(clock.OnTimeout());
  EXPECT_FALSE(clock.OnTimeout());
  clock.OnProgress();
  EXPECT_EQ(clock.timeouts_in_a_row(), 0);
}

TEST(RetryClockTest, FollowsTheMeasuredRoundTrip) {
  RetryClock clock(Policy());
  clock.OnRttSample(milliseconds(40));  // srtt 40, rttvar 20: 40 + 80
  EXPECT_EQ(clock.base_timeout(), milliseconds(120));
  EXPECT_EQ(clock.timeout(), milliseconds(120));
  for (int i = 0; i < 50; ++i) clock.OnRttSample(milliseconds(40));
  EXPECT_LT(clock.base_timeout(), milliseconds(45));  // the variation decays
  EXPECT_GE(clock.base_timeout(), milliseconds(40));
}

TEST(RetryClockTest, StaysWithinThePolicy) {
  RetryClock clock(Policy());
  clock.OnRttSample(microseconds(10));
  EXPECT_EQ(clock.base_timeout(), milliseconds(5));
  clock.OnRttSample(milliseconds(5000));
  EXPECT_EQ(clock.base_timeout(), milliseconds(400));
}

TEST(RetryClockTest, AMeasuredRoundTripGoesBelowTheInitialTimeoutDownToTheFloor) {
  RetryPolicy policy;  // the engines' own: 2 ms before a sample, 0.5 ms floor
  RetryClock clock(policy);
  EXPECT_EQ(clock.timeout(), milliseconds(2));
  clock.OnRttSample(microseconds(200));  // srtt 200, rttvar 100: 200 + 400
  EXPECT_EQ(clock.base_timeout(), microseconds(600));
  for (int i = 0; i < 50; ++i) clock.OnRttSample(microseconds(40));
  EXPECT_EQ(clock.base_timeout(), policy.min_timeout);
}

TEST(RetryClockTest, APolicyWhoseFloorIsAboveItsStartIsRefused) {
  RetryPolicy policy;
  policy.min_timeout = milliseconds(3);
  EXPECT_THROW(policy.Validate(), std::invalid_argument);
  policy.min_timeout = microseconds(0);
  EXPECT_THROW(policy.Validate(), std::invalid_argument);
}

TEST(RetryClockTest, AnAnswerToAResendKeepsTheBackedOffTimeout) {
  // Karn's rule: without a fresh sample, progress does not shorten the timer.
  RetryClock clock(Policy());
  ASSERT_TRUE(clock.OnTimeout());
  ASSERT_TRUE(clock.OnTimeout());
  EXPECT_EQ(clock.timeout(), milliseconds(20));
  clock.OnProgress();
  EXPECT_EQ(clock.timeout(), milliseconds(20));
  clock.OnRttSample(milliseconds(2));  // srtt 2, rttvar 1: 2 + 4
  EXPECT_EQ(clock.timeout(), milliseconds(6));
}

}  // namespace
}  // namespace libra::hotpath
