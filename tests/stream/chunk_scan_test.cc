// ScanChunk (the accumulator's fast path) against ParseChunk (simdjson), which has the final
// say: whenever ScanChunk decides a payload, both must read the same thing.
#include "stream/chunk_scan.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "chunk_payloads.h"
#include "stream/chunk_parse.h"
#include "stream/padded_json.h"

namespace turnpike::stream {
namespace {
using testing_payloads::ForEachMutation;
using testing_payloads::kDecided;
using testing_payloads::kDeferred;

void ExpectSame(const ParsedChunk& fast, const ParsedChunk& slow, const std::string& json) {
  EXPECT_EQ(fast.id, slow.id) << json;
  EXPECT_EQ(fast.model, slow.model) << json;
  EXPECT_EQ(fast.is_error, slow.is_error) << json;
  EXPECT_EQ(fast.error_message, slow.error_message) << json;
  EXPECT_EQ(fast.has_usage, slow.has_usage) << json;
  EXPECT_EQ(fast.usage.prompt_tokens, slow.usage.prompt_tokens) << json;
  EXPECT_EQ(fast.usage.completion_tokens, slow.usage.completion_tokens) << json;
  EXPECT_EQ(fast.usage.total_tokens, slow.usage.total_tokens) << json;
  EXPECT_EQ(fast.usage.cached_tokens, slow.usage.cached_tokens) << json;
  ASSERT_EQ(fast.choices.size(), slow.choices.size()) << json;
  for (size_t i = 0; i < fast.choices.size(); ++i) {
    EXPECT_EQ(fast.choices[i].index, slow.choices[i].index) << json;
    EXPECT_EQ(fast.choices[i].role, slow.choices[i].role) << json;
    EXPECT_EQ(fast.choices[i].content, slow.choices[i].content) << json;
    EXPECT_EQ(fast.choices[i].finish_reason, slow.choices[i].finish_reason) << json;
  }
  ASSERT_EQ(fast.tool_calls.size(), slow.tool_calls.size()) << json;
  for (size_t i = 0; i < fast.tool_calls.size(); ++i) {
    EXPECT_EQ(fast.tool_calls[i].choice_slot, slow.tool_calls[i].choice_slot) << json;
    EXPECT_EQ(fast.tool_calls[i].index, slow.tool_calls[i].index) << json;
    EXPECT_EQ(fast.tool_calls[i].id, slow.tool_calls[i].id) << json;
    EXPECT_EQ(fast.tool_calls[i].type, slow.tool_calls[i].type) << json;
    EXPECT_EQ(fast.tool_calls[i].name, slow.tool_calls[i].name) << json;
    EXPECT_EQ(fast.tool_calls[i].arguments, slow.tool_calls[i].arguments) << json;
  }
}

class ChunkScanTest : public ::testing::Test {
 protected:
  bool Fast(const std::string& json) {
    fast_.Clear();
    return ScanChunk(json, fast_, unescaped_);
  }
  bool Slow(const std::string& json) {
    slow_.Clear();
    simdjson::ondemand::document doc;
    return parser_.Iterate(json).get(doc) == simdjson::SUCCESS && ParseChunk(doc, slow_);
  }

