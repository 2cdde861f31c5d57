#include <gtest/gtest.h>

#include "config/config.h"
#include "config/describe.h"

namespace turnpike::config {
namespace {

constexpr const char* kModels = R"(
models:
  - name: m
    deployments: [{provider: openai, base_url: "http://h"}]
)";

TEST(TelemetryConfigTest, OffByDefault) {
  const Config c = ParseConfig(kModels);
  EXPECT_TRUE(c.telemetry.otlp.endpoint.empty());
  EXPECT_EQ(c.telemetry.otlp.sampling_ratio, 1.0);
  EXPECT_EQ(c.telemetry.otlp.queue_size, 2'048u);
  EXPECT_EQ(c.telemetry.otlp.batch_size, 512u);
  EXPECT_EQ(c.telemetry.otlp.protocol, "http/protobuf");
  EXPECT_EQ(DescribeConfig(c).find("telemetry"), std::string::npos);
}

TEST(TelemetryConfigTest, ReadsEveryKey) {
  setenv("TURNPIKE_TEST_OTLP_TOKEN", "s3cret", 1);
  const Config c = ParseConfig(std::string(R"(
telemetry:
  otlp:
    endpoint: http://collector:4318/v1/traces
    protocol: http/json
    sampling_ratio: 0.25
    headers: {authorization: "Bearer ${TURNPIKE_TEST_OTLP_TOKEN}", x-team: a}
    queue_size: 100
    batch_size: 10
    export_interval: 250ms
    timeout: 2s
)") + kModels);
  const OtlpConfig& o = c.telemetry.otlp;
  EXPECT_EQ(o.endpoint, "http://collector:4318/v1/traces");
  EXPECT_EQ(o.protocol, "http/json");
  EXPECT_EQ(o.sampling_ratio, 0.25);
  ASSERT_EQ(o.headers.size(), 2u);
  EXPECT_EQ(o.headers[0].first, "authorization");
  EXPECT_EQ(o.headers[0].second, "Bearer s3cret");
  EXPECT_EQ(o.headers[1].first, "x-team");
  EXPECT_EQ(o.queue_size, 100u);
  EXPECT_EQ(o.batch_size, 10u);
  EXPECT_EQ(o.export_interval, std::chrono::milliseconds(250));
  EXPECT_EQ(o.timeout, std::chrono::milliseconds(2'000));
  EXPECT_NE(
      DescribeConfig(c).find("telemetry: OpenTelemetry traces to http://collector:4318/v1/traces "
                             "(http/json, sampling 0.25"),
      std::string::npos);
}

TEST(TelemetryConfigTest, RejectsBadValues) {
  const char* bad[] = {
      "telemetry: {otlp: {endpoint: ftp://x}}\n",
      "telemetry: {otlp: {endpoint: https://x/v1/traces}}\n",  // http only
      "telemetry: {otlp: {sampling_ratio: 1.5}}\n",
      "telemetry: {otlp: {protocol: grpc}}\n",  // OTLP/gRPC: not spoken
      "telemetry: {otlp: {queue_size: 0}}\n",
      "telemetry: {otlp: {export_interval: 0s}}\n",
      "telemetry: {otlp: {headers: [a, b]}}\n",
      "telemetry: {otlp: {nope: 1}}\n",
      "telemetry: {zipkin: {}}\n",
  };
  for (const char* text : bad) {
    EXPECT_THROW(ParseConfig(std::string(text) + kModels), ConfigError) << text;
  }
}

}  // namespace
}  // namespace turnpike::config
