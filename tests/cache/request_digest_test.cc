#include "cache/request_digest.h"

#include <gtest/gtest.h>

#include <array>
#include <boost/json.hpp>
#include <string>
#include <vector>

namespace turnpike::cache {
namespace {

namespace json = boost::json;

constexpr uint64_t kSeed = 0x5eed;
constexpr std::array<std::string_view, 5> kExcluded = {"stream", "stream_options", "user",
                                                       "metadata", "store"};

// An OpenAI chat request as an SDK sends it: tools, a tool call and its result, sampling
// parameters, fields that do not change the answer.
constexpr std::string_view kChat = R"({
  "model": "gpt-4o-mini",
  "messages": [
    {"role": "system", "content": "You are terse.\nAnswer in \"one\" line."},
    {"role": "user", "content": "Weather in Z\u00fcrich? \ud83c\udf26"},
    {"role": "assistant", "content": null, "tool_calls": [{"id": "call_1", "type": "function",
      "function": {"name": "get_weather", "arguments": "{\"city\":\"Z\u00fcrich\"}"}}]},
    {"role": "tool", "tool_call_id": "call_1", "content": "{\"temp_c\":21.5}"},
    {"role": "user", "content": "And tomorrow?"}
  ],
  "tools": [{"type": "function", "function": {"name": "get_weather", "description": "Weather",
    "parameters": {"type": "object", "properties": {"city": {"type": "string"}},
    "required": ["city"]}}}],
  "temperature": 0.7, "top_p": 1, "max_tokens": 512, "seed": 12345678901234567890,
  "stream": true, "stream_options": {"include_usage": true}, "user": "u-42",
  "metadata": {"trace": "abc"}, "store": false
})";

class RequestDigestTest : public testing::Test {
 protected:
  Digest128 Digest(std::string_view body, std::span<const std::string_view> excluded = {}) {
    Result<Digest128> digest = digester_.Of(body, excluded);
    EXPECT_TRUE(digest.ok()) << body << ": " << (digest.ok() ? "" : digest.error().message);
    return digest.ok() ? *digest : Digest128{};
  }

  std::string Canonical(std::string_view body, std::span<const std::string_view> excluded = {}) {
    Digest(body, excluded);
    return std::string(digester_.canonical());
  }

  // The error's message, or "ok" if `body` was accepted.
  std::string ErrorOf(std::string_view body) {
    Result<Digest128> digest = digester_.Of(body, {});
    if (digest.ok()) return "ok";
    EXPECT_EQ(digest.error().code, ErrorCode::kInvalidRequest);
    return digest.error().message;
  }

  void ExpectSame(std::string_view a, std::string_view b,
                  std::span<const std::string_view> excluded = {}) {
    EXPECT_EQ(Digest(a, excluded), Digest(b, excluded)) << a << "\n" << b;
  }

  void ExpectDifferent(std::string_view a, std::string_view b,
                       std::span<const std::string_view> excluded = {}) {
    EXPECT_NE(Digest(a, excluded), Digest(b, excluded)) << a << "\n" << b;
  }

  RequestDigester digester_{kSeed};
};

// The document with every object's members in reverse order, at every depth.
json::value Reversed(const json::value& value) {
  if (value.is_array()) {
    json::array out;
    for (const json::value& element : value.get_array()) out.push_back(Reversed(element));
    return out;
  }
  if (!value.is_object()) return value;
  const json::object& object = value.get_object();
  json::object out;
  for (auto member = object.end(); member != object.begin();) {
    --member;
    out[member->key()] = Reversed(member->value());
  }
  return out;
}

TEST_F(RequestDigestTest, IgnoresWhitespace) {
  ExpectSame(R"({"a":[1,2],"b":{"c":null,"d":"x y"}})",
             " \n{ \"a\" : [ 1 ,\t2 ] ,\r\n \"b\":{ \"c\" :null, \"d\" : \"x y\" } }\n ");
  ExpectDifferent(R"(["x y"])", R"(["x  y"])");  // inside a string, whitespace counts
}

