// HTTP/2 header fields as nghttp2 takes them, shared by the server codec (http/http2_connection)
// and the client codec (upstream/h2_session): a name/value pair over views, and HTTP/1.1-style
// "Name: value\r\n" header lines turned into fields with lower-case names.
//
// Ownership: nghttp2 copies the fields when a frame is submitted, so the views (and the
// `names` buffer the lowered names are written to) need to live only through the submit.
// Thread safety: pure functions.
#pragma once

#include <nghttp2/nghttp2.h>

#include <cctype>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>

namespace turnpike::net {

// `flags`: NGHTTP2_NV_FLAG_NO_INDEX for a value new in every message (a request id, a trace
// id): sent never indexed, it does not churn the connection's HPACK dynamic table.
inline nghttp2_nv H2Field(std::string_view name, std::string_view value,
                          uint8_t flags = NGHTTP2_NV_FLAG_NONE) {
  return nghttp2_nv{reinterpret_cast<uint8_t*>(const_cast<char*>(name.data())),
                    reinterpret_cast<uint8_t*>(const_cast<char*>(value.data())), name.size(),
                    value.size(), flags};
}

inline std::string_view H2View(const uint8_t* data, size_t size) {
  return std::string_view(reinterpret_cast<const char*>(data), size);
}

// Fields that only mean something to HTTP/1.1 and are malformed in HTTP/2 (RFC 9113 8.2.2).
inline bool IsH2ConnectionSpecific(std::string_view lower_name) {
  return lower_name == "connection" || lower_name == "keep-alive" ||
         lower_name == "transfer-encoding" || lower_name == "upgrade" ||
         lower_name == "proxy-connection";
}

// Appends the fields of `lines` ("Name: value\r\n"...) to nva[n..] while there is room, the
// names lowered into `names` (resized to lines.size()), leaving out connection-specific fields
// and those `skip(lower_name)` names. Returns the new count.
template <typename Skip>
size_t AppendH2HeaderLines(std::string_view lines, std::string& names, std::span<nghttp2_nv> nva,
                           size_t n, Skip skip) {
  names.assign(lines.size(), '\0');
  size_t at = 0;
  while (!lines.empty() && n < nva.size()) {
    const size_t end = lines.find("\r\n");
    const std::string_view line = lines.substr(0, end);
    lines.remove_prefix(end == std::string_view::npos ? lines.size() : end + 2);
    const size_t colon = line.find(':');
    if (colon == std::string_view::npos || colon == 0) continue;
    char* name = names.data() + at;
    for (size_t i = 0; i < colon; ++i) {
      name[i] = static_cast<char>(std::tolower(static_cast<unsigned char>(line[i])));
    }
    at += colon;
    const std::string_view lower(name, colon);
    if (IsH2ConnectionSpecific(lower) || skip(lower)) continue;
    std::string_view value = line.substr(colon + 1);
    while (!value.empty() && value.front() == ' ') value.remove_prefix(1);
    nva[n++] = H2Field(lower, value);
  }
  return n;
}

}  // namespace turnpike::net
