#include "loadgen/request_template.h"

#include <stdexcept>

namespace turnpike::loadgen {
namespace {

constexpr std::string_view kHttpScheme = "http://";
constexpr std::string_view kDefaultPort = "80";
constexpr std::string_view kStreamOff = R"("stream":false)";
constexpr std::string_view kStreamOn = R"("stream":true)";

bool StartsWithIgnoreCase(std::string_view s, std::string_view prefix) {
  if (s.size() < prefix.size()) return false;
  for (size_t i = 0; i < prefix.size(); ++i) {
    const char c = s[i] >= 'A' && s[i] <= 'Z' ? static_cast<char>(s[i] + ('a' - 'A')) : s[i];
    if (c != prefix[i]) return false;
  }
  return true;
}

bool EqualsIgnoreCase(std::string_view a, std::string_view b) {
  return a.size() == b.size() && StartsWithIgnoreCase(a, b);
}

}  // namespace

Target ParseUrl(std::string_view url) {
  if (!StartsWithIgnoreCase(url, kHttpScheme)) {
    throw std::invalid_argument("--url must start with http:// (https is not supported)");
  }
  std::string_view rest = url.substr(kHttpScheme.size());
  const size_t slash = rest.find('/');
  std::string_view authority = rest.substr(0, slash);
  Target target;
  target.path = slash == std::string_view::npos ? "/" : std::string(rest.substr(slash));
  if (authority.empty()) throw std::invalid_argument("--url has no host");
  std::string_view port = kDefaultPort;
  if (authority.front() == '[') {  // [::1]:8080
    const size_t close = authority.find(']');
    if (close == std::string_view::npos) throw std::invalid_argument("--url: unclosed '['");
    target.host = std::string(authority.substr(1, close - 1));
    authority.remove_prefix(close + 1);
    if (!authority.empty() && authority.front() == ':') port = authority.substr(1);
  } else {
    const size_t colon = authority.rfind(':');
    target.host = std::string(authority.substr(0, colon));
    if (colon != std::string_view::npos) port = authority.substr(colon + 1);
  }
  if (target.host.empty() || port.empty() ||
      port.find_first_not_of("0123456789") != std::string_view::npos) {
    throw std::invalid_argument("--url: bad host or port in '" + std::string(url) + "'");
  }
  target.port = std::string(port);
  return target;
}

std::string StreamingBody(std::string_view body) {
  const size_t at = body.find(kStreamOff);
  if (at == std::string_view::npos) {
    throw std::invalid_argument(
        "--stream-every needs the body to contain the exact text \"stream\":false");
  }
  std::string out(body);
  out.replace(at, kStreamOff.size(), kStreamOn);
  return out;
}

std::string DistinctBody(std::string_view body, int i) {
  const size_t open = body.find_first_not_of(" \t\r\n");
  if (open == std::string_view::npos || body[open] != '{') {
    throw std::invalid_argument("--distinct needs a JSON object body");
  }
  std::string out(body.substr(0, open + 1));
  out += "\"seed\":" + std::to_string(i);
  const size_t next = body.find_first_not_of(" \t\r\n", open + 1);
  if (next != std::string_view::npos && body[next] != '}') out += ',';
  out += body.substr(open + 1);
  return out;
}

std::string BuildRequest(const Target& target, std::string_view body,
                         const std::vector<std::string>& headers) {
  bool has_content_type = false;
  std::string extra;
  for (const std::string& header : headers) {
    const size_t colon = header.find(':');
    if (colon == 0 || colon == std::string::npos ||
        header.find_first_of("\r\n") != std::string::npos) {
      throw std::invalid_argument("-H must look like 'Name: value', got '" + header + "'");
    }
    const std::string_view name = std::string_view(header).substr(0, colon);
    if (EqualsIgnoreCase(name, "content-length") || EqualsIgnoreCase(name, "host")) {
      throw std::invalid_argument("-H cannot set Host or Content-Length");
    }
    if (EqualsIgnoreCase(name, "content-type")) has_content_type = true;
    extra += header;
    extra += "\r\n";
  }
  const bool default_port = target.port == kDefaultPort;
  const bool ipv6 = target.host.find(':') != std::string::npos;
  std::string host = ipv6 ? "[" + target.host + "]" : target.host;
  if (!default_port) host += ":" + target.port;

  std::string request = "POST " + target.path + " HTTP/1.1\r\nHost: " + host + "\r\n";
  if (!has_content_type) request += "Content-Type: application/json\r\n";
  request += "Content-Length: " + std::to_string(body.size()) + "\r\n";
  request += extra;
  request += "\r\n";
  request += body;
  return request;
}

}  // namespace turnpike::loadgen
