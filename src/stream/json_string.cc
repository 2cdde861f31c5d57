#include "stream/json_string.h"

#include <cstdint>

#include "stream/byte_scan.h"

namespace turnpike::stream {
namespace {

void AppendUtf8(std::string& to, uint32_t cp) {
  if (cp < 0x80) {
    to.push_back(static_cast<char>(cp));
  } else if (cp < 0x800) {
    to.push_back(static_cast<char>(0xC0 | (cp >> 6)));
    to.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else if (cp < 0x10000) {
    to.push_back(static_cast<char>(0xE0 | (cp >> 12)));
    to.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    to.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else {
    to.push_back(static_cast<char>(0xF0 | (cp >> 18)));
    to.push_back(static_cast<char>(0x80 | ((cp >> 12) & 0x3F)));
    to.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    to.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  }
}

}  // namespace

bool AppendDecodedStringBody(std::string_view body, std::string& to) {
  const char* p = body.data();
  const char* const end = p + body.size();
  for (;;) {
    const char* special = FindStringSpecial(p, end);
    to.append(p, static_cast<size_t>(special - p));
    if (special == end) return true;
    p = special;
    const auto c = static_cast<unsigned char>(*p);
    if (c >= 0x80) {
      const int length = Utf8SequenceLength(p, end);
      if (length == 0) return false;
      to.append(p, static_cast<size_t>(length));
      p += length;
      continue;
    }
    if (c != '\\' || end - p < 2) return false;  // a quote or a control character ends it here
    const char kind = p[1];
    p += 2;
    switch (kind) {
      case '"':
      case '\\':
      case '/':
        to.push_back(kind);
        break;
      case 'b':
        to.push_back('\b');
        break;
      case 'f':
        to.push_back('\f');
        break;
      case 'n':
        to.push_back('\n');
        break;
      case 'r':
        to.push_back('\r');
        break;
      case 't':
        to.push_back('\t');
        break;
      case 'u': {
        if (end - p < 4) return false;
        const int32_t high = Hex4(p);
        p += 4;
        if (high < 0 || (high >= 0xDC00 && high <= 0xDFFF)) return false;  // a low one first
        uint32_t cp = static_cast<uint32_t>(high);
        if (high >= 0xD800 && high <= 0xDBFF) {
          if (end - p < 6 || p[0] != '\\' || p[1] != 'u') return false;
          const int32_t low = Hex4(p + 2);
          if (low < 0xDC00 || low > 0xDFFF) return false;
          cp = 0x10000 + ((cp - 0xD800) << 10) + static_cast<uint32_t>(low - 0xDC00);
          p += 6;
        }
        AppendUtf8(to, cp);
        break;
      }
      default:
        return false;
    }
  }
}

bool IsUnescapedStringBody(std::string_view bytes) {
  const char* p = bytes.data();
  const char* const end = p + bytes.size();
  for (;;) {
    p = FindStringSpecial(p, end);
    if (p == end) return true;
    if (static_cast<unsigned char>(*p) < 0x80) return false;  // a quote, backslash or control
    const int length = Utf8SequenceLength(p, end);
    if (length == 0) return false;
    p += length;
  }
}

}  // namespace turnpike::stream
