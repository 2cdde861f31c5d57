#include "doors/search/qdrant/client.h"

#include <algorithm>
#include <boost/json/parse.hpp>

#include "doors/search/es_error.h"
#include "upstream/call.h"

namespace turnpike::search::qdrant {
namespace {

using std::chrono::milliseconds;

// Qdrant's `status.error` of a refusal, or the start of the body.
std::string Reason(const std::string& body) {
  constexpr size_t kQuoted = 300;
  boost::system::error_code ec;
  boost::json::value v = boost::json::parse(body, ec);
  if (!ec && v.is_object()) {
    const auto* status = v.as_object().if_contains("status");
    if (status != nullptr && status->is_object()) {
      const auto* error = status->as_object().if_contains("error");
      if (error != nullptr && error->is_string()) return std::string(error->as_string());
    }
  }
  return body.substr(0, kQuoted);
}

}  // namespace

Client::Client(upstream::Pool& pool, const Settings& settings) : pool_(pool), settings_(settings) {
  if (!settings_.api_key.empty()) api_key_header_ = "api-key: " + settings_.api_key;
}

Awaitable<Result<boost::json::value>> Client::Call(std::string_view method, std::string_view target,
                                                   std::string_view body, Deadline deadline) {
  const auto left = std::chrono::duration_cast<milliseconds>(deadline - Clock::now());
  if (left <= milliseconds(0)) {
    co_return EsError(kTimeout, "the qdrant call missed its deadline", ErrorCode::kUpstreamTimeout);
  }
  upstream::CallOptions options;
  options.connect_timeout = left;
  options.first_byte_timeout = left;
  options.idle_timeout = left;
  std::string full_target = settings_.origin.base_path;
  full_target.append(target);
  if (method != "GET") {
    // Qdrant's own deadline for the operation (whole seconds, at least 1): it stops working on
    // a request this gateway has stopped waiting for. Every non-GET call here declares it.
    const int64_t seconds = std::max<int64_t>(1, (left.count() + 999) / 1000);
    full_target += target.find('?') == std::string_view::npos ? "?timeout=" : "&timeout=";
    full_target += std::to_string(seconds);
  }
  upstream::OutgoingRequest request;
  request.method = method;
  request.target = full_target;
  request.body = body;
  request.accept = "application/json";
  request.extra_headers = api_key_header_;
  ++calls_;
  upstream::Call call(pool_, settings_.origin, options);
  Status started = co_await call.Start(request);
  if (!started.ok()) {
    if (started.error().code == ErrorCode::kUpstreamTimeout) {
      co_return EsError(kTimeout, "qdrant: " + started.error().message,
                        ErrorCode::kUpstreamTimeout);
    }
    co_return Error{ErrorCode::kUnavailable, "qdrant unreachable: " + started.error().message, ""};
  }
  Result<std::string> answer = co_await call.ReadAll(settings_.max_answer_bytes);
  if (!answer.ok()) {
    const ErrorCode code = answer.error().code == ErrorCode::kUpstreamTimeout
                               ? ErrorCode::kUpstreamTimeout
                               : ErrorCode::kUpstreamBadResponse;
    co_return Error{code, "qdrant: " + answer.error().message, ""};
  }
  const unsigned status = call.status();
  if (status == 404) {
    co_return EsError(kIndexNotFound, "no such index", ErrorCode::kNotFound);
  }
  if (status != 200) {
    co_return Error{ErrorCode::kUpstreamBadResponse,
                    "qdrant answered " + std::to_string(status) + " to " + std::string(method) +
                        " " + std::string(target) + ": " + Reason(*answer),
                    ""};
  }
  boost::system::error_code ec;
  boost::json::value parsed = boost::json::parse(*answer, ec);
  if (ec || !parsed.is_object() || !parsed.as_object().contains("result")) {
    co_return Error{ErrorCode::kUpstreamBadResponse, "qdrant: an answer without a result", ""};
  }
  co_return std::move(parsed.as_object()["result"]);
}

}  // namespace turnpike::search::qdrant
