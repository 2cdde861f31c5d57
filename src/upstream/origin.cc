#include "upstream/origin.h"

#include <boost/url/parse.hpp>

namespace turnpike::upstream {

Result<Origin> ParseOrigin(std::string_view base_url, bool tls_verify) {
  auto parsed = boost::urls::parse_absolute_uri(base_url);
  auto fail = [&](std::string why) {
    return Error{ErrorCode::kInvalidRequest,
                 "invalid base URL \"" + std::string(base_url) + "\": " + why, ""};
  };
  if (!parsed) return fail(parsed.error().message());
  Origin origin;
  const auto scheme = parsed->scheme();
  if (scheme == "https") {
    origin.tls = true;
  } else if (scheme != "http") {
    return fail("scheme must be http or https");
  }
  origin.tls_verify = tls_verify;
  origin.host = std::string(parsed->encoded_host_address());
  if (origin.host.empty()) return fail("no host");
  const uint16_t default_port = origin.tls ? 443 : 80;
  origin.port = parsed->has_port() ? parsed->port_number() : default_port;
  if (origin.port == 0) return fail("invalid port");
  std::string path(parsed->encoded_path());
  while (!path.empty() && path.back() == '/') path.pop_back();
  origin.base_path = path;
  origin.key = std::string(scheme) + "://" + origin.host + ":" + std::to_string(origin.port);
  origin.host_header = origin.host;
  if (origin.port != default_port) origin.host_header += ":" + std::to_string(origin.port);
  return origin;
}

}  // namespace turnpike::upstream
