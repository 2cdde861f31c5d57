#include "config/listen.h"

#include <charconv>
#include <string_view>

#include "config/config.h"

namespace turnpike::config {
namespace {

constexpr int kMaxPort = 65535;

[[noreturn]] void Fail(const std::string& key, const std::string& problem) {
  throw ConfigError(key + ": " + problem);
}

uint16_t ParsePort(const std::string& key, std::string_view text) {
  int port = -1;
  const char* end = text.data() + text.size();
  auto [ptr, ec] = std::from_chars(text.data(), end, port);
  if (text.empty() || ptr != end || (ec != std::errc() && ec != std::errc::result_out_of_range)) {
    Fail(key, "port must be a number 0..65535, got \"" + std::string(text) + "\"");
  }
  if (ec == std::errc::result_out_of_range || port < 0 || port > kMaxPort) {
    Fail(key, "port must be 0..65535");
  }
  return static_cast<uint16_t>(port);
}

}  // namespace

ListenAddress ParseListen(const std::string& key, const std::string& text) {
  ListenAddress out;
  std::string_view port_text;
  if (!text.empty() && text.front() == '[') {
    const size_t close = text.find(']');
    if (close == std::string::npos) Fail(key, "missing ']' in \"" + text + "\"");
    if (close + 1 >= text.size() || text[close + 1] != ':') {
      Fail(key, "expected [ipv6]:port, got \"" + text + "\"");
    }
    out.host = text.substr(1, close - 1);
    port_text = std::string_view(text).substr(close + 2);
  } else {
    const size_t colon = text.rfind(':');
    if (colon == std::string::npos) Fail(key, "expected host:port, got \"" + text + "\"");
    out.host = text.substr(0, colon);
    if (out.host.find(':') != std::string::npos) {
      Fail(key, "an IPv6 address must be in brackets, e.g. [::1]:8080");
    }
    port_text = std::string_view(text).substr(colon + 1);
  }
  if (out.host.empty()) Fail(key, "missing host (use 0.0.0.0 to listen on all interfaces)");
  out.port = ParsePort(key, port_text);
  return out;
}

std::string FormatListen(const std::string& host, uint16_t port) {
  const bool ipv6 = host.find(':') != std::string::npos;
  return (ipv6 ? "[" + host + "]" : host) + ":" + std::to_string(port);
}

}  // namespace turnpike::config
