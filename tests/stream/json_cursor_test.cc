// The cursor's two ways of skipping a value (stream/json_cursor.h): on plain input the loop
// (SkipPlainValue) must accept exactly what the recursive reader (SkipValueByParts) accepts, and
// stop at the same byte.
#include "stream/json_cursor.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "chunk_payloads.h"

namespace turnpike::stream {
namespace {

struct Skipped {
  bool ok = false;
  size_t at = 0;  // where the cursor stopped, when ok
  bool operator==(const Skipped&) const = default;
};

class TestCursor : public JsonCursor {
 public:
  using JsonCursor::JsonCursor;
  Skipped ByParts(int depth) { return Result(SkipValueByParts(depth)); }
  Skipped InOneLoop(int depth) { return Result(SkipPlainValue(depth)); }

 private:
  Skipped Result(bool ok) { return {ok, ok ? static_cast<size_t>(p_ - begin_) : 0}; }
};

const std::vector<std::string> kValues = {
    R"({"id":"c-1","object":"chat.completion","created":1,"choices":[{"index":0,"message":{"role":"assistant","content":"tok0 tok1"},"logprobs":null,"finish_reason":"stop"}],"usage":{"prompt_tokens":9}})",
    R"([ [], {}, [ {} ], { "a" : [ 1 , -2.5e+3 , 0 , true , false , null ] } , "s" ] tail)",
    R"({"a":{"b":{"c":[[[["d"]]]]}},"e":[{"f":{}},{"g":[]}],"h":-0.0e-0})",
    R"("a string", "another")",
    R"(12345.678E9 ,)",
};

// Both ways, at a starting depth, on `json` when it is plain: counted in `compared`, and in
// `accepted` when both took it.
void ExpectSameSkip(const std::string& json, int depth, size_t& compared, size_t& accepted) {
  std::string unescaped;
  TestCursor by_parts(json, unescaped);
  if (!by_parts.plain()) return;
  TestCursor in_one_loop(json, unescaped);
  ++compared;
  const Skipped expected = by_parts.ByParts(depth);
  EXPECT_EQ(expected, in_one_loop.InOneLoop(depth)) << depth << ": " << json;
  if (expected.ok) ++accepted;
}

TEST(JsonCursorTest, BothWaysOfSkippingReadPlainInputAlike) {
  size_t compared = 0, accepted = 0;
  testing_payloads::ForEachMutation(
      kValues, [&](const std::string& json) { ExpectSameSkip(json, 2, compared, accepted); });
  for (const std::string& chunk : testing_payloads::kDecided) {
    ExpectSameSkip(chunk, 1, compared, accepted);
  }
  // Not vacuous: thousands of plain inputs, a fair share taken and a fair share refused.
  EXPECT_GT(compared, 5000u);
  EXPECT_GT(accepted, 1000u);
  EXPECT_GT(compared - accepted, 1000u);
}

TEST(JsonCursorTest, BothWaysStopAtTheSameDepth) {
  size_t compared = 0, accepted = 0;
  for (int nesting : {1, 2, 30, 62, 63, 64, 65, 70}) {
    for (int depth : {0, 1, 2, 10}) {
      ExpectSameSkip(std::string(nesting, '[') + std::string(nesting, ']'), depth, compared,
                     accepted);
      ExpectSameSkip(std::string(nesting, '[') + "1" + std::string(nesting, ']'), depth, compared,
                     accepted);
      std::string objects;
      for (int i = 0; i < nesting; ++i) objects += R"({"k":)";
      objects += "0" + std::string(nesting, '}');
      ExpectSameSkip(objects, depth, compared, accepted);
    }
  }
  EXPECT_EQ(compared, 8u * 4u * 3u);
  // Not vacuous: both ways refuse nesting past the limit, and take it up to there.
  std::string unescaped;
  const std::string deep = std::string(64, '[') + std::string(64, ']');
  EXPECT_TRUE(TestCursor(deep, unescaped).InOneLoop(0).ok);
  EXPECT_FALSE(
      TestCursor(std::string(65, '[') + "1" + std::string(65, ']'), unescaped).InOneLoop(0).ok);
}

}  // namespace
}  // namespace turnpike::stream
