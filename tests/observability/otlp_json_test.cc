#include <gtest/gtest.h>

#include <boost/json.hpp>
#include <map>
#include <string>
#include <vector>

#include "observability/otlp_encoding.h"
#include "span_record_fixtures.h"

namespace turnpike::observability {
namespace {
namespace json = boost::json;

std::map<std::string, json::value> Attributes(const json::object& span) {
  std::map<std::string, json::value> out;
  for (const json::value& a : span.at("attributes").as_array()) {
    out[std::string(a.at("key").as_string())] = a.at("value");
  }
  return out;
}

TEST(OtlpJson, EncodesTheEnvelope) {
  std::string out;
  EncodeOtlpJson({}, "turnpike", out);
  EXPECT_EQ(out, R"({"resourceSpans":[{"resource":{"attributes":[{"key":"service.name","value":)"
                 R"({"stringValue":"turnpike"}}]},"scopeSpans":[{"scope":{"name":"turnpike"},)"
                 R"("spans":[]}]}]})");
}

TEST(OtlpJson, EncodesAnOtherRequestExactly) {
  const SpanRecord r = OtherRecord();
  std::string out;
  EncodeOtlpJson(std::span<const SpanRecord>(&r, 1), "gw", out);
  EXPECT_EQ(out,
            R"({"resourceSpans":[{"resource":{"attributes":[{"key":"service.name","value":)"
            R"({"stringValue":"gw"}}]},"scopeSpans":[{"scope":{"name":"turnpike"},"spans":[)"
            R"({"traceId":"00000000000000010000000000000002","spanId":"0000000000000003",)"
            R"("name":"GET /healthz","kind":2,"startTimeUnixNano":"10","endTimeUnixNano":"20",)"
            R"("attributes":[{"key":"http.request.method","value":{"stringValue":"GET"}},)"
            R"({"key":"http.response.status_code","value":{"intValue":"200"}},)"
            R"({"key":"url.path","value":{"stringValue":"/healthz"}}]}]}]}]})");
}

TEST(OtlpJson, EncodesAChatCallWithPhasesAndAttempts) {
  const SpanRecord r = ChatRecord();
  std::string out;
  EncodeOtlpJson(std::span<const SpanRecord>(&r, 1), "turnpike", out);
  const json::value doc = json::parse(out);
  const json::array& spans =
      doc.at("resourceSpans").at(0).at("scopeSpans").at(0).at("spans").as_array();
  // server + parse, governance, connect, first byte, stream + 2 attempts
  ASSERT_EQ(spans.size(), 8u);
  const json::object& server = spans[0].as_object();
  EXPECT_EQ(server.at("traceId"), "4bf92f3577b34da6a3ce929d0e0e4736");
  EXPECT_EQ(server.at("spanId"), "1111111111111111");
  EXPECT_EQ(server.at("parentSpanId"), "00f067aa0ba902b7");
  EXPECT_EQ(server.at("traceState"), "vendor=1");
  EXPECT_EQ(server.at("name"), "chat gpt-4o-mini");
  EXPECT_EQ(server.at("kind"), 2);
  EXPECT_EQ(server.at("startTimeUnixNano"), "1000");
  EXPECT_EQ(server.at("endTimeUnixNano"), "2000");
  EXPECT_EQ(server.at("events").at(0).at("name"), "gen_ai.first_token");
  EXPECT_FALSE(server.contains("status"));
  auto a = Attributes(server);
  EXPECT_EQ(a["gen_ai.operation.name"].at("stringValue"), "chat");
  EXPECT_EQ(a["gen_ai.provider.name"].at("stringValue"), "gcp.gemini");
  EXPECT_EQ(a["gen_ai.request.model"].at("stringValue"), "gpt-4o-mini");
  EXPECT_EQ(a["gen_ai.response.model"].at("stringValue"), "gemini-2");
  EXPECT_EQ(a["gen_ai.usage.input_tokens"].at("intValue"), "12");
  EXPECT_EQ(a["gen_ai.usage.output_tokens"].at("intValue"), "5");
  EXPECT_EQ(
      a["gen_ai.response.finish_reasons"].at("arrayValue").at("values").at(0).at("stringValue"),
      "stop");
  EXPECT_EQ(a["http.response.status_code"].at("intValue"), "200");
  EXPECT_EQ(a["turnpike.tenant.id"].at("stringValue"), "t1");
  EXPECT_EQ(a["turnpike.cost_usd"].at("doubleValue"), 0.0015);
  EXPECT_EQ(a["turnpike.cache.hit"].at("boolValue"), false);

  const char* phases[] = {"gateway.parse", "gateway.governance", "upstream.connect",
                          "upstream.first_byte", "response.stream"};
  for (size_t i = 0; i < 5; ++i) {
    const json::object& s = spans[1 + i].as_object();
    EXPECT_EQ(s.at("name"), phases[i]);
    EXPECT_EQ(s.at("kind"), 1);
    EXPECT_EQ(s.at("parentSpanId"), "1111111111111111");
    EXPECT_NE(s.at("spanId"), server.at("spanId"));
  }
  const json::object& failed = spans[6].as_object();
  EXPECT_EQ(failed.at("name"), "chat claude-x");
  EXPECT_EQ(failed.at("kind"), 3);
  EXPECT_EQ(failed.at("spanId"), "2222222222222222");
  EXPECT_EQ(failed.at("status").at("code"), 2);
  auto fa = Attributes(failed);
  EXPECT_EQ(fa["gen_ai.provider.name"].at("stringValue"), "anthropic");
  EXPECT_EQ(fa["server.address"].at("stringValue"), "127.0.0.1");
  EXPECT_EQ(fa["server.port"].at("intValue"), "9000");
  EXPECT_EQ(fa["http.response.status_code"].at("intValue"), "503");
  const json::object& answered = spans[7].as_object();
  EXPECT_EQ(answered.at("endTimeUnixNano"), "2000");  // ends with the request
  EXPECT_FALSE(answered.contains("status"));
}

TEST(OtlpJson, SearchRequestsAreTheirOwnKind) {
  const SpanRecord r = SearchRecord();
  std::string out;
  EncodeOtlpJson(std::span<const SpanRecord>(&r, 1), "turnpike", out);
  const json::value doc = json::parse(out);
  const json::object& s =
      doc.at("resourceSpans").at(0).at("scopeSpans").at(0).at("spans").at(0).as_object();
  EXPECT_EQ(s.at("name"), "search docs");
  auto a = Attributes(s);
  EXPECT_EQ(a["db.system.name"].at("stringValue"), "elasticsearch");
  EXPECT_EQ(a["db.namespace"].at("stringValue"), "docs");
  EXPECT_EQ(a["db.operation.name"].at("stringValue"), "search");
  EXPECT_EQ(a["error.type"].at("stringValue"), "internal");
  EXPECT_EQ(s.at("status").at("code"), 2);
}

TEST(OtlpJson, EscapesTextsAndAddsTheClockOffsetToTimes) {
  SpanRecord r = OtherRecord();
  r.path = "/a\"b\\c\n\x01/\xc3\xa9t\xc3\xa9-long-enough-for-a-word";
  r.phases.received = 5;
  r.phases.done = 1'000'000'007;
  OtlpBuffer buffer;
  // Unix seconds 1764000000 and 1764000001: the second one's prefix is not the first one's.
  EncodeOtlpJson(std::span<const SpanRecord>(&r, 1), "gw", 1'764'000'000'000'000'000, buffer);
  const std::string_view text = buffer.view();
  EXPECT_NE(text.find(R"("startTimeUnixNano":"1764000000000000005")"), std::string_view::npos);
  EXPECT_NE(text.find(R"("endTimeUnixNano":"1764000001000000007")"), std::string_view::npos);
  EXPECT_NE(text.find(R"("name":"GET /a\"b\\c\n\u0001/)"
                      "\xc3\xa9t\xc3\xa9-long-enough-for-a-word\""),
            std::string_view::npos);
  const json::value doc = json::parse(text);
  const json::object& s =
      doc.at("resourceSpans").at(0).at("scopeSpans").at(0).at("spans").at(0).as_object();
  EXPECT_EQ(std::string(Attributes(s)["url.path"].at("stringValue").as_string()),
            std::string(r.path.view()));
}

TEST(OtlpJson, WritesTheCostAsTheSameDoubleAndManyRecordsIntoOneBuffer) {
  std::vector<SpanRecord> records(300);
  const int64_t micros[] = {0, 1, 1500, 1'000'000, 1'234'567, 987'654'321'000, 100'000};
  for (size_t i = 0; i < records.size(); ++i) {
    SpanRecord& r = records[i];
    r.trace_hi = i + 1;
    r.trace_lo = i;
    r.span_id = i + 7;
    r.method = "POST";
    r.path = "/v1/chat/completions";
    r.tenant_id = "t";
    r.cost_micros = micros[i % std::size(micros)];
    // Across three unix seconds, so the formatter's cached second changes.
    r.phases.received = 1'764'000'000'000'000'000 + static_cast<int64_t>(i) * 9'000'000;
    r.phases.done = r.phases.received + 1;
  }
  std::string out;
  EncodeOtlpJson(records, "turnpike", out);
  const json::value doc = json::parse(out);
  const json::array& spans =
      doc.at("resourceSpans").at(0).at("scopeSpans").at(0).at("spans").as_array();
  ASSERT_EQ(spans.size(), records.size());
  for (size_t i = 0; i < records.size(); ++i) {
    const json::object& s = spans[i].as_object();
    EXPECT_EQ(Attributes(s)["turnpike.cost_usd"].at("doubleValue").to_number<double>(),
              static_cast<double>(micros[i % std::size(micros)]) / 1e6)
        << i;
    EXPECT_EQ(std::string(s.at("startTimeUnixNano").as_string()),
              std::to_string(records[i].phases.received))
        << i;
    EXPECT_EQ(std::string(s.at("endTimeUnixNano").as_string()),
              std::to_string(records[i].phases.done))
        << i;
  }
}

TEST(SpanRecord, CutsLongTextsAtACharacterAndTraceStatesAtAMember) {
  InlineText<4> text("abc\xc3\xa9");  // "abcé": the é does not fit whole
  EXPECT_EQ(text.view(), "abc");
  text = "ab";
  EXPECT_EQ(text.view(), "ab");
  InlineText<12> state;
  AssignTraceState(state, "a=1,bb=22,ccc=333");
  EXPECT_EQ(state.view(), "a=1,bb=22");
  AssignTraceState(state, "a=1,bb=22,cc");  // exactly 12 bytes
  EXPECT_EQ(state.view(), "a=1,bb=22,cc");
  AssignTraceState(state, "averyverylongmember=1");
  EXPECT_TRUE(state.empty());
}

TEST(OtlpJson, NamesOperationsAndProviders) {
  EXPECT_EQ(GenAiOperationName("/v1/embeddings"), "embeddings");
  EXPECT_EQ(GenAiOperationName("/v1beta/models/m:embedContent"), "embeddings");
  EXPECT_EQ(GenAiOperationName("/v1/completions"), "text_completion");
  EXPECT_EQ(GenAiOperationName("/v1/chat/completions"), "chat");
  EXPECT_EQ(GenAiOperationName("/v1/messages"), "chat");
  EXPECT_EQ(GenAiOperationName("/v2/embed"), "embeddings");
  EXPECT_EQ(GenAiOperationName("/completions"), "text_completion");
  EXPECT_EQ(GenAiOperationName("/openai/deployments/d/completions"), "text_completion");
  EXPECT_EQ(GenAiOperationName("/chat/completions"), "chat");
  EXPECT_EQ(GenAiOperationName("/v1/completion"), "chat");
  EXPECT_EQ(GenAiOperationName(""), "chat");
  EXPECT_EQ(GenAiProviderName("openai_responses"), "openai");
  EXPECT_EQ(GenAiProviderName("gemini"), "gcp.gemini");
  EXPECT_EQ(GenAiProviderName("cohere"), "cohere");
}

}  // namespace
}  // namespace turnpike::observability
