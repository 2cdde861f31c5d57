// libFuzzer target: the LLM request digest (cache/request_digest.h) over any bytes. It must
// never crash or read outside the body, and must agree with Boost.JSON (parsing with the same
// depth bound):
//   - what Boost.JSON parses, the digester accepts;
//   - the digest of the input equals the digest of boost::json::serialize of the parsed value
//     (the same members in the same order, whitespace, escapes and numbers rewritten), and of
//     the serialized value with every object's members reversed.
// The second property is checked only where Boost.JSON keeps what the input says:
//   - no number in the value is a double: Boost.JSON parses every number with a fraction or an
//     exponent, and integers beyond 64 bits, into a double and writes its shortest round-trip
//     form, which drops digits the digester keeps (1.00000000000000000001 becomes 1E0, and
//     18446744073709551616 becomes 1.8446744073709552E19);
//   - no object has a member name twice: Boost.JSON keeps the last, the digester all of them.
// The reversed-members property holds for doubles too (both sides are Boost.JSON's text), but
// not for infinities: Boost.JSON writes 1e400 back as Infinity, which is not JSON.
// And for any bytes, the small bodies' path (request_digest_small.h) agrees with the general
// one alone: the same digest and canonical text, or the same error message.
#include <boost/json.hpp>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "cache/request_digest.h"

namespace {

namespace json = boost::json;
using turnpike::cache::Digest128;
using turnpike::cache::RequestDigester;

constexpr uint64_t kSeed = 0x5eed;
constexpr std::string_view kExcluded[] = {"stream", "user", "metadata"};

struct Census {
  size_t members = 0;
  bool doubles = false;
  bool infinities = false;
};

void Count(const json::value& value, Census& census) {
  if (value.is_double()) {
    census.doubles = true;
    census.infinities |= !std::isfinite(value.get_double());
  } else if (value.is_array()) {
    for (const json::value& element : value.get_array()) Count(element, census);
  } else if (value.is_object()) {
    census.members += value.get_object().size();
    for (const auto& member : value.get_object()) Count(member.value(), census);
  }
}

// Members in the text of valid JSON: its colons outside strings.
size_t MembersInText(std::string_view text) {
  size_t colons = 0;
  bool in_string = false;
  for (size_t i = 0; i < text.size(); ++i) {
    if (in_string) {
      if (text[i] == '\\') {
        ++i;
      } else if (text[i] == '"') {
        in_string = false;
      }
    } else if (text[i] == '"') {
      in_string = true;
    } else if (text[i] == ':') {
      ++colons;
    }
  }
  return colons;
}

json::value Reversed(const json::value& value) {
  if (value.is_array()) {
    json::array out;
    for (const json::value& element : value.get_array()) out.push_back(Reversed(element));
    return out;
  }
  if (!value.is_object()) return value;
  const json::object& object = value.get_object();
  json::object out;
  for (auto member = object.end(); member != object.begin();) {
    --member;
    out[member->key()] = Reversed(member->value());
  }
  return out;
}

Digest128 MustDigest(RequestDigester& digester, std::string_view body) {
  turnpike::Result<Digest128> digest = digester.Of(body, kExcluded);
  if (!digest.ok()) __builtin_trap();
  return *digest;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static RequestDigester digester(kSeed);
  static RequestDigester general = [] {
    RequestDigester general_only(kSeed);
    general_only.set_small_path(false);
    return general_only;
  }();
  const std::string_view body(reinterpret_cast<const char*>(data), size);
  turnpike::Result<Digest128> digest = digester.Of(body, kExcluded);
  const turnpike::Result<Digest128> general_digest = general.Of(body, kExcluded);
  if (digest.ok() != general_digest.ok()) __builtin_trap();
  if (digest.ok() && (*digest != *general_digest || digester.canonical() != general.canonical())) {
    __builtin_trap();
  }
  if (!digest.ok() && digest.error().message != general_digest.error().message) __builtin_trap();

  json::parse_options options;
  options.max_depth = RequestDigester::kMaxDepth;
  boost::system::error_code ec;
  const json::value value = json::parse(body, ec, {}, options);
  if (ec) return 0;
  if (!digest.ok()) __builtin_trap();

  Census census;
  Count(value, census);
  if (census.infinities) return 0;
  const Digest128 serialized = MustDigest(digester, json::serialize(value));
  if (MustDigest(digester, json::serialize(Reversed(value))) != serialized) __builtin_trap();
  if (!census.doubles && census.members == MembersInText(body) && serialized != *digest) {
    __builtin_trap();
  }
  return 0;
}
