// Where a deployment lives: scheme, host, port and base path parsed from its base URL once at
// start-up, and whether it is spoken to over HTTP/2 (`http2`: h2_connection.h). Immutable;
// shared read-only by every worker.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "common/result.h"

namespace turnpike::upstream {

struct Origin {
  bool tls = false;
  bool tls_verify = true;
  // HTTP/2: ALPN "h2" over TLS (HTTP/1.1 if not selected), else by prior knowledge.
  bool http2 = false;
  std::string host;  // as written (name or address), also the TLS SNI and Host header
  uint16_t port = 0;
  std::string base_path;    // "" or "/v1" (no trailing slash)
  std::string key;          // "https://host:port": what a pooled connection is keyed by (an
                            // HTTP/2 origin's connections are apart: H2Pool)
  std::string host_header;  // "host" or "host:port" when the port is not the default
};

// Parses "http(s)://host[:port][/path]". Errors are kInvalidRequest with a message naming the URL.
Result<Origin> ParseOrigin(std::string_view base_url, bool tls_verify);

}  // namespace turnpike::upstream
