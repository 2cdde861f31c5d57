#include "core/openai_errors.h"

#include <gtest/gtest.h>

#include <boost/json/parse.hpp>

namespace turnpike::core {
namespace {

TEST(OpenAiErrorsTest, EnvelopeHasEveryFieldInOpenAisShape) {
  auto v = boost::json::parse(
      OpenAiErrorBody(Error{ErrorCode::kNotFound, "The model `x` does not exist", "model"}));
  const auto& e = v.at("error").as_object();
  EXPECT_EQ(e.at("message").as_string(), "The model `x` does not exist");
  EXPECT_EQ(e.at("type").as_string(), "invalid_request_error");
  EXPECT_EQ(e.at("param").as_string(), "model");
  EXPECT_EQ(e.at("code").as_string(), "model_not_found");

  auto w =
      boost::json::parse(OpenAiErrorBody(Error{ErrorCode::kUpstreamTimeout, "slow \"x\"", ""}));
  EXPECT_TRUE(w.at("error").at("param").is_null());
  EXPECT_EQ(w.at("error").at("type").as_string(), "server_error");
  EXPECT_EQ(w.at("error").at("code").as_string(), "upstream_timeout");
  EXPECT_EQ(w.at("error").at("message").as_string(), "slow \"x\"");
}

TEST(OpenAiErrorsTest, StreamEventIsOneSseDataEvent) {
  const std::string event =
      OpenAiStreamErrorEvent(Error{ErrorCode::kUpstreamUnavailable, "gone", ""});
  ASSERT_EQ(event.rfind("data: ", 0), 0u);
  ASSERT_EQ(event.substr(event.size() - 2), "\n\n");
  auto v = boost::json::parse(event.substr(6, event.size() - 8));
  EXPECT_EQ(v.at("error").at("code").as_string(), "upstream_unavailable");
}

}  // namespace
}  // namespace turnpike::core