TEST_F(RequestDigestTest, SortsMembersAtEveryDepth) {
  EXPECT_EQ(Canonical(R"({"b":1,"a":{"z":true,"y":[{"d":null,"c":"x"}]}})"),
            R"({"a":{"y":[{"c":"x","d":null}],"z":true},"b":1})");
  ExpectSame(R"({"m":[{"role":"user","content":"hi"}],"model":"x"})",
             R"({"model":"x","m":[{"content":"hi","role":"user"}]})");
  ExpectSame(R"([[{"a":{"c":1,"b":2}}]])", R"([[{"a":{"b":2,"c":1}}]])");
  // Shorter names first, then byte order.
  EXPECT_EQ(Canonical(R"({"ab":1,"a":2,"":3})"), R"({"":3,"a":2,"ab":1})");
  EXPECT_EQ(Canonical(R"({"content":"hi","role":"user"})"), R"({"role":"user","content":"hi"})");
  EXPECT_EQ(Canonical(R"({"bb":1,"ba":2,"c":3,"Z":4})"), R"({"Z":4,"c":3,"ba":2,"bb":1})");
}

TEST_F(RequestDigestTest, KeepsArrayOrder) {
  ExpectDifferent(R"({"stop":["a","b"]})", R"({"stop":["b","a"]})");
  ExpectDifferent(R"([{"role":"user"},{"role":"assistant"}])",
                  R"([{"role":"assistant"},{"role":"user"}])");
}

TEST_F(RequestDigestTest, NormalisesNumbers) {
  for (std::string_view one : {"1", "1.0", "1e0", "10E-1", "1.00", "1E+0", "0.1e1", "100e-2",
                               "1e00000000000000000000000000"}) {
    EXPECT_EQ(Canonical(one), "1") << one;
  }
  for (std::string_view zero : {"0", "-0", "0.0", "-0.0", "0e5", "-0E-7", "0.000"}) {
    EXPECT_EQ(Canonical(zero), "0") << zero;
  }
  EXPECT_EQ(Canonical("[100, 1.5, -2.50, 0.07, 42.0, -3e-3, 12e+2]"),
            "[1e2,15e-1,-25e-1,7e-2,42,-3e-3,12e2]");
  // Integers with trailing zeros (Integer's own path), at the end of the body too.
  EXPECT_EQ(Canonical("[20,-100,10000000000000000000000,-9000,1,0]"), "[2e1,-1e2,1e22,-9e3,1,0]");
  EXPECT_EQ(Canonical("{\"max_tokens\":20}"), "{\"max_tokens\":2e1}");
  EXPECT_EQ(Canonical("1000"), "1e3");
  EXPECT_EQ(Canonical(std::string(4096, ' ') + "1000"), "1e3");
  ExpectSame(R"({"temperature":0.7,"max_tokens":512})",
             R"({"max_tokens":5.12e2,"temperature":7E-1})");
}

TEST_F(RequestDigestTest, KeepsEveryDigitOfANumber) {
  ExpectDifferent("9007199254740992", "9007199254740993");  // 2^53 and 2^53 + 1
  ExpectDifferent("18446744073709551616", "18446744073709551617");
  ExpectDifferent("0.1", "0.10000000000000001");
  ExpectDifferent("-1", "1");
  EXPECT_EQ(Canonical("123456789012345678901234567890.5"), "1234567890123456789012345678905e-1");
  EXPECT_EQ(Canonical("1.5e999999999999999999"), "15e999999999999999998");
}

