// Internal to config/: the "host:port" form of server.listen.
//
// Accepts "127.0.0.1:8080", "localhost:0", "0.0.0.0:80" and bracketed IPv6 "[::1]:8080".
// The host is returned without brackets. Throws ConfigError mentioning `key`.
#pragma once

#include <cstdint>
#include <string>

namespace turnpike::config {

struct ListenAddress {
  std::string host;
  uint16_t port = 0;
};

ListenAddress ParseListen(const std::string& key, const std::string& text);

// The inverse of ParseListen: brackets an IPv6 host.
std::string FormatListen(const std::string& host, uint16_t port);

}  // namespace turnpike::config
