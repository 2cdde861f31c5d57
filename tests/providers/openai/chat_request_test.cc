#include "providers/openai/chat_request.h"

#include <gtest/gtest.h>

#include <boost/json.hpp>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "../../stream/chunk_payloads.h"

namespace turnpike::providers::openai {
namespace {

namespace json = boost::json;

struct BadBody {
  std::string name;
  std::string body;
  std::string param;  // expected Error::param
};

const std::string kMessages = R"("messages":[{"role":"user","content":"hi"}])";

std::vector<BadBody> BadBodies() {
  return {
      {"empty", "", ""},
      {"whitespace only", "  \n", ""},
      {"truncated", R"({"model":"m",)" + kMessages, ""},
      {"truncated inside a string", R"({"model":"m","messages":[{"role":"user","content":"ab)", ""},
      {"trailing garbage", R"({"model":"m",)" + kMessages + "} x", ""},
      {"second document", R"({"model":"m",)" + kMessages + "}{}", ""},
      {"trailing comma", R"({"model":"m",)" + kMessages + ",}", ""},
      {"bad literal deep in messages",
       R"({"model":"m","messages":[{"role":"user","content":[{"type":"text","x":tru}]}]})", ""},
      {"bad null literal", R"({"model":"m","messages":[{"role":"user","name":nul}]})", ""},
      {"missing comma in messages", R"({"model":"m","messages":[{"role":"user"} {"a":1}]})", ""},
      {"bad number deep inside", R"({"model":"m","messages":[{"n":01}]})", ""},
      {"bad escape", R"({"model":"m","messages":[{"content":"\q"}]})", ""},
      {"lone surrogate escape", R"({"model":"m","messages":[{"content":"\ud800"}]})", ""},
      {"unescaped control character", "{\"model\":\"m\",\"messages\":[{\"content\":\"a\x01\"}]}",
       ""},
      {"invalid UTF-8", "{\"model\":\"m\",\"messages\":[{\"content\":\"\xc3\x28\"}]}", ""},
      {"nested deeper than 128 levels",
       R"({"model":"m","messages":)" + std::string(200, '[') + std::string(200, ']') + "}", ""},
      {"top level array", "[" + kMessages.substr(11) + "]", ""},
      {"top level string", R"("hello")", ""},
      {"model missing", "{" + kMessages + "}", "model"},
      {"model not a string", R"({"model":4,)" + kMessages + "}", "model"},
      {"model null", R"({"model":null,)" + kMessages + "}", "model"},
      {"model empty", R"({"model":"",)" + kMessages + "}", "model"},
      {"model duplicated", R"({"model":"cheap","model":"dear",)" + kMessages + "}", "model"},
      {"model duplicated via escape", R"({"model":"cheap","mod\u0065l":"dear",)" + kMessages + "}",
       "model"},
      {"messages missing", R"({"model":"m"})", "messages"},
      {"messages not an array", R"({"model":"m","messages":{"role":"user"}})", "messages"},
      {"messages empty", R"({"model":"m","messages":[]})", "messages"},
      {"messages empty, with whitespace", "{\"model\":\"m\",\"messages\": [ \n\t ] }", "messages"},
      {"stream a string", R"({"model":"m",)" + kMessages + R"(,"stream":"true"})", "stream"},
      {"stream a number", R"({"model":"m",)" + kMessages + R"(,"stream":1})", "stream"},
      {"stream duplicated", R"({"model":"m",)" + kMessages + R"(,"stream":true,"stream":false})",
       "stream"},
      {"stream_options an array", R"({"model":"m",)" + kMessages + R"(,"stream_options":[]})",
       "stream_options"},
      {"stream_options a bool", R"({"model":"m",)" + kMessages + R"(,"stream_options":true})",
       "stream_options"},
      {"include_usage a string",
       R"({"model":"m",)" + kMessages + R"(,"stream_options":{"include_usage":"yes"}})",
       "stream_options.include_usage"},
      {"include_usage duplicated",
       R"({"model":"m",)" + kMessages +
           R"(,"stream_options":{"include_usage":true,"include_usage":false}})",
       "stream_options.include_usage"},
      {"max_tokens negative", R"({"model":"m",)" + kMessages + R"(,"max_tokens":-1})",
       "max_tokens"},
      {"max_tokens fractional", R"({"model":"m",)" + kMessages + R"(,"max_tokens":1.5})",
       "max_tokens"},
      {"max_tokens a string", R"({"model":"m",)" + kMessages + R"(,"max_tokens":"100"})",
       "max_tokens"},
      {"max_tokens beyond int64",
       R"({"model":"m",)" + kMessages + R"(,"max_tokens":18446744073709551615})", "max_tokens"},
      {"max_completion_tokens negative",
       R"({"model":"m",)" + kMessages + R"(,"max_completion_tokens":-5})", "max_completion_tokens"},
      {"max_completion_tokens a bool",
       R"({"model":"m",)" + kMessages + R"(,"max_completion_tokens":true})",
       "max_completion_tokens"},
  };
}

TEST(InspectChatRequestTest, RejectsMalformedBodies) {
  const std::vector<BadBody> cases = BadBodies();
  ASSERT_GE(cases.size(), 20u);
  for (const BadBody& c : cases) {
    SCOPED_TRACE(c.name);
    Result<ChatRequestInfo> info = InspectChatRequest(c.body);
    ASSERT_FALSE(info.ok());
    EXPECT_EQ(info.error().code, ErrorCode::kInvalidRequest);
    EXPECT_EQ(HttpStatus(info.error().code), 400);
    EXPECT_EQ(info.error().param, c.param);
    EXPECT_FALSE(info.error().message.empty());
  }
}

TEST(InspectChatRequestTest, ReadsFields) {
  const std::string body =
      "{\n  \"messages\": [{\"role\":\"user\",\"content\":\"{\\\"model\\\":1}\"}],\n"
      "  \"stream\" : true, \"max_tokens\": 50, \"max_completion_tokens\": 70,\n"
      "  \"stream_options\" : { \"include_usage\" : true },\n"
      "  \"model\" : \"gpt\\u002d4o\"\n}";
  Result<ChatRequestInfo> info = InspectChatRequest(body);
  ASSERT_TRUE(info.ok()) << info.error().message;
  EXPECT_EQ(info->model, "gpt-4o");
  EXPECT_EQ(body.substr(info->model_begin, info->model_end - info->model_begin),
            "\"gpt\\u002d4o\"");
  EXPECT_TRUE(info->stream);
  EXPECT_TRUE(info->has_stream_options);
  EXPECT_TRUE(info->include_usage);
  EXPECT_EQ(body.substr(info->stream_options_begin,
                        info->stream_options_end - info->stream_options_begin),
            "{ \"include_usage\" : true }");
  EXPECT_EQ(info->max_tokens, 70);  // max_completion_tokens wins
}

TEST(InspectChatRequestTest, NullMeansNotSet) {
  Result<ChatRequestInfo> info = InspectChatRequest(
      R"({"model":"m",)" + kMessages +
      R"(,"stream":null,"stream_options":null,"max_tokens":null,"max_completion_tokens":null})");
  ASSERT_TRUE(info.ok()) << info.error().message;
  EXPECT_FALSE(info->stream);
  EXPECT_FALSE(info->include_usage);
  EXPECT_EQ(info->max_tokens, -1);
}

TEST(InspectChatRequestTest, MaxTokensFallsBackToLegacyField) {
  Result<ChatRequestInfo> info =
      InspectChatRequest(R"({"model":"m",)" + kMessages + R"(,"max_tokens":0})");
  ASSERT_TRUE(info.ok());
  EXPECT_EQ(info->max_tokens, 0);
}

struct RoundTrip {
  std::string name;
  std::string body;
  std::string upstream_model;
  bool force_include_usage;
  std::string expected;  // parsed with Boost.JSON and compared as documents
};

std::vector<RoundTrip> RoundTrips() {
  return {
      {"model only", R"({"model":"alias",)" + kMessages + R"(,"temperature":0.2})", "gpt-4o", true,
       R"({"model":"gpt-4o",)" + kMessages + R"(,"temperature":0.2})"},
      {"stream without stream_options", R"({"model":"alias",)" + kMessages + R"(,"stream":true})",
       "gpt-4o", true,
       R"({"model":"gpt-4o",)" + kMessages +
           R"(,"stream":true,"stream_options":{"include_usage":true}})"},
      {"not forced", R"({"model":"alias",)" + kMessages + R"(,"stream":true})", "gpt-4o", false,
       R"({"model":"gpt-4o",)" + kMessages + R"(,"stream":true})"},
      {"forced but not streaming", R"({"model":"alias",)" + kMessages + "}", "gpt-4o", true,
       R"({"model":"gpt-4o",)" + kMessages + "}"},
      {"include_usage false",
       R"({"stream_options":{"include_usage":false},"stream":true,)" + kMessages +
           R"(,"model":"alias"})",
       "gpt-4o", true,
       R"({"stream_options":{"include_usage":true},"stream":true,)" + kMessages +
           R"(,"model":"gpt-4o"})"},
      {"include_usage null",
       R"({"model":"a","stream":true,"stream_options":{"include_usage":null},)" + kMessages + "}",
       "b", true,
       R"({"model":"b","stream":true,"stream_options":{"include_usage":true},)" + kMessages + "}"},
      {"other stream_options kept",
       R"({"model":"alias","stream":true,"stream_options":{"include_obfuscation":false},)" +
           kMessages + "}",
       "gpt-4o", true,
       R"({"model":"gpt-4o","stream":true,"stream_options":{"include_obfuscation":false,"include_usage":true},)" +
           kMessages + "}"},
      {"empty stream_options",
       R"({"model":"alias","stream":true,"stream_options":{ },)" + kMessages + "}", "gpt-4o", true,
       R"({"model":"gpt-4o","stream":true,"stream_options":{"include_usage":true},)" + kMessages +
           "}"},
      {"null stream_options",
       R"({"model":"alias","stream":true,"stream_options":null,)" + kMessages + "}", "gpt-4o", true,
       R"({"model":"gpt-4o","stream":true,"stream_options":{"include_usage":true},)" + kMessages +
           "}"},
      {"client already asked",
       R"({"model":"alias","stream":true,"stream_options":{"include_usage":true},)" + kMessages +
           "}",
       "gpt-4o", true,
       R"({"model":"gpt-4o","stream":true,"stream_options":{"include_usage":true},)" + kMessages +
           "}"},
      {"upstream model needs escaping", R"({"model":"alias",)" + kMessages + "}",
       "we\"ird\\model\n\x01", true, R"({"model":"we\"ird\\model\n\u0001",)" + kMessages + "}"},
      {"unicode upstream model", R"({"model":"alias",)" + kMessages + "}", "modèle-日本", true,
       R"({"model":"modèle-日本",)" + kMessages + "}"},
  };
}

TEST(BuildUpstreamChatBodyTest, RoundTrips) {
  for (const RoundTrip& c : RoundTrips()) {
    SCOPED_TRACE(c.name);
    Result<ChatRequestInfo> info = InspectChatRequest(c.body);
    ASSERT_TRUE(info.ok()) << info.error().message;
    const std::string out =
        BuildUpstreamChatBody(c.body, info.value(), c.upstream_model, c.force_include_usage);
    boost::system::error_code ec;
    const json::value actual = json::parse(out, ec);
    ASSERT_FALSE(ec) << out;
    EXPECT_EQ(actual, json::parse(c.expected)) << out;
  }
}

TEST(BuildUpstreamChatBodyTest, KeepsEveryOtherByte) {
  const std::string body =
      "{ \"model\" : \"alias\" ,\n \"messages\":[ {} ] , \"temperature\": 1.50, \"x\":\"\\u00e9\" "
      "}";
  Result<ChatRequestInfo> info = InspectChatRequest(body);
  ASSERT_TRUE(info.ok());
  EXPECT_EQ(
      BuildUpstreamChatBody(body, info.value(), "m2", true),
      "{ \"model\" : \"m2\" ,\n \"messages\":[ {} ] , \"temperature\": 1.50, \"x\":\"\\u00e9\" }");

  const std::string streaming = "{\"stream\":true, \"model\":\"a\",\"messages\":[{}]}";
  info = InspectChatRequest(streaming);
  ASSERT_TRUE(info.ok());
  EXPECT_EQ(BuildUpstreamChatBody(streaming, info.value(), "b", true),
            "{\"stream_options\":{\"include_usage\":true},\"stream\":true, "
            "\"model\":\"b\",\"messages\":[{}]}");
}

// Random single-byte edits of a valid body: whatever an independent parser (Boost.JSON) rejects,
// InspectChatRequest must reject too; what both accept must splice into the same document.
TEST(InspectChatRequestTest, AgreesWithBoostJsonOnMutatedBodies) {
  const std::string base =
      R"({"model":"gpt-4o","messages":[{"role":"system","content":"Be brief."},)"
      R"({"role":"user","content":[{"type":"text","text":"caf\u00e9 \"q\""}]}],)"
      R"("tools":[{"type":"function","function":{"name":"f","parameters":{"type":"object",)"
      R"("properties":{"a":{"type":"number","minimum":-1.5e2}},"required":["a"]}}}],)"
      R"("stream":true,"stream_options":{"include_usage":false},"max_tokens":256,"n":null})";
  const std::string alphabet = "{}[],:\"\\ 0-.eEtfnul\x80\xc3";
  std::mt19937 rng(12345);  // fixed seed: reproducible
  size_t boost_rejected = 0;
  size_t spliced_count = 0;
  for (int i = 0; i < 20000; ++i) {
    std::string body = base;
    const size_t pos = rng() % body.size();
    switch (rng() % 3) {
      case 0:
        body.erase(pos, 1);
        break;
      case 1:
        body.insert(pos, 1, alphabet[rng() % alphabet.size()]);
        break;
      default:
        body[pos] = alphabet[rng() % alphabet.size()];
    }
    boost::system::error_code ec;
    const json::value expected = json::parse(body, ec);
    Result<ChatRequestInfo> info = InspectChatRequest(body);
    if (ec) {
      ++boost_rejected;
      ASSERT_FALSE(info.ok()) << body;
      continue;
    }
    if (!info.ok()) continue;  // valid JSON that breaks a field rule, e.g. a duplicated key
    json::value spliced = json::parse(BuildUpstreamChatBody(body, info.value(), "up", false), ec);
    ASSERT_FALSE(ec) << body;
    json::value want = expected;
    want.as_object()["model"] = "up";
    ASSERT_EQ(spliced, want) << body;
    ++spliced_count;
  }
  // Both paths are exercised.
  EXPECT_GT(boost_rejected, 1000u);
  EXPECT_GT(spliced_count, 1000u);
}

