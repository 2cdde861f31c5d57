// OpenAI chunk payloads for the one-pass scanner's differential tests (chunk_scan_test.cc: the
// accumulator's read; providers/openai/stream_decode_test.cc: the stream decoder's): the ones
// its fast paths must decide, the ones they must leave to simdjson, and their mutations.
#pragma once

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "stream/chunk_scan.h"

namespace turnpike::stream::testing_payloads {

// Payloads the fast path must decide itself (valid JSON of the usual shapes and then some).
inline const std::vector<std::string> kDecided = {
    // OpenAI, as in chat_accumulator_test.cc.
    R"({"id":"chatcmpl-9x","object":"chat.completion.chunk","created":1718000000,"model":"gpt-4o-2024-08-06","system_fingerprint":"fp_1","choices":[{"index":0,"delta":{"role":"assistant","content":"","refusal":null},"logprobs":null,"finish_reason":null}],"usage":null})",
    R"({"id":"chatcmpl-9x","object":"chat.completion.chunk","created":1718000000,"model":"gpt-4o-2024-08-06","choices":[{"index":0,"delta":{"content":"check \"both\"."},"logprobs":null,"finish_reason":null}],"usage":null})",
    R"({"id":"chatcmpl-9x","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"call_A","type":"function","function":{"name":"get_weather","arguments":""}}]},"logprobs":null,"finish_reason":null}],"usage":null})",
    R"({"id":"chatcmpl-9x","choices":[{"index":0,"delta":{"tool_calls":[{"index":1,"function":{"arguments":"{\"tz\":"}}]},"finish_reason":null}]})",
    R"({"id":"chatcmpl-9x","choices":[{"index":0,"delta":{},"logprobs":null,"finish_reason":"tool_calls"}],"usage":null})",
    R"({"id":"chatcmpl-9x","choices":[],"usage":{"prompt_tokens":120,"completion_tokens":45,"total_tokens":165,"prompt_tokens_details":{"cached_tokens":64,"audio_tokens":0},"completion_tokens_details":{"reasoning_tokens":0}}})",
    // The mock provider's token chunk.
    R"({"id":"chatcmpl-mock-1","object":"chat.completion.chunk","created":1,"model":"bench-model","choices":[{"index":0,"delta":{"content":" tok3"},"logprobs":null,"finish_reason":null}],"usage":null})",
    // Errors.
    R"({"error":{"message":"The server had an error.","type":"server_error","param":null,"code":null}})",
    R"({"error":"overloaded"})",
    R"({"error":null})",
    // Escapes, raw UTF-8, \u escapes and a surrogate pair.
    R"({"choices":[{"index":0,"delta":{"content":"a\nb\tc\\d\/e\"f\bg\fh\ri"}}]})",
    R"({"choices":[{"index":0,"delta":{"content":"caf\u00e9 \u4e2d \ud83d\ude00 \u0041"}}]})",
    "{\"choices\":[{\"index\":0,\"delta\":{\"content\":\"caf\xc3\xa9 \xe4\xb8\xad "
    "\xf0\x9f\x98\x80\"}}]}",
    R"({"id":"a\u0000b","model":"m\"x","choices":[{"index":0,"delta":{"role":"assistant","content":"\u00e9\n"}}]})",
    // Whitespace everywhere.
    " { \"id\" : \"x\" ,\n\t\"choices\" : [ { \"index\" : 0 , \"delta\" : { \"content\" : \"y\" } ,"
    " \"finish_reason\" : \"stop\" } ] , \"usage\" : { \"total_tokens\" : 3 } }\r\n",
    // Nulls where objects and arrays go; empty containers.
    R"({"choices":null,"usage":null,"id":null,"model":null})",
    R"({"choices":[null,{"delta":null},{"index":null,"delta":{"tool_calls":null}}]})",
    R"({"choices":[{"index":2,"delta":{"tool_calls":[null,{"function":null},{"index":3,"id":null}]}}]})",
    R"({})",
    R"({"choices":[{}],"usage":{}})",
    // Duplicate keys: every one is visited, in order.
    R"({"id":"first","id":"second","choices":[{"index":0,"delta":{"content":"a","content":"b"}}],"choices":[{"index":1}]})",
    // Several choices, tool calls in two of them.
    R"({"choices":[{"index":1,"delta":{"tool_calls":[{"index":0,"function":{"name":"f"}}]}},{"index":0,"delta":{"content":"c","tool_calls":[{"index":2,"function":{"arguments":"{}"}}]}}]})",
    // Unknown members of every kind, skipped.
    R"({"x":[1,-2,3.5,-0.25e-3,1E+9,0,true,false,null,"s\u1234",{"a":[[],{}]}],"choices":[{"index":0,"logprobs":{"content":[{"token":"a","logprob":-0.01,"bytes":[97],"top_logprobs":[]}]},"delta":{"refusal":null,"audio":{"id":"x"},"content":"z"}}]})",
    R"({"usage":{"prompt_tokens":-0,"completion_tokens":123456789012345678,"prompt_tokens_details":null,"total_tokens":null}})",
    // A key with an escape is a different key (compared raw, as ParseChunk does).
    R"({"\u0069d":"not the id","choices":[{"ind\u0065x":5,"index":1}]})",
    // Longer than the quote index covers (1 KiB).
    R"({"id":"long","choices":[{"index":0,"delta":{"content":")" + std::string(1100, 'a') +
        R"("}}]})",
    // Nesting 60 deep in an unknown member.
    R"({"deep":)" + std::string(60, '[') + std::string(60, ']') + R"(,"id":"d"})",
};