  std::string unescaped_;
  ParsedChunk fast_, slow_;
  PaddedJsonParser parser_;
};

TEST_F(ChunkScanTest, DecidesUsualPayloadsAsSimdjsonReadsThem) {
  for (const std::string& json : kDecided) {
    ASSERT_TRUE(Fast(json)) << json;
    ASSERT_TRUE(Slow(json)) << json;
    ExpectSame(fast_, slow_, json);
  }
}

TEST_F(ChunkScanTest, ReadsValuesItself) {
  ASSERT_TRUE(Fast(kDecided[11]));
  ASSERT_EQ(fast_.choices.size(), 1u);
  EXPECT_EQ(fast_.choices[0].content, "caf\xc3\xa9 \xe4\xb8\xad \xf0\x9f\x98\x80 A");
  ASSERT_TRUE(Fast(kDecided[5]));
  EXPECT_TRUE(fast_.has_usage);
  EXPECT_EQ(fast_.usage.cached_tokens, 64);
  EXPECT_EQ(fast_.usage.total_tokens, 165);
}

TEST_F(ChunkScanTest, LeavesMalformedAndUnusualPayloadsToSimdjson) {
  for (const std::string& json : kDeferred) EXPECT_FALSE(Fast(json)) << json;
}

// Every decided payload, truncated, with one byte deleted, and with one byte replaced by each
// of a set of troublemakers: whatever the fast path still decides, simdjson must read the same.
TEST_F(ChunkScanTest, MutationsNeverDisagreeWithSimdjson) {
  size_t decided = 0, deferred = 0;
  ForEachMutation(kDecided, [&](const std::string& json) {
    if (!Fast(json)) {
      ++deferred;
      return;
    }
    ++decided;
    ASSERT_TRUE(Slow(json)) << "fast path accepted what simdjson rejects: " << json;
    ExpectSame(fast_, slow_, json);
  });
  // Not vacuous: a fair share of the mutations is decided by each side.
  EXPECT_GT(decided, 1000u);
  EXPECT_GT(deferred, 1000u);
}

// A stream's chunks after the first are scanned from the end of its lead (ChunkLead): every
// payload and mutation read so must read as the whole payload does, decided or not.
TEST_F(ChunkScanTest, AChunkAfterItsLeadReadsAsTheWholeChunk) {
  ParsedChunk after;
  std::string unescaped;
  testing_payloads::ExpectReadAfterLeadAsWhole(
      kDecided,
      [&](const std::string& json, ChunkLead& lead) {
        after.Clear();
        return ScanChunk(json, after, unescaped, lead);
      },
      [&](const std::string& json) { return Fast(json); },
      [&](const std::string& json) {
        EXPECT_EQ(after.plain, fast_.plain) << json;
        ExpectSame(after, fast_, json);
      });
}

TEST_F(ChunkScanTest, ALeadEndsAtTheFirstChoicesOfAPlainChunkWithNothingElseRead) {
  const std::string lead_bytes =
      R"({"id":"c-1","object":"chat.completion.chunk","created":1,"model":"m","system_fingerprint":"fp","choices":[)";
  const std::vector<std::string> stream = {
      lead_bytes +
          R"({"index":0,"delta":{"role":"assistant","content":""},"finish_reason":null}],"usage":null})",
      lead_bytes + R"({"index":0,"delta":{"content":"tok0 "},"finish_reason":null}],"usage":null})",
      lead_bytes + R"({"index":0,"delta":{},"finish_reason":"stop"}],"usage":null})",
      lead_bytes + R"(],"usage":{"prompt_tokens":9,"completion_tokens":2,"total_tokens":11}})",
      lead_bytes + R"(],"id":"c-2","usage":null})",
  };
  ChunkLead lead;
  ParsedChunk out;
  for (const std::string& json : stream) {
    out.Clear();
    ASSERT_TRUE(ScanChunk(json, out, unescaped_, lead)) << json;
    EXPECT_EQ(lead.bytes(), lead_bytes);
    ASSERT_TRUE(Fast(json));
    ExpectSame(out, fast_, json);
  }
  EXPECT_EQ(out.id, "c-2");  // a member after the lead is still read
  EXPECT_EQ(out.model, "m");

  // No lead: a member before the choices that has to be read, an escape, no choices, too long.
  for (const std::string& json : {
           std::string(R"({"usage":null,"choices":[]})"),
           std::string(R"({"error":null,"choices":[]})"),
           std::string(R"({"id":"c\u002d1","choices":[]})"),
           std::string(R"({"id":"c-1","choices":null})"),
           std::string(R"({"id":"c-1"})"),
           R"({"id":")" + std::string(ChunkLead::kMaxBytes, 'x') + R"(","choices":[]})",
       }) {
    out.Clear();
    ASSERT_TRUE(ScanChunk(json, out, unescaped_, lead)) << json;
    EXPECT_EQ(lead.size(), 0u) << json;
  }
}

// ScanTailUsage (ExtractUsage's fast path) against ParseBodyUsage. Its contract covers valid
// JSON only (it does not read the bytes before the usage), so simdjson's DOM, which validates
// the whole body, says which bodies are compared; and a body repeating "usage" is the one
// documented exception.
class TailUsageTest : public ::testing::Test {
 protected:
  bool Fast(const std::string& json) {
    fast_ = Usage{.prompt_tokens = 99};  // overwritten whenever it decides
    return ScanTailUsage(json, fast_);
  }
  Usage Slow(const std::string& json) {
    simdjson::ondemand::document doc;
    if (parser_.Iterate(json).get(doc) != simdjson::SUCCESS) return Usage{};
    return ParseBodyUsage(doc);
  }
  // Valid JSON, with at most one top-level member named "usage".
  bool Covered(const std::string& json) {
    simdjson::dom::element root;
    if (dom_.parse(json).get(root) != simdjson::SUCCESS) return false;
    simdjson::dom::object object;
    if (root.get_object().get(object) != simdjson::SUCCESS) return true;
    int usages = 0;
    for (auto field : object) usages += field.key == "usage" ? 1 : 0;
    return usages <= 1;
  }
  static void ExpectSameUsage(const Usage& fast, const Usage& slow, const std::string& json) {
    EXPECT_EQ(fast.prompt_tokens, slow.prompt_tokens) << json;
    EXPECT_EQ(fast.completion_tokens, slow.completion_tokens) << json;
    EXPECT_EQ(fast.total_tokens, slow.total_tokens) << json;
    EXPECT_EQ(fast.cached_tokens, slow.cached_tokens) << json;
    EXPECT_EQ(fast.reasoning_tokens, slow.reasoning_tokens) << json;
  }

