// server.tls: the single pair, the SNI list, the defaults, and each invalid shape named by its
// key path.
#include <gtest/gtest.h>

#include <string>

#include "config/config.h"

namespace turnpike::config {
namespace {

constexpr const char* kModels = R"(
models:
  - name: m
    deployments: [{provider: openai, base_url: "http://h"}]
)";

Config Parse(const std::string& server) { return ParseConfig(server + kModels); }

std::string ErrorOf(const std::string& server) {
  try {
    Parse(server);
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "(accepted)";
}

TEST(TlsConfigTest, AbsentMeansCleartext) {
  const Config c = Parse("server: {listen: '127.0.0.1:0'}");
  EXPECT_FALSE(c.server.tls.enabled());
  const Config null_tls = Parse("server: {tls: }");
  EXPECT_FALSE(null_tls.server.tls.enabled());
}

TEST(TlsConfigTest, SinglePairAndDefaults) {
  const Config c = Parse("server: {tls: {cert_file: /c.pem, key_file: /k.pem}}");
  const TlsConfig& t = c.server.tls;
  ASSERT_TRUE(t.enabled());
  ASSERT_EQ(t.certificates.size(), 1u);
  EXPECT_EQ(t.certificates[0].cert_file, "/c.pem");
  EXPECT_EQ(t.certificates[0].key_file, "/k.pem");
  EXPECT_EQ(t.min_version, "1.2");
  EXPECT_EQ(t.ciphers, "");
  EXPECT_EQ(t.client_ca_file, "");
  EXPECT_FALSE(t.require_client_cert);
  EXPECT_EQ(t.handshake_timeout, Millis(10'000));
}

TEST(TlsConfigTest, PairFirstThenTheSniList) {
  const Config c = Parse(R"(
server:
  tls:
    cert_file: /default.pem
    key_file: /default.key
    certificates:
      - {cert_file: /a.pem, key_file: /a.key}
      - {cert_file: /b.pem, key_file: /b.key}
    min_version: "1.3"
    ciphers: ECDHE-RSA-AES128-GCM-SHA256
    client_ca_file: /ca.pem
    require_client_cert: true
    handshake_timeout: 2s
)");
  const TlsConfig& t = c.server.tls;
  ASSERT_EQ(t.certificates.size(), 3u);
  EXPECT_EQ(t.certificates[0].cert_file, "/default.pem");
  EXPECT_EQ(t.certificates[1].key_file, "/a.key");
  EXPECT_EQ(t.certificates[2].cert_file, "/b.pem");
  EXPECT_EQ(t.min_version, "1.3");
  EXPECT_EQ(t.ciphers, "ECDHE-RSA-AES128-GCM-SHA256");
  EXPECT_EQ(t.client_ca_file, "/ca.pem");
  EXPECT_TRUE(t.require_client_cert);
  EXPECT_EQ(t.handshake_timeout, Millis(2'000));
}

TEST(TlsConfigTest, ListAloneMakesItsFirstTheDefault) {
  const Config c = Parse("server: {tls: {certificates: [{cert_file: /a.pem, key_file: /a.key}]}}");
  ASSERT_EQ(c.server.tls.certificates.size(), 1u);
  EXPECT_EQ(c.server.tls.certificates[0].cert_file, "/a.pem");
}

TEST(TlsConfigTest, InvalidShapesNameTheKey) {
  EXPECT_NE(ErrorOf("server: {tls: {cert_file: /c.pem}}").find("server.tls.key_file: required"),
            std::string::npos);
  EXPECT_NE(ErrorOf("server: {tls: {min_version: '1.3'}}")
                .find("server.tls: needs cert_file and key_file"),
            std::string::npos);
  EXPECT_NE(ErrorOf("server: {tls: {cert_file: c, key_file: k, min_version: '1.1'}}")
                .find("server.tls.min_version: must be \"1.2\" or \"1.3\""),
            std::string::npos);
  EXPECT_NE(ErrorOf("server: {tls: {cert_file: c, key_file: k, require_client_cert: true}}")
                .find("server.tls.require_client_cert: needs client_ca_file"),
            std::string::npos);
  EXPECT_NE(ErrorOf("server: {tls: {certificates: [{cert_file: c}]}}")
                .find("server.tls.certificates[0].key_file: required"),
            std::string::npos);
  EXPECT_NE(ErrorOf("server: {tls: {certificates: {cert_file: c, key_file: k}}}")
                .find("server.tls.certificates: expected a list"),
            std::string::npos);
  EXPECT_NE(ErrorOf("server: {tls: {cert_file: c, key_file: k, certfile: x}}")
                .find("server.tls.certfile: unknown key"),
            std::string::npos);
  EXPECT_NE(ErrorOf("server: {tls: {cert_file: c, key_file: k, handshake_timeout: 0s}}")
                .find("server.tls.handshake_timeout: must be greater than 0"),
            std::string::npos);
}

// server.http2 sits beside tls: off by default, on with or without TLS, and a stream bound.
TEST(TlsConfigTest, Http2DefaultsAndBounds) {
  const Config off = Parse("server: {listen: '127.0.0.1:0'}");
  EXPECT_FALSE(off.server.http2);
  EXPECT_EQ(off.server.http2_max_concurrent_streams, 128u);
  const Config on = Parse("server: {http2: true, http2_max_concurrent_streams: 16}");
  EXPECT_TRUE(on.server.http2);
  EXPECT_EQ(on.server.http2_max_concurrent_streams, 16u);
  EXPECT_NE(ErrorOf("server: {http2_max_concurrent_streams: 0}")
                .find("server.http2_max_concurrent_streams"),
            std::string::npos);
  EXPECT_NE(ErrorOf("server: {http2: maybe}").find("server.http2"), std::string::npos);
}

}  // namespace
}  // namespace turnpike::config
