#include "providers/json_text.h"

#include <charconv>

namespace turnpike::providers {
namespace {
namespace od = simdjson::ondemand;
constexpr size_t kMaxDigits = 24;
}  // namespace

void AppendInt(std::string& out, int64_t value) {
  // Most numbers the encoders write (sequence numbers, indexes) are below 100.
  static constexpr char kPairs[] =
      "00010203040506070809101112131415161718192021222324252627282930313233343536373839"
      "40414243444546474849505152535455565758596061626364656667686970717273747576777879"
      "8081828384858687888990919293949596979899";
  if (value >= 0 && value < 100) {
    const char* pair = kPairs + 2 * value;
    if (value < 10) {
      out.push_back(pair[1]);
    } else {
      out.append(pair, 2);
    }
    return;
  }
  char digits[kMaxDigits];
  auto [end, ec] = std::to_chars(digits, digits + kMaxDigits, value);
  out.append(digits, end);
}

simdjson::error_code ReadEscaped(od::value value, std::string_view& out) {
  od::json_type type;
  if (auto e = value.type().get(type)) return e;
  if (type == od::json_type::null) {
    out = {};
    return simdjson::SUCCESS;
  }
  if (type != od::json_type::string) return simdjson::INCORRECT_TYPE;
  const std::string_view token = value.raw_json_token();
  const size_t close = token.find_last_of('"');
  if (close == 0 || close == std::string_view::npos) return simdjson::STRING_ERROR;
  out = token.substr(1, close - 1);
  // The first stage validated UTF-8 and string boundaries for the whole document; escapes and
  // control characters are checked only when unescaping. Most tokens have neither, and for
  // them the unescaping copy is skipped.
  bool plain = true;
  for (const char c : out) plain = plain && static_cast<unsigned char>(c) >= 0x20 && c != '\\';
  if (plain) return simdjson::SUCCESS;
  std::string_view unescaped;
  return value.get_string().get(unescaped);
}

simdjson::error_code ReadInt(od::value value, int64_t& out) {
  od::json_type type;
  if (auto e = value.type().get(type)) return e;
  if (type == od::json_type::null) return simdjson::SUCCESS;
  return value.get_int64().get(out);
}

}  // namespace turnpike::providers
