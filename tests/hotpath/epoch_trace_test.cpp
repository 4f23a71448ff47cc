#include "hotpath/node/epoch_trace.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <optional>
#include <regex>
#include <string>

namespace libra::hotpath {
namespace {

// Restores LIBRA_TRACE as the test found it.
class TraceVariable {
 public:
  TraceVariable() {
    const char* old = std::getenv("LIBRA_TRACE");
    if (old != nullptr) old_ = old;
  }
  ~TraceVariable() {
    if (old_) {
      setenv("LIBRA_TRACE", old_->c_str(), 1);
    } else {
      unsetenv("LIBRA_TRACE");
    }
  }

 private:
  std::optional<std::string> old_;
};

TEST(EpochTrace, WritesOneLinePerEventWhenLibraTraceIsSet) {
  TraceVariable restore;
  setenv("LIBRA_TRACE", "1", 1);
  testing::internal::CaptureStderr();
  TraceEpoch("collected", 3, 41);
  TraceEpoch("published", 3, 41);
  const std::string out = testing::internal::GetCapturedStderr();
  std::smatch m;
  const std::regex lines(R"(TRACE collected 3 41 (\d+)\nTRACE published 3 41 (\d+)\n)");
  ASSERT_TRUE(std::regex_match(out, m, lines)) << out;
  EXPECT_LE(std::stoll(m[1]), std::stoll(m[2]));  // one monotonic clock
}

TEST(EpochTrace, IsSilentWithoutItOrWithZero) {
  TraceVariable restore;
  for (const char* value : {"", "0"}) {
    setenv("LIBRA_TRACE", value, 1);
    EXPECT_FALSE(EpochTraceOn());
  }
  unsetenv("LIBRA_TRACE");
  EXPECT_FALSE(EpochTraceOn());
  testing::internal::CaptureStderr();
  TraceEpoch("push", 0, 1);
  EXPECT_EQ(testing::internal::GetCapturedStderr(), "");
}

}  // namespace
}  // namespace libra::hotpath
