// JSON string escaping shared by the encoders, the mock and the upstream body splice.
#include "common/json_escape.h"

#include <gtest/gtest.h>

namespace turnpike {
namespace {

TEST(JsonEscapeTest, EscapesWhatJsonRequiresAndCopiesTheRest) {
  std::string out;
  AppendJsonEscaped(out, "a\"b\\c\n\r\t\x01\x1f d\xc3\xa9");
  EXPECT_EQ(out, "a\\\"b\\\\c\\n\\r\\t\\u0001\\u001f d\xc3\xa9");
}

TEST(JsonEscapeTest, QuotedAppendsToWhatIsThere) {
  std::string out = "x:";
  AppendJsonQuoted(out, "say \"hi\"");
  EXPECT_EQ(out, "x:\"say \\\"hi\\\"\"");
  out.clear();
  AppendJsonQuoted(out, "");
  EXPECT_EQ(out, "\"\"");
}

}  // namespace
}  // namespace turnpike