// Strings of every length up to 100 with an escape, a non-ASCII character or nothing special
// at various places: in a small body (scanned from its padded copy, in the look-ahead's reach),
// with whitespace around it (at shifted offsets), and at the end of a body over 4 KB (scanned in
// place: its last 128 bytes go the long way): one canonical text.
TEST_F(RequestDigestTest, LookAheadAgreesWithTheLongWay) {
  const std::string padding(200, ' ');
  const std::string large(4096, ' ');
  for (size_t length = 0; length <= 100; ++length) {
    for (std::string_view special : {"", "\\n", "\\u00e9", "\xc3\xa9", "\\\"", "\\/"}) {
      for (size_t at = 0; at <= length; at += 7) {
        std::string text(length, 'x');
        text.insert(at, special);
        const std::string body = R"({"k":")" + text + R"(","m":[")" + text + R"("]})";
        const std::string long_way = Canonical(body);
        EXPECT_EQ(Canonical(body + padding), long_way) << body;
        EXPECT_EQ(Canonical(padding.substr(0, length % 17) + body + padding), long_way) << body;
        EXPECT_EQ(Canonical(large + body), long_way) << body;
      }
    }
  }
}

// A body under 4 KB is scanned from a padded copy (request_digest.cc kPadBelow), a larger one
// in place: trailing whitespace moves a body from the one to the other without changing it.
TEST_F(RequestDigestTest, PaddedCopyAgreesWithTheBodyInPlace) {
  const std::string large(4096, ' ');
  for (size_t length = 0; length <= 140; length += 3) {
    for (std::string_view special : {"", "\\n", "\\u00e9", "\xc3\xa9", "\\\"", "\\/"}) {
      std::string text(length, 'x');
      text.insert(length / 2, special);
      const std::string body = R"({"k":")" + text + R"(","stream":true,"m":[")" + text + R"("]})";
      const std::string small = Canonical(body, kExcluded);
      EXPECT_EQ(Canonical(body + large, kExcluded), small) << body;
      EXPECT_NE(ErrorOf(body.substr(0, body.size() - 3)), "ok") << body;
      EXPECT_NE(ErrorOf(body.substr(0, body.size() - 3) + large), "ok") << body;
    }
  }
  EXPECT_EQ(Canonical(std::string(kChat) + large, kExcluded), Canonical(kChat, kExcluded));
  // Around the threshold: 4095, 4096 and 4097 bytes.
  for (size_t size = 4095; size <= 4097; ++size) {
    const std::string body = R"({"a":")" + std::string(size - 14, 'y') + R"(","b":1})";
    ASSERT_EQ(body.size(), size);
    EXPECT_EQ(Canonical(body), body);
  }
}

TEST_F(RequestDigestTest, DecodesStringEscapes) {
  ExpectSame(R"(["\u0041\/"])", R"(["A/"])");
  ExpectSame(R"(["Z\u00fcrich \u20AC"])", "[\"Z\xc3\xbcrich \xe2\x82\xac\"]");
  ExpectSame(R"(["\ud83c\udf26"])", "[\"\xf0\x9f\x8c\xa6\"]");  // a surrogate pair
  ExpectSame(R"(["\n\t\"\\"])", R"(["\u000a\u0009\u0022\u005C"])");
  ExpectSame(R"({"\u0061":1})", R"({"a":1})");  // in member names too
  EXPECT_EQ(Canonical(R"(["\u0001\u001F\b\f\r\/\u007f"])"), "[\"\\u0001\\u001f\\b\\f\\r/\x7f\"]");
  ExpectDifferent(R"(["a\",\"b"])", R"(["a","b"])");
}

TEST_F(RequestDigestTest, EveryOtherDifferenceCounts) {
  ExpectDifferent(R"({"a":1})", R"({"a":2})");            // a value
  ExpectDifferent(R"({"a":1})", R"({"b":1})");            // a member name
  ExpectDifferent(R"({"a":1})", R"({"a":1,"b":1})");      // an extra member
  ExpectDifferent(R"({"a":1})", R"({"a":"1"})");          // number and string
  ExpectDifferent(R"({"a":true})", R"({"a":1})");         // bool and number
  ExpectDifferent(R"({"a":true})", R"({"a":"true"})");    // bool and string
  ExpectDifferent(R"({"a":null,"b":1})", R"({"b":1})");   // null and absent
  ExpectDifferent(R"({"a":null})", R"({"a":""})");        // null and empty string
  ExpectDifferent(R"({"a":[]})", R"({"a":{}})");          // empty array and object
  ExpectDifferent(R"({"a":[1,2]})", R"({"a":[[1,2]]})");  // nesting
  ExpectDifferent(R"({"a":{"b":1}})", R"({"a":{"b":1},"b":1})");
  ExpectDifferent(R"({"ab":"c"})", R"({"a":"bc"})");
  ExpectDifferent(R"({"a":1.5})", R"({"a":15})");
}