  Usage fast_;
  PaddedJsonParser parser_;
  simdjson::dom::parser dom_;
};

// Whole chat.completion bodies: the mock's, OpenAI's (members after the usage, details), a
// pretty-printed one, one whose content is escaped, one with an escape after the usage, and the
// chunks above (each also an object whose "usage" is read the same way) that end with theirs.
std::vector<std::string> TailBodies() {
  std::vector<std::string> bodies = {
      R"({"id":"chatcmpl-mock-0-1","object":"chat.completion","created":1,"model":"m","system_fingerprint":"fp_mock","choices":[{"index":0,"message":{"role":"assistant","content":"tok0 tok1 ","refusal":null},"logprobs":null,"finish_reason":"stop"}],"usage":{"prompt_tokens":14,"completion_tokens":20,"total_tokens":34}})",
      R"({"id":"chatcmpl-B","object":"chat.completion","model":"gpt-4o","choices":[{"index":0,"message":{"role":"assistant","content":null,"tool_calls":[{"id":"call_1","type":"function","function":{"name":"f","arguments":"{\"usage\":1}"}}]},"finish_reason":"tool_calls"}],"usage":{"prompt_tokens":120,"completion_tokens":45,"total_tokens":165,"prompt_tokens_details":{"cached_tokens":64,"audio_tokens":0},"completion_tokens_details":{"reasoning_tokens":7,"audio_tokens":0,"accepted_prediction_tokens":0}},"service_tier":"default","system_fingerprint":"fp_1"})",
      "{\n  \"choices\": [],\n  \"usage\" : {\n    \"prompt_tokens\": 3,\n    "
      "\"total_tokens\": 3\n  },\n  \"x\": [true, null, -1.5e3]\n}\n",
      R"({"choices":[],"usage":null})",
      R"({"usage":{"total_tokens":4,"total_tokens":5}})",
      "{\"choices\":[{\"message\":{\"content\":\"caf\xc3\xa9 "
      "\\n\"}}],\"usage\":{\"completion_tokens\":4}}",
      R"({"usage":{"prompt_tokens":-0,"completion_tokens":999999999999999999},"note":"caf\u00e9"})",
  };
  for (const std::string& chunk : kDecided) {
    if (chunk.find("\"usage\"") != std::string::npos) bodies.push_back(chunk);
  }
  return bodies;
}

