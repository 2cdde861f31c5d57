#include <gtest/gtest.h>

#include <cstdlib>

#include "config/config.h"

namespace turnpike::config {
namespace {

// Sets (or unsets, for nullptr) one variable for the scope of a test.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value) : name_(name) {
    if (value == nullptr) {
      unsetenv(name);
    } else {
      setenv(name, value, 1);
    }
  }
  ~ScopedEnv() { unsetenv(name_); }

 private:
  const char* name_;
};

constexpr const char* kTemplate = R"(
server:
  listen: ${TP_TEST_HOST:-0.0.0.0}:${TP_TEST_PORT}
  workers: ${TP_TEST_WORKERS:-2}
models:
  - name: m
    deployments:
      - provider: openai
        base_url: ${TP_TEST_URL:-http://fallback:1}/v1
        api_key: "Bearer ${TP_TEST_KEY}"
)";

TEST(EnvSubstitutionTest, SetVariablesAreSubstitutedInEveryScalar) {
  ScopedEnv host("TP_TEST_HOST", "10.1.2.3");
  ScopedEnv port("TP_TEST_PORT", "7000");
  ScopedEnv workers("TP_TEST_WORKERS", "6");
  ScopedEnv url("TP_TEST_URL", "https://example.com");
  ScopedEnv key("TP_TEST_KEY", "sk-123");
  const Config c = ParseConfig(kTemplate);
  EXPECT_EQ(c.server.host, "10.1.2.3");
  EXPECT_EQ(c.server.port, 7000);
  EXPECT_EQ(c.server.workers, 6);
  EXPECT_EQ(c.models[0].deployments[0].base_url, "https://example.com/v1");
  EXPECT_EQ(c.models[0].deployments[0].api_key, "Bearer sk-123");
}

TEST(EnvSubstitutionTest, DefaultsApplyWhenUnsetOrEmpty) {
  ScopedEnv host("TP_TEST_HOST", nullptr);
  ScopedEnv port("TP_TEST_PORT", "7000");
  ScopedEnv workers("TP_TEST_WORKERS", "");
  ScopedEnv url("TP_TEST_URL", nullptr);
  ScopedEnv key("TP_TEST_KEY", "");  // set but empty, no default: substituted as ""
  const Config c = ParseConfig(kTemplate);
  EXPECT_EQ(c.server.host, "0.0.0.0");
  EXPECT_EQ(c.server.workers, 2);
  EXPECT_EQ(c.models[0].deployments[0].base_url, "http://fallback:1/v1");
  EXPECT_EQ(c.models[0].deployments[0].api_key, "Bearer ");
}

TEST(EnvSubstitutionTest, UnsetVariableWithoutDefaultNamesKeyAndVariable) {
  ScopedEnv port("TP_TEST_PORT", "7000");
  ScopedEnv key("TP_TEST_KEY", nullptr);
  try {
    ParseConfig(kTemplate);
    FAIL() << "expected ConfigError";
  } catch (const ConfigError& e) {
    const std::string message = e.what();
    EXPECT_NE(message.find("models[0].deployments[0].api_key:"), std::string::npos) << message;
    EXPECT_NE(message.find("TP_TEST_KEY"), std::string::npos) << message;
  }
}

TEST(SubstituteEnvTest, Forms) {
  ScopedEnv a("TP_TEST_A", "alpha");
  ScopedEnv b("TP_TEST_B", nullptr);
  EXPECT_EQ(SubstituteEnv("k", "plain $ text {}"), "plain $ text {}");
  EXPECT_EQ(SubstituteEnv("k", "${TP_TEST_A}"), "alpha");
  EXPECT_EQ(SubstituteEnv("k", "x${TP_TEST_A}y${TP_TEST_A}z"), "xalphayalphaz");
  EXPECT_EQ(SubstituteEnv("k", "${TP_TEST_B:-}"), "");
  EXPECT_EQ(SubstituteEnv("k", "${TP_TEST_B:-a:b-c}"), "a:b-c");
  EXPECT_EQ(SubstituteEnv("k", "${TP_TEST_A:-unused}"), "alpha");
  EXPECT_THROW(SubstituteEnv("k", "${TP_TEST_B}"), ConfigError);
  EXPECT_THROW(SubstituteEnv("k", "${TP_TEST_A"), ConfigError);
  EXPECT_THROW(SubstituteEnv("k", "${}"), ConfigError);
  EXPECT_THROW(SubstituteEnv("k", "${1ABC}"), ConfigError);
  try {
    SubstituteEnv("server.listen", "${TP_TEST_A");
  } catch (const ConfigError& e) {
    EXPECT_EQ(std::string(e.what()).rfind("server.listen: unterminated", 0), 0u) << e.what();
  }
}

}  // namespace
}  // namespace turnpike::config