TEST_F(RequestDigestTest, KeepsDuplicateMembersInBodyOrder) {
  EXPECT_EQ(Canonical(R"({"b":0,"a":1,"a":2})"), R"({"a":1,"a":2,"b":0})");
  ExpectSame(R"({"b":0,"a":1,"a":2})", R"({"a":1,"b":0,"a":2})");
  ExpectDifferent(R"({"a":1,"a":2})", R"({"a":2,"a":1})");
  ExpectDifferent(R"({"a":1,"a":2})", R"({"a":2})");
  ExpectDifferent(R"({"a":1,"a":2})", R"({"a":1})");
}

TEST_F(RequestDigestTest, ExcludesTopLevelMembersOnly) {
  ExpectSame(R"({"model":"m","stream":true,"user":"u","metadata":{"k":1},"store":false})",
             R"({"model":"m"})", kExcluded);
  ExpectSame(R"({"stream":true,"model":"m","stream":false})", R"({"model":"m"})", kExcluded);
  ExpectSame(R"({"\u0073tream":true,"model":"m"})", R"({"model":"m"})", kExcluded);
  EXPECT_EQ(Canonical(R"({"stream":1,"user":2})", kExcluded), "{}");
  // Nested members of those names count, and a top-level array has no members to exclude.
  ExpectDifferent(R"({"a":{"stream":true}})", R"({"a":{}})", kExcluded);
  ExpectDifferent(R"({"messages":[{"user":"x"}]})", R"({"messages":[{}]})", kExcluded);
  ExpectDifferent(R"([{"stream":true}])", R"([{}])", kExcluded);
  // Without exclusions, they count.
  ExpectDifferent(R"({"model":"m","stream":true})", R"({"model":"m"})");
  // Names are compared decoded, escapes included.
  const std::array<std::string_view, 1> quoted = {"a\"b\n"};
  ExpectSame(R"({"a\"b\n":1,"c":2})", R"({"c":2})", quoted);
  ExpectDifferent(R"({"a\"b":1,"c":2})", R"({"c":2})", quoted);
}

TEST_F(RequestDigestTest, RejectsInvalidJson) {
  const std::string_view bodies[] = {"",
                                     " ",
                                     "{",
                                     "}",
                                     "[",
                                     R"({"a")",
                                     R"({"a":})",
                                     R"({"a":1,})",
                                     R"({"a" 1})",
                                     R"({a:1})",
                                     "[1,]",
                                     "[1 2]",
                                     "[,1]",
                                     "{} x",
                                     "{}{}",
                                     "tru",
                                     "nul",
                                     "True",
                                     "NaN",
                                     "Infinity",
                                     "01",
                                     "-01",
                                     "1.",
                                     ".5",
                                     "-",
                                     "+1",
                                     "1e",
                                     "1e+",
                                     "1.e1",
                                     "0x1",
                                     "'a'",
                                     "[1]//",
                                     R"("abc)",
                                     R"("\x")",
                                     R"("\u12")",
                                     R"("\u12G4")",
                                     R"("\ud800")",
                                     R"("\udc00")",
                                     R"("\ud800\u0041")",
                                     R"("\ud800\n")",
                                     "\"\\",
                                     "\"a\x01\"",
                                     "\"\t\"",
                                     "\"\xff\"",
                                     "\"\x80\"",
                                     "\"\xc0\xaf\"",          // an overlong '/'
                                     "\"\xe0\x80\xaf\"",      // another
                                     "\"\xed\xa0\x80\"",      // an encoded surrogate
                                     "\"\xf4\x90\x80\x80\"",  // above U+10FFFF
                                     "\"\xe2\x82\"",          // truncated sequence
                                     "\"\xe2\x82",            // truncated at the end of the body
                                     "1e1000000000000000000",
                                     std::string_view("{}\0", 3)};
  for (std::string_view body : bodies) EXPECT_NE(ErrorOf(body), "ok") << body;
  // The same over 4 KB (scanned in place, not from a padded copy).
  const std::string large(4096, ' ');
  for (std::string_view body : bodies) {
    EXPECT_NE(ErrorOf(std::string(body) + large), "ok") << body;
  }
  EXPECT_EQ(ErrorOf(R"({"a" 1})"), "request body is not valid JSON: expected ':' at byte 5");
  EXPECT_EQ(ErrorOf("[1,2"), "request body is not valid JSON: unterminated array at byte 4");
}