// ScanChatRequest, the one-pass reader, against ParseChatRequest (simdjson), which has the final
// say: whatever the first decides, the second must read the same, byte ranges included.
void ExpectSameInfo(const ChatRequestInfo& fast, const ChatRequestInfo& slow,
                    const std::string& body) {
  EXPECT_EQ(fast.model, slow.model) << body;
  EXPECT_EQ(fast.stream, slow.stream) << body;
  EXPECT_EQ(fast.has_stream_options, slow.has_stream_options) << body;
  EXPECT_EQ(fast.include_usage, slow.include_usage) << body;
  EXPECT_EQ(fast.model_begin, slow.model_begin) << body;
  EXPECT_EQ(fast.model_end, slow.model_end) << body;
  EXPECT_EQ(fast.stream_options_begin, slow.stream_options_begin) << body;
  EXPECT_EQ(fast.stream_options_end, slow.stream_options_end) << body;
  EXPECT_EQ(fast.include_usage_begin, slow.include_usage_begin) << body;
  EXPECT_EQ(fast.include_usage_end, slow.include_usage_end) << body;
  EXPECT_EQ(fast.max_tokens, slow.max_tokens) << body;
}

const std::vector<std::string> kScanned = {
    R"({"model":"bench-model","messages":[{"role":"user","content":"Say hello!"}],"max_tokens":20,"stream":false})",
    R"({"model":"gpt-4o","messages":[{"role":"system","content":"Be brief.\nVery."},{"role":"user","content":"caf\u00e9 \"q\" \ud83d\ude00"}],"stream":true,"stream_options":{"include_usage":true,"x":[1,2.5,-0.25]},"max_completion_tokens":256,"max_tokens":null,"temperature":0.7,"n":null})",
    "{ \"model\" : \"m\" ,\n \"messages\":[ {\"content\":\"\xc3\xa9\xe4\xb8\xad\xf0\x9f\x98\x80\"} "
    "] ,\t\"stream_options\" : null , \"stream\":null }",
    R"({"messages":[[],{},"",0,true,false,null,{"a":{"b":[{"c":"d"}]}}],"model":"m","stream_options":{"include_usage":null},"max_tokens":0})",
    R"({"model":"m","messages":[1],"stream_options":{},"tools":[{"type":"function","function":{"name":"f","parameters":{"type":"object","properties":{"a":{"type":"number","minimum":-150}}}}}]})",
};