// Valid or not, payloads the fast path leaves to ParseChunk.
inline const std::vector<std::string> kDeferred = {
    "",
    "{not json",
    "[1,2]",
    "\"text\"",
    "null",
    R"({"choices":[]} trailing)",
    R"({"choices":[]}{"choices":[]})",
    R"({"choices":[{"index":0,"delta":{"content":"x"},"finish_reason":7}]})",
    R"({"choices":[{"index":0,"delta":{"content":5}}]})",
    R"({"choices":[{"index":1.0}]})",
    R"({"choices":[{"index":01}]})",
    R"({"usage":{"total_tokens":1234567890123456789}})",
    R"({"usage":{"total_tokens":"9"}})",
    R"({"usage":[]})",
    "{\"choices\":[{\"index\":0,\"delta\":{\"content\":\"\xff\"}}]}",
    "{\"choices\":[{\"index\":0,\"delta\":{\"content\":\"\xc0\xaf\"}}]}",      // overlong
    "{\"choices\":[{\"index\":0,\"delta\":{\"content\":\"\xed\xa0\x80\"}}]}",  // surrogate
    "{\"choices\":[{\"index\":0,\"delta\":{\"content\":\"a\x01\"}}]}",         // control char
    R"({"choices":[{"index":0,"delta":{"content":"\ud83d"}}]})",  // lone high surrogate
    R"({"choices":[{"index":0,"delta":{"content":"\ude00"}}]})",  // lone low surrogate
    R"({"choices":[{"index":0,"delta":{"content":"\ud83d\u0041"}}]})",
    R"({"choices":[{"index":0,"delta":{"content":"\x"}}]})",
    R"({"choices":[{"index":0,"delta":{"content":"\u12g4"}}]})",
    R"({"a":tru})",
    R"({"a":-})",
    R"({"a":1.})",
    R"({"a":.5})",
    R"({"a":1e})",
    R"({"a":[1,]})",
    R"({"a":1,})",
    R"({"a" 1})",
    R"({"deep":)" + std::string(70, '[') + std::string(70, ']') + "}",
};

// Every payload of `bases`, truncated, with one byte deleted, and with one byte replaced by
// each of a set of troublemakers, given to `check`; stops at the first failure.
template <typename F>
void ForEachMutation(const std::vector<std::string>& bases, F&& check) {
  const std::string kBytes = "\"\\{}[],: 0-.en1tu\x01\xff\xc3\xa9";
  for (const std::string& base : bases) {
    for (size_t i = 0; i < base.size(); ++i) {
      check(base.substr(0, i));
      check(base.substr(0, i) + base.substr(i + 1));
      for (char b : kBytes) {
        std::string mutated = base;
        mutated[i] = b;
        check(mutated);
      }
      if (::testing::Test::HasFailure()) return;
    }
  }
}

// Every mutation of `bases`, read with a lead (chunk_scan.h) learned from the base it came from,
// must read as the mutation read whole: `scan(json, lead)` reads with the lead, `whole(json)`
// reads whole (each returns whether it decided), and when both decide `same(json)` compares
// the two readings. Not vacuous: many mutations keep their base's lead, and many of those are
// still decided.
template <typename Scan, typename Whole, typename Same>
void ExpectReadAfterLeadAsWhole(const std::vector<std::string>& bases, Scan&& scan, Whole&& whole,
                                Same&& same) {
  ChunkLead lead;
  size_t resumed = 0, decided_after_lead = 0;
  ForEachMutation(bases, [&](const std::string& json) {
    for (const std::string& base : bases) {  // mutations come base by base
      if (json.size() > 12 && base.compare(0, 12, json, 0, 12) == 0) {
        (void)scan(base, lead);
        break;
      }
    }
    const bool from_lead = lead.size() != 0 && json.size() > lead.size() &&
                           json.compare(0, lead.size(), lead.bytes()) == 0;
    if (from_lead) ++resumed;
    const bool decided = scan(json, lead);
    ASSERT_EQ(decided, whole(json)) << json;
    if (!decided) return;
    if (from_lead) ++decided_after_lead;
    same(json);
  });
  EXPECT_GT(resumed, 5000u);
  EXPECT_GT(decided_after_lead, 1000u);
}

}  // namespace turnpike::stream::testing_payloads
