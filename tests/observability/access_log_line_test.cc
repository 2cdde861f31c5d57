#include <gtest/gtest.h>

#include <boost/json.hpp>
#include <chrono>

#include "observability/access_log.h"

namespace turnpike::observability {
namespace {

namespace json = boost::json;
using namespace std::chrono;
using namespace std::chrono_literals;

AccessRecord TypicalRecord() {
  AccessRecord r;
  r.time = sys_days{2024y / May / 1} + 12h + 34min + 56s + 789ms + 999us;
  r.request_id = "req_0123456789abcdef";
  r.method = "POST";
  r.path = "/v1/chat/completions";
  r.status = 200;
  r.model = "gpt-4o-mini";
  r.deployment = "openai-east";
  r.upstream_status = 200;
  r.attempts = 2;
  r.stream = true;
  r.bytes_in = 512;
  r.bytes_out = 4096;
  r.total_ms = 123.4567;
  r.overhead_us = 85;
  r.upstream_ttfb_ms = 40.5;
  r.ttft_ms = 41;
  r.prompt_tokens = 10;
  r.completion_tokens = 20;
  r.cached_tokens = 0;
  r.finish_reason = "stop";
  r.client = "127.0.0.1:54321";
  return r;
}

json::object ParseLine(const std::string& line) {
  EXPECT_FALSE(line.empty());
  EXPECT_EQ(line.back(), '\n');
  EXPECT_EQ(line.find('\n'), line.size() - 1) << "exactly one newline, at the end";
  json::error_code ec;
  json::value v = json::parse(line, ec);  // also rejects invalid UTF-8
  EXPECT_FALSE(ec) << ec.message() << " in " << line;
  return v.is_object() ? v.as_object() : json::object();
}

TEST(AccessLogLineTest, TypicalRecordHasEveryField) {
  std::string line;
  AppendAccessLogLine(TypicalRecord(), line);
  const json::object o = ParseLine(line);
  EXPECT_EQ(o.at("time").as_string(), "2024-05-01T12:34:56.789Z");
  EXPECT_EQ(o.at("request_id").as_string(), "req_0123456789abcdef");
  EXPECT_EQ(o.at("method").as_string(), "POST");
  EXPECT_EQ(o.at("path").as_string(), "/v1/chat/completions");
  EXPECT_EQ(o.at("status").as_int64(), 200);
  EXPECT_EQ(o.at("model").as_string(), "gpt-4o-mini");
  EXPECT_EQ(o.at("deployment").as_string(), "openai-east");
  EXPECT_EQ(o.at("upstream_status").as_int64(), 200);
  EXPECT_EQ(o.at("attempts").as_int64(), 2);
  EXPECT_EQ(o.at("stream").as_bool(), true);
  EXPECT_EQ(o.at("bytes_in").as_int64(), 512);
  EXPECT_EQ(o.at("bytes_out").as_int64(), 4096);
  EXPECT_DOUBLE_EQ(o.at("total_ms").as_double(), 123.457);
  EXPECT_EQ(o.at("overhead_us").as_int64(), 85);
  EXPECT_DOUBLE_EQ(o.at("upstream_ttfb_ms").as_double(), 40.5);
  EXPECT_DOUBLE_EQ(o.at("ttft_ms").as_double(), 41.0);
  EXPECT_EQ(o.at("prompt_tokens").as_int64(), 10);
  EXPECT_EQ(o.at("completion_tokens").as_int64(), 20);
  EXPECT_EQ(o.at("cached_tokens").as_int64(), 0);
  EXPECT_EQ(o.at("finish_reason").as_string(), "stop");
  EXPECT_EQ(o.at("client").as_string(), "127.0.0.1:54321");
  EXPECT_FALSE(o.contains("error"));
  EXPECT_EQ(o.size(), 21u);
}

TEST(AccessLogLineTest, NegativeOptionalsAndEmptyErrorAreOmitted) {
  AccessRecord r = TypicalRecord();
  r.upstream_status = -1;
  r.upstream_ttfb_ms = -1;
  r.ttft_ms = -1;
  r.prompt_tokens = -1;
  r.completion_tokens = -1;
  r.cached_tokens = -1;
  r.stream = false;
  std::string line;
  AppendAccessLogLine(r, line);
  const json::object o = ParseLine(line);
  for (const char* key : {"upstream_status", "upstream_ttfb_ms", "ttft_ms", "prompt_tokens",
                          "completion_tokens", "cached_tokens", "error"}) {
    EXPECT_FALSE(o.contains(key)) << key;
  }
  EXPECT_EQ(o.at("stream").as_bool(), false);

  r.error = "upstream_timeout";
  line.clear();
  AppendAccessLogLine(r, line);
  EXPECT_EQ(ParseLine(line).at("error").as_string(), "upstream_timeout");
}

TEST(AccessLogLineTest, TimeIsUtcWithMillisecondsAlsoBeforeTheEpoch) {
  AccessRecord r = TypicalRecord();
  r.time = system_clock::time_point(-1ms);
  std::string line;
  AppendAccessLogLine(r, line);
  EXPECT_EQ(ParseLine(line).at("time").as_string(), "1969-12-31T23:59:59.999Z");
  r.time = sys_days{2000y / January / 2} + 3h + 4min + 5s + 6ms;
  line.clear();
  AppendAccessLogLine(r, line);
  EXPECT_EQ(ParseLine(line).at("time").as_string(), "2000-01-02T03:04:05.006Z");
}

struct HostileCase {
  std::string input;
  std::string decoded;  // what a JSON parser must read back
};

TEST(AccessLogLineTest, EscapesHostileStrings) {
  const std::string kFffd = "\xEF\xBF\xBD";
  const std::vector<HostileCase> cases = {
      {"quote \" backslash \\ slash /", "quote \" backslash \\ slash /"},
      {"line\nbreak\r\ttab", "line\nbreak\r\ttab"},
      {std::string("nul\0byte", 8), std::string("nul\0byte", 8)},
      {"\x01\x1f\x7f\b\f", "\x01\x1f\x7f\b\f"},
      {"caf\xC3\xA9 \xF0\x9F\x98\x80 \xE2\x82\xAC", "caf\xC3\xA9 \xF0\x9F\x98\x80 \xE2\x82\xAC"},
      {"lone \xFF byte", "lone " + kFffd + " byte"},
      {"cut \xE2\x82", "cut " + kFffd},
      {"cut \xE2\x82x", "cut " + kFffd + "x"},
      {"overlong \xC0\xAF", "overlong " + kFffd + kFffd},
      {"surrogate \xED\xA0\x80", "surrogate " + kFffd + kFffd + kFffd},
      {"too big \xF4\x90\x80\x80", "too big " + kFffd + kFffd + kFffd + kFffd},
      {"\xF0\x9F\x98", kFffd},
      {"\"}{\"injected\":1,\"x\":\"", "\"}{\"injected\":1,\"x\":\""},
  };
  for (const HostileCase& c : cases) {
    AccessRecord r = TypicalRecord();
    r.path = c.input;
    r.error = c.input;
    std::string line;
    AppendAccessLogLine(r, line);
    for (char ch : line.substr(0, line.size() - 1)) {
      EXPECT_GE(static_cast<unsigned char>(ch), 0x20) << "raw control byte in " << line;
    }
    const json::object o = ParseLine(line);
    EXPECT_EQ(std::string(o.at("path").as_string()), c.decoded) << line;
    EXPECT_EQ(std::string(o.at("error").as_string()), c.decoded) << line;
    EXPECT_FALSE(o.contains("injected"));
  }
}

TEST(AccessLogLineTest, AppendsWithoutTouchingExistingText) {
  std::string out = "previous\n";
  AppendAccessLogLine(TypicalRecord(), out);
  AppendAccessLogLine(TypicalRecord(), out);
  EXPECT_EQ(out.rfind("previous\n{", 0), 0u);
  EXPECT_EQ(std::count(out.begin(), out.end(), '\n'), 3);
}

}  // namespace
}  // namespace turnpike::observability