TEST_F(RequestDigestTest, EveryTruncationOfARequestIsInvalid) {
  for (size_t size = 0; size < kChat.size(); ++size) {
    const std::string_view prefix = kChat.substr(0, size);
    if (prefix.find_last_not_of(" \n") == kChat.find_last_not_of(" \n")) continue;
    EXPECT_NE(ErrorOf(prefix), "ok") << size;
  }
}

TEST_F(RequestDigestTest, BoundsNesting) {
  auto arrays = [](int depth) { return std::string(depth, '[') + std::string(depth, ']'); };
  auto objects = [](int depth) {
    std::string body;
    for (int i = 0; i < depth; ++i) body += R"({"a":)";
    body += "1";
    return body + std::string(depth, '}');
  };
  constexpr int kMax = RequestDigester::kMaxDepth;
  EXPECT_EQ(ErrorOf(arrays(kMax)), "ok");
  EXPECT_EQ(ErrorOf(objects(kMax)), "ok");
  EXPECT_NE(ErrorOf(arrays(kMax + 1)), "ok");
  EXPECT_NE(ErrorOf(objects(kMax + 1)), "ok");
  EXPECT_NE(ErrorOf(std::string(100000, '[')), "ok");
  EXPECT_NE(ErrorOf("[" + objects(kMax)), "ok");
}

TEST_F(RequestDigestTest, RealisticRequestIsOneWhateverItsSpelling) {
  const json::value parsed = json::parse(kChat);
  const std::string compact = json::serialize(parsed);  // numbers and escapes as Boost writes
  const std::string reversed = json::serialize(Reversed(parsed));
  const Digest128 digest = Digest(kChat, kExcluded);
  EXPECT_EQ(Digest(compact, kExcluded), digest);
  EXPECT_EQ(Digest(reversed, kExcluded), digest);

  json::object without = parsed.get_object();
  for (std::string_view name : kExcluded) without.erase(name);
  EXPECT_EQ(Digest(json::serialize(without), kExcluded), digest);
  EXPECT_EQ(Digest(json::serialize(without)), digest);

  json::object warmer = without;
  warmer["temperature"] = 0.8;
  EXPECT_NE(Digest(json::serialize(warmer), kExcluded), digest);
  json::object other_tool = without;
  other_tool["messages"].as_array()[2].as_object()["tool_calls"].as_array()[0].as_object()["id"] =
      "call_2";
  EXPECT_NE(Digest(json::serialize(other_tool), kExcluded), digest);
}

TEST_F(RequestDigestTest, SeedIsPartOfTheDigest) {
  RequestDigester replica(kSeed), other(kSeed + 1);
  EXPECT_EQ(*replica.Of(kChat, kExcluded), Digest(kChat, kExcluded));
  EXPECT_NE(*other.Of(kChat, kExcluded), Digest(kChat, kExcluded));
}

TEST_F(RequestDigestTest, ReuseCarriesNothingOver) {
  const Digest128 small = Digest(R"({"b":1,"a":2})");
  EXPECT_NE(ErrorOf(R"({"b":1,"a":{"c":)"), "ok");
  Digest(kChat);
  EXPECT_EQ(Digest(R"({"b":1,"a":2})"), small);
  EXPECT_EQ(digester_.canonical(), R"({"a":2,"b":1})");
}

