// AppendInt: its two-digit table and the general path agree with std::to_string.
#include "providers/json_text.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <string>

namespace turnpike::providers {
namespace {

TEST(AppendInt, WritesEveryIntegerAsToString) {
  std::string out;
  for (int64_t value = -1000; value <= 1000; ++value) {
    out.clear();
    AppendInt(out, value);
    ASSERT_EQ(out, std::to_string(value));
  }
  for (const int64_t value : {std::numeric_limits<int64_t>::min(),
                              std::numeric_limits<int64_t>::max(), int64_t{1} << 40}) {
    out = "x";
    AppendInt(out, value);
    EXPECT_EQ(out, "x" + std::to_string(value));
  }
}

}  // namespace
}  // namespace turnpike::providers
