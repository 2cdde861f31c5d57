#include "loadgen/request_template.h"

#include <gtest/gtest.h>

#include <stdexcept>

namespace turnpike::loadgen {
namespace {

TEST(ParseUrlTest, HostPortPath) {
  const Target t = ParseUrl("http://127.0.0.1:8080/v1/chat/completions?x=1");
  EXPECT_EQ(t.host, "127.0.0.1");
  EXPECT_EQ(t.port, "8080");
  EXPECT_EQ(t.path, "/v1/chat/completions?x=1");
}

TEST(ParseUrlTest, Defaults) {
  const Target t = ParseUrl("HTTP://localhost");
  EXPECT_EQ(t.host, "localhost");
  EXPECT_EQ(t.port, "80");
  EXPECT_EQ(t.path, "/");
}

TEST(ParseUrlTest, Ipv6) {
  const Target t = ParseUrl("http://[::1]:9000/x");
  EXPECT_EQ(t.host, "::1");
  EXPECT_EQ(t.port, "9000");
}

TEST(ParseUrlTest, RejectsOtherSchemesAndBadPorts) {
  EXPECT_THROW(ParseUrl("https://example.com/"), std::invalid_argument);
  EXPECT_THROW(ParseUrl("http://host:80x/"), std::invalid_argument);
  EXPECT_THROW(ParseUrl("http:///path"), std::invalid_argument);
}

TEST(DistinctBodyTest, AddsASeedFirst) {
  EXPECT_EQ(DistinctBody(R"({"a":1})", 7), R"({"seed":7,"a":1})");
  EXPECT_EQ(DistinctBody(R"( { } )", 0), R"( {"seed":0 } )");
  EXPECT_NE(DistinctBody(kDefaultBody, 3), DistinctBody(kDefaultBody, 4));
  EXPECT_THROW(DistinctBody("[1]", 1), std::invalid_argument);
}

TEST(StreamingBodyTest, FlipsTheFlag) {
  EXPECT_EQ(StreamingBody(R"({"a":1,"stream":false})"), R"({"a":1,"stream":true})");
  EXPECT_NE(StreamingBody(kDefaultBody).find(R"("stream":true)"), std::string::npos);
  EXPECT_THROW(StreamingBody(R"({"stream": false})"), std::invalid_argument);
}

TEST(BuildRequestTest, ExactBytes) {
  const std::string request =
      BuildRequest(ParseUrl("http://127.0.0.1:8080/v1/x"), "{}", {"Authorization: Bearer k"});
  EXPECT_EQ(request,
            "POST /v1/x HTTP/1.1\r\nHost: 127.0.0.1:8080\r\nContent-Type: application/json\r\n"
            "Content-Length: 2\r\nAuthorization: Bearer k\r\n\r\n{}");
}

TEST(BuildRequestTest, OwnContentTypeAndBadHeaders) {
  const std::string request =
      BuildRequest(ParseUrl("http://h/"), "x", {"content-type: text/plain"});
  EXPECT_EQ(request.find("application/json"), std::string::npos);
  EXPECT_NE(request.find("Host: h\r\n"), std::string::npos);
  EXPECT_THROW(BuildRequest(ParseUrl("http://h/"), "x", {"NoColon"}), std::invalid_argument);
  EXPECT_THROW(BuildRequest(ParseUrl("http://h/"), "x", {"Host: other"}), std::invalid_argument);
}

}  // namespace
}  // namespace turnpike::loadgen