TEST_F(TailUsageTest, DecidesUsualBodiesAsSimdjsonReadsThem) {
  for (const std::string& json : TailBodies()) {
    ASSERT_TRUE(Covered(json)) << json;
    ASSERT_TRUE(Fast(json)) << json;
    ExpectSameUsage(fast_, Slow(json), json);
  }
  ASSERT_TRUE(Fast(TailBodies()[1]));
  EXPECT_EQ(fast_.cached_tokens, 64);
  EXPECT_EQ(fast_.reasoning_tokens, 7);
  EXPECT_EQ(fast_.total_tokens, 165);
  ASSERT_TRUE(Fast(TailBodies()[3]));
  EXPECT_FALSE(fast_.present());
  // Long, and escaped: the tail alone is read.
  const std::string long_escaped = "{\"choices\":[{\"message\":{\"content\":\"\\n" +
                                   std::string(70000, 'a') +
                                   "\"}}],\"usage\":{\"completion_tokens\":4}}";
  ASSERT_TRUE(Fast(long_escaped));
  EXPECT_EQ(fast_.completion_tokens, 4);
  EXPECT_EQ(Slow(long_escaped).completion_tokens, 4);
}

TEST_F(TailUsageTest, LeavesOtherTailsToSimdjson) {
  const std::vector<std::string> deferred = {
      "",
      "{}",
      R"({"id":"x","choices":[]})",
      // Not at the top level, or not the top-level object's last "usage"-named bytes.
      R"({"a":{"usage":{"total_tokens":1}}})",
      R"([{"usage":{"total_tokens":1}}])",
      R"({"usage":{"total_tokens":1},"tier":"usage"})",
      // A key that ends in usage after an escaped quote: `"usage`.
      R"({"\"usage":{"total_tokens":1}})",
      // Types ParseBodyUsage refuses, and malformed tails.
      R"({"usage":{"total_tokens":"9"}})",
      R"({"usage":{"total_tokens":1.0}})",
      R"({"usage":[]})",
      R"({"usage":{"total_tokens":1}} trailing)",
      R"({"usage":{"total_tokens":1},})",
      R"({"usage":{"total_tokens":01}})",
      "{\"usage\":{\"total_tokens\":1},\"a\":\"\xff\"}",
  };
  for (const std::string& json : deferred) EXPECT_FALSE(Fast(json)) << json;
  EXPECT_EQ(Slow(R"({"usage":{"total_tokens":1},"tier":"usage"})").total_tokens, 1);
  EXPECT_FALSE(Slow(R"({"\"usage":{"total_tokens":1}})").present());
}

// What the contract leaves out, pinned: the bytes before the usage are not read, and a repeated
// "usage" counts as its last copy (so does ParseBodyUsage, unless an earlier copy is malformed).
TEST_F(TailUsageTest, ReadsTheTailAloneAndTheLastRepeatedUsage) {
  const std::string malformed_before = "{\"choices\":\"\xff\",\"usage\":{\"total_tokens\":5}}";
  ASSERT_TRUE(Fast(malformed_before));
  EXPECT_EQ(fast_.total_tokens, 5);
  EXPECT_FALSE(Slow(malformed_before).present());

  const std::string repeated = R"({"usage":{"prompt_tokens":1},"usage":{"completion_tokens":2}})";
  ASSERT_TRUE(Fast(repeated));
  ExpectSameUsage(fast_, Slow(repeated), repeated);
  EXPECT_EQ(fast_.prompt_tokens, -1);
  EXPECT_EQ(fast_.completion_tokens, 2);
  const std::string earlier_malformed =
      R"({"usage":{"prompt_tokens":"1"},"usage":{"total_tokens":2}})";
  ASSERT_TRUE(Fast(earlier_malformed));
  EXPECT_EQ(fast_.total_tokens, 2);
  EXPECT_FALSE(Slow(earlier_malformed).present());
}

// Every body above, truncated, with one byte deleted, and with one byte replaced by each of a
// set of troublemakers: whenever the result is still valid JSON and the tail decides it,
// simdjson must read the same usage.
TEST_F(TailUsageTest, MutationsNeverDisagreeWithSimdjson) {
  size_t decided = 0, deferred = 0;
  ForEachMutation(TailBodies(), [&](const std::string& json) {
    if (!Fast(json)) {
      ++deferred;
      return;
    }
    if (!Covered(json)) return;
    ++decided;
    ExpectSameUsage(fast_, Slow(json), json);
  });
  // Not vacuous: a fair share of the mutations is decided by each side.
  EXPECT_GT(decided, 1000u);
  EXPECT_GT(deferred, 1000u);
}

}  // namespace
}  // namespace turnpike::stream