TEST(ScanChatRequestTest, DecidesUsualBodiesAsSimdjsonReadsThem) {
  for (const std::string& body : kScanned) {
    ChatRequestInfo fast;
    ASSERT_TRUE(ScanChatRequest(body, fast)) << body;
    Result<ChatRequestInfo> slow = ParseChatRequest(body);
    ASSERT_TRUE(slow.ok()) << body;
    ExpectSameInfo(fast, slow.value(), body);
  }
  ChatRequestInfo info;
  ASSERT_TRUE(ScanChatRequest(kScanned[1], info));
  EXPECT_TRUE(info.stream);
  EXPECT_TRUE(info.include_usage);
  EXPECT_EQ(info.max_tokens, 256);
}

TEST(ScanChatRequestTest, LeavesErrorsEscapedKeysAndExponentsToSimdjson) {
  for (const BadBody& c : BadBodies()) {
    ChatRequestInfo info;
    EXPECT_FALSE(ScanChatRequest(c.body, info)) << c.name;
  }
  for (const std::string& body : std::vector<std::string>{
           R"({"mod\u0065l":"m","messages":[1]})",
           R"({"model":"m\u0065","messages":[1]})",
           R"({"model":"m","messages":[1],"temperature":1e400})",
           R"({"model":"m","messages":[1],"max_tokens":1e3})",
           R"({"model":"m","messages":[1],"x":"\udc00"})",
           "{\"model\":\"m\",\"messages\":[\"" + std::string(5000, 'a') + "\\n\"]}",
           "{\"model\":\"m\",\"messages\":[\"" + std::string(kScanBodyBytes, 'a') + "\xc3\xa9\"]}",
       }) {
    ChatRequestInfo info;
    EXPECT_FALSE(ScanChatRequest(body, info)) << body;
  }
  // A plain body is scanned whatever its size.
  const std::string long_plain =
      R"({"model":"m","messages":[")" + std::string(100000, 'a') + R"("]})";
  ChatRequestInfo info;
  EXPECT_TRUE(ScanChatRequest(long_plain, info));
}

// Every body above, truncated, with one byte deleted, and with one byte replaced by each of a set
// of troublemakers: whatever the scanner still decides, simdjson must read the same.
TEST(ScanChatRequestTest, MutationsNeverDisagreeWithSimdjson) {
  size_t decided = 0, deferred = 0;
  stream::testing_payloads::ForEachMutation(kScanned, [&](const std::string& body) {
    ChatRequestInfo fast;
    if (!ScanChatRequest(body, fast)) {
      ++deferred;
      return;
    }
    ++decided;
    Result<ChatRequestInfo> slow = ParseChatRequest(body);
    ASSERT_TRUE(slow.ok()) << "the scanner accepted what simdjson rejects: " << body;
    ExpectSameInfo(fast, slow.value(), body);
  });
  EXPECT_GT(decided, 1000u);
  EXPECT_GT(deferred, 1000u);
}

}  // namespace
}  // namespace turnpike::providers::openai