// The request bench/governance-callgrind.sh --llm-cache sends (turnpike bench --distinct puts
// "seed" first), and the same spelt otherwise: one digest, every one by the small bodies' path.
TEST_F(RequestDigestTest, SmallPathDigestsTheCommonRequest) {
  constexpr std::string_view kSmall =
      R"({"seed":1200,"model":"bench-model","messages":[{"role":"user","content":"Say hello!"}],)"
      R"("max_tokens":20,"stream":false})";
  const Digest128 digest = Digest(kSmall, kExcluded);
  EXPECT_TRUE(digester_.took_small_path());
  EXPECT_EQ(digester_.canonical(),
            R"({"seed":12e2,"model":"bench-model","messages":[{"role":"user","content":)"
            R"("Say hello!"}],"max_tokens":2e1})");
  for (std::string_view other :
       {// members reordered at both depths, "stream" in the middle
        R"({"max_tokens":20,"messages":[{"content":"Say hello!","role":"user"}],)"
        R"("stream":true,"model":"bench-model","seed":1200})",
        // whitespace, numbers spelt otherwise
        " {\n  \"seed\": 1200.00, \"model\" : \"bench-model\",\t\"messages\": [ {\"role\": "
        "\"user\", \"content\": \"Say hello!\"} ],\r\n \"max_tokens\": 20.0 }\n",
        R"({"stream":false,"seed":12e2,"model":"bench-model","messages":[{"role":"user",)"
        R"("content":"Say hello!"}],"max_tokens":2E1})"}) {
    EXPECT_EQ(Digest(other, kExcluded), digest) << other;
  }
  // Each kind of value the small path writes.
  Digest("{\"b\":[1.50,-0.0,0.007,\"\\n\xc3\xa9\\/\",true,null,{},[]],\"a\":false}");
  EXPECT_TRUE(digester_.took_small_path());
  EXPECT_EQ(digester_.canonical(),
            "{\"a\":false,\"b\":[15e-1,0,7e-3,\"\\n\xc3\xa9/\",true,null,{},[]]}");
}

