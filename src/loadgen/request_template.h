// The target URL and the exact request bytes the load generator sends.
//
// Every request is a POST built once at start-up: one buffer for the plain request and, if
// --stream-every is used, one for the streaming request. A connection writes one of the two
// buffers as is (one write per request, nothing formatted on the hot path).
//
// The streaming body is the plain body with its first `"stream":false` replaced by
// `"stream":true` (exact text, no spaces). The default body contains that text.
//
// Errors: start-up only; the functions throw std::invalid_argument with a message for the
// user.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace turnpike::loadgen {

// A small OpenAI chat request for the mock provider's `bench-model`.
inline constexpr std::string_view kDefaultBody =
    R"({"model":"bench-model","messages":[{"role":"user","content":"Say hello."}],)"
    R"("max_tokens":20,"stream":false})";

struct Target {
  std::string host;  // name or address as written in the URL (no brackets)
  std::string port;  // "80" when the URL has none
  std::string path;  // "/" when the URL has none; includes the query
};

// Parses "http://host[:port][/path]". https and other schemes are refused.
Target ParseUrl(std::string_view url);

// The plain body with `"stream":false` turned into `"stream":true`; throws if it is absent.
std::string StreamingBody(std::string_view body);

// Variant `i` of a JSON object body: `"seed":i` added as its first member, so that a response
// cache sees a different request (the mock provider ignores it). Throws if the body does not
// start with '{'.
std::string DistinctBody(std::string_view body, int i);

// The full HTTP/1.1 request: request line, Host, Content-Type (unless `headers` has one),
// Content-Length, then `headers` ("Name: value" each, validated), then the body.
std::string BuildRequest(const Target& target, std::string_view body,
                         const std::vector<std::string>& headers);

}  // namespace turnpike::loadgen