// Every body, valid or not, small or not: the same digest and canonical text, or the same
// error, with the small bodies' path as without it. The bodies: this file's, each truncated,
// and variants that take the small path's every branch (reordering at each depth, duplicates,
// exclusions first, last and alone, escapes, UTF-8, numbers, nesting) or leave it.
TEST_F(RequestDigestTest, SmallPathAgreesWithTheGeneralPath) {
  RequestDigester general(kSeed);
  general.set_small_path(false);
  std::vector<std::string> bodies = {
      std::string(kChat),
      R"({"b":1,"a":{"z":true,"y":[{"d":null,"c":"x"}]}})",
      R"({"ab":1,"a":2,"":3})",
      R"({"bb":1,"ba":2,"c":3,"Z":4,"bb":0,"a":{"y":{"b":[{"d":1,"c":2}],"a":0},"x":1}})",
      R"({"b":0,"a":1,"a":2})",
      R"({"a":2,"a":1,"a":3,"b":{"a":2,"a":1}})",
      R"({"stream":true,"model":"m","stream":false,"user":"u"})",
      R"({"stream":1,"user":2})",
      R"({"store":1,"model":"m","metadata":{"k":[1,{"b":1,"a":2}]},"user":{"stream":3}})",
      R"([{"stream":true},{"b":1,"a":2}])",
      R"({"\u0073tream":true,"model":"m"})",
      R"({"a\"b\n":1,"c":2})",
      R"(["\u0041\/","Z\u00fcrich \u20AC","\ud83c\udf26","\n\t\"\\\b\f\r"])",
      "[\"Z\xc3\xbcrich \xe2\x82\xac \xf0\x9f\x8c\xa6\",\"\xc3\xa9\xc3\"]",
      "[\"\xe2\x82\xac\xe2\x82\"]",
      "{\"\xc3\xa9t\xc3\xa9\":1,\"e\":2}",
      "[0,-0,0.0,-0.0,1,-1,10,100,0.5,0.05,-0.50,10.01,1.5,123456789012345678901234567890.5]",
      "[1e5,1E-5,0.1e1,01,-01,1.,.5,-,+1,1.e1,0x1,00]",
      "[true,false,null,tru,fals,nul,nulll]",
      "{\"a\":1}{}",
      "{\"a\":1} ",
      " \t\r\n[ 1 , { \"b\" : 2 , \"a\" : [ ] } , { } , [ [ ] ] ] \n",
      std::string("{\"a\":\"\0\"}", 9),
      std::string("[1,2]\0", 6),
      "\"a\x01\"",
      "\"\x7f\"",
      std::string(64, '[') + std::string(64, ']'),
      std::string(65, '[') + std::string(65, ']'),
  };
  // Strings of every length around the 16-byte blocks, with a special byte at each place.
  for (size_t length = 0; length <= 40; ++length) {
    for (std::string_view special : {"", "\\n", "\\u00e9", "\xc3\xa9", "\\/", "\x01"}) {
      std::string text(length, 'x');
      text.insert(length / 3, special);
      bodies.push_back(R"({"k":")" + text + R"(","j":[")" + text + R"("],")" + text + R"(":0})");
    }
  }
  // Numbers that outgrow their text ("1.5" is "15e-1"), up to and past the small path's limit.
  for (size_t count : {100, 200, 255, 256, 300}) {
    std::string numbers = "[1.1";
    for (size_t i = 1; i < count; ++i) numbers += ",1.1";
    bodies.push_back(numbers + "]");
  }
  // Many members, in order and reversed, and many objects.
  std::string in_order = "{", reversed = "{", objects = "[";
  for (int i = 0; i < 150; ++i) {
    in_order += (i ? ",\"" : "\"") + std::to_string(100 + i) + "\":" + std::to_string(i);
    reversed += (i ? ",\"" : "\"") + std::to_string(249 - i) + "\":" + std::to_string(i);
    objects += i ? ",{\"b\":1,\"a\":2}" : "{\"b\":1,\"a\":2}";
  }
  bodies.push_back(in_order + "}");
  bodies.push_back(reversed + "}");
  bodies.push_back(objects + "]");
  const size_t whole = bodies.size();
  for (size_t i = 0; i < whole; ++i) {
    for (size_t size = 0; size < bodies[i].size() && bodies[i].size() <= 300; ++size) {
      bodies.push_back(bodies[i].substr(0, size));
    }
  }
  size_t valid = 0, small = 0;
  for (const std::string& body : bodies) {
    for (std::span<const std::string_view> excluded :
         {std::span<const std::string_view>(kExcluded), std::span<const std::string_view>()}) {
      Result<Digest128> fast = digester_.Of(body, excluded);
      Result<Digest128> slow = general.Of(body, excluded);
      ASSERT_EQ(fast.ok(), slow.ok()) << body;
      EXPECT_FALSE(general.took_small_path());
      if (!fast.ok()) {
        EXPECT_EQ(fast.error().message, slow.error().message) << body;
        continue;
      }
      ++valid;
      small += digester_.took_small_path();
      EXPECT_EQ(*fast, *slow) << body;
      EXPECT_EQ(digester_.canonical(), general.canonical()) << body;
    }
  }
  EXPECT_GT(small, valid / 3) << valid;  // not: Unicode escapes, exponents...
}

// The digest is part of the L2's entry keys, shared by replicas: a change of the canonical form
// or the hash is a decision (old entries become unreachable), made where this test changes.
// XXH3_128bits_withSeed of the canonical text, its bytes in xxHash's canonical (big-endian) order.
TEST_F(RequestDigestTest, DigestIsStable) {
  const Digest128 digest = Digest(R"({"model":"m","messages":[{"role":"user","content":"hi"}]})");
  EXPECT_EQ(digester_.canonical(), R"({"model":"m","messages":[{"role":"user","content":"hi"}]})");
  EXPECT_EQ(DigestHex(digest), "e7774516afe11db2cf5f5d0fd3dfd543");
}

}  // namespace
}  // namespace turnpike::cache
