// The protobuf encoder against the JSON one: a strict decoder here (every length checked, every
// varint minimal, no unknown field) turns the protobuf message into the DOM of OTLP's JSON
// mapping, which must equal the JSON encoder's output for the same records.
#include <gtest/gtest.h>

#include <boost/json.hpp>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

#include "observability/otlp_encoding.h"
#include "observability/otlp_spans.h"
#include "span_record_fixtures.h"

namespace turnpike::observability {
namespace {
namespace json = boost::json;

// Reads one message's fields; a malformed message fails the test.
class Reader {
 public:
  explicit Reader(std::string_view bytes) : s_(bytes) {}
  bool done() const { return at_ == s_.size(); }

  uint64_t Varint() {
    uint64_t v = 0;
    for (int shift = 0; shift < 64; shift += 7) {
      if (at_ >= s_.size()) return Fail("a varint runs past the end");
      const auto b = static_cast<unsigned char>(s_[at_++]);
      v |= static_cast<uint64_t>(b & 0x7f) << shift;
      if ((b & 0x80) == 0) {
        if (b == 0 && shift > 0) return Fail("a varint is not minimal");
        return v;
      }
    }
    return Fail("a varint is too long");
  }
  uint64_t Fixed64() {
    if (s_.size() - at_ < 8) return Fail("a fixed64 runs past the end");
    uint64_t v = 0;
    for (int i = 7; i >= 0; --i) v = (v << 8) | static_cast<unsigned char>(s_[at_ + i]);
    at_ += 8;
    return v;
  }
  std::string_view Bytes() {
    const uint64_t n = Varint();
    if (n > s_.size() - at_) {
      Fail("a length runs past the end");
      return {};
    }
    const std::string_view out = s_.substr(at_, n);
    at_ += n;
    return out;
  }

 private:
  uint64_t Fail(const char* what) {
    ADD_FAILURE() << what << " at byte " << at_;
    at_ = s_.size();
    return 0;
  }
  std::string_view s_;
  size_t at_ = 0;
};

std::string Hex(std::string_view bytes) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  for (const char c : bytes) {
    out += kHex[static_cast<unsigned char>(c) >> 4];
    out += kHex[static_cast<unsigned char>(c) & 0xf];
  }
  return out;
}

// What each field of a message becomes in the JSON mapping.
enum class As { kString, kHex, kTime, kInt, kIntText, kBool, kDouble, kMessage };
struct Field;
using Schema = std::vector<Field>;
struct Field {
  uint32_t number;
  const char* name;
  As as;
  bool repeated = false;
  const Schema& (*message)() = nullptr;  // kMessage's fields
};

const Schema& AnyValue();
const Schema& ArrayValue() {
  static const Schema s = {{1, "values", As::kMessage, true, &AnyValue}};
  return s;
}
const Schema& AnyValue() {
  static const Schema s = {{1, "stringValue", As::kString},
                           {2, "boolValue", As::kBool},
                           {3, "intValue", As::kIntText},
                           {4, "doubleValue", As::kDouble},
                           {5, "arrayValue", As::kMessage, false, &ArrayValue}};
  return s;
}
const Schema& KeyValue() {
  static const Schema s = {{1, "key", As::kString}, {2, "value", As::kMessage, false, &AnyValue}};
  return s;
}
const Schema& Event() {
  static const Schema s = {{1, "timeUnixNano", As::kTime}, {2, "name", As::kString}};
  return s;
}
const Schema& Status() {
  static const Schema s = {{2, "message", As::kString}, {3, "code", As::kInt}};
  return s;
}
const Schema& Span() {
  static const Schema s = {{1, "traceId", As::kHex},
                           {2, "spanId", As::kHex},
                           {3, "traceState", As::kString},
                           {4, "parentSpanId", As::kHex},
                           {5, "name", As::kString},
                           {6, "kind", As::kInt},
                           {7, "startTimeUnixNano", As::kTime},
                           {8, "endTimeUnixNano", As::kTime},
                           {9, "attributes", As::kMessage, true, &KeyValue},
                           {11, "events", As::kMessage, true, &Event},
                           {15, "status", As::kMessage, false, &Status}};
  return s;
}
const Schema& Scope() {
  static const Schema s = {{1, "name", As::kString}};
  return s;
}
const Schema& ScopeSpans() {
  static const Schema s = {{1, "scope", As::kMessage, false, &Scope},
                           {2, "spans", As::kMessage, true, &Span}};
  return s;
}
const Schema& Resource() {
  static const Schema s = {{1, "attributes", As::kMessage, true, &KeyValue}};
  return s;
}
const Schema& ResourceSpans() {
  static const Schema s = {{1, "resource", As::kMessage, false, &Resource},
                           {2, "scopeSpans", As::kMessage, true, &ScopeSpans}};
  return s;
}
// ExportTraceServiceRequest.
const Schema& Request() {
  static const Schema s = {{1, "resourceSpans", As::kMessage, true, &ResourceSpans}};
  return s;
}

json::object Decode(std::string_view bytes, const Schema& schema);

json::value DecodeField(Reader& in, uint32_t wire, const Field& f) {
  const uint32_t want = f.as == As::kTime || f.as == As::kDouble                        ? 1
                        : f.as == As::kInt || f.as == As::kIntText || f.as == As::kBool ? 0
                                                                                        : 2;
  if (wire != want) {
    ADD_FAILURE() << f.name << ": wire type " << wire << ", expected " << want;
    return nullptr;
  }
  switch (f.as) {
    case As::kString:
      return json::string(in.Bytes());
    case As::kHex:
      return json::string(Hex(in.Bytes()));
    case As::kTime:
      return json::string(std::to_string(in.Fixed64()));
    case As::kInt:
      return static_cast<int64_t>(in.Varint());
    case As::kIntText:
      return json::string(std::to_string(static_cast<int64_t>(in.Varint())));
    case As::kBool:
      return in.Varint() != 0;
    case As::kDouble: {
      const uint64_t bits = in.Fixed64();
      double d;
      std::memcpy(&d, &bits, 8);
      return d;
    }
    case As::kMessage:
      return Decode(in.Bytes(), f.message());
  }
  return nullptr;
}

json::object Decode(std::string_view bytes, const Schema& schema) {
  json::object out;
  Reader in(bytes);
  while (!in.done()) {
    const uint64_t key = in.Varint();
    const auto number = static_cast<uint32_t>(key >> 3);
    const Field* field = nullptr;
    for (const Field& f : schema) field = f.number == number ? &f : field;
    if (field == nullptr) {
      ADD_FAILURE() << "unknown field " << number;
      return out;
    }
    json::value v = DecodeField(in, static_cast<uint32_t>(key & 7), *field);
    if (field->repeated) {
      json::value& list = out[field->name];
      if (!list.is_array()) list = json::array();
      list.as_array().push_back(std::move(v));
    } else {
      EXPECT_FALSE(out.contains(field->name)) << field->name << " twice";
      out[field->name] = std::move(v);
    }
  }
  return out;
}

// The JSON encoder's document with every doubleValue as a double (it writes 0 as an integer)
// and every empty attribute list dropped (the protobuf form cannot tell one from none).
void Normalize(json::value& v) {
  if (json::object* o = v.if_object()) {
    if (json::value* d = o->if_contains("doubleValue")) *d = d->to_number<double>();
    if (json::value* a = o->if_contains("attributes"); a != nullptr && a->as_array().empty()) {
      o->erase("attributes");
    }
    for (auto& member : *o) Normalize(member.value());
  } else if (json::array* a = v.if_array()) {
    for (json::value& item : *a) Normalize(item);
  }
}

void ExpectSameAsJson(std::span<const SpanRecord> records, int64_t unix_offset = 0) {
  OtlpBuffer json_buffer;
  OtlpBuffer proto_buffer;
  const std::string_view json_text =
      EncodeOtlp(OtlpProtocol::kJson, records, "turnpike", unix_offset, json_buffer);
  const std::string_view proto =
      EncodeOtlp(OtlpProtocol::kProtobuf, records, "turnpike", unix_offset, proto_buffer);
  json::value want = json::parse(json_text);
  Normalize(want);
  const json::value got = Decode(proto, Request());
  EXPECT_EQ(got, want) << "protobuf: " << json::serialize(got) << "\njson: " << json_text;
}

TEST(OtlpProtobuf, EncodesTheEnvelopeExactly) {
  std::string out;
  EncodeOtlpProtobuf({}, "turnpike", out);
  // resource_spans(46 bytes) { resource(28) { attributes(26) { key "service.name",
  // value(10) { string_value "turnpike" } } }, scope_spans(12) { scope(10) { name } } }
  const std::string want = std::string(
      "\x0a\x2c\x0a\x1c\x0a\x1a\x0a\x0cservice.name\x12\x0a\x0a\x08turnpike"
      "\x12\x0c\x0a\x0a\x0a\x08turnpike",
      46);
  EXPECT_EQ(Hex(out), Hex(want));
}

TEST(OtlpProtobuf, CarriesWhatTheJsonFormCarries) {
  const SpanRecord chat = ChatRecord();
  ExpectSameAsJson(std::span<const SpanRecord>(&chat, 1));
  ExpectSameAsJson(std::span<const SpanRecord>(&chat, 1), 1'764'000'000'000'000'000);
  const SpanRecord other = OtherRecord();
  ExpectSameAsJson(std::span<const SpanRecord>(&other, 1));

  SpanRecord search = SearchRecord();
  search.tenant_id = "t1";
  search.cost_micros = 0;
  ExpectSameAsJson(std::span<const SpanRecord>(&search, 1));

  // Texts to escape in JSON, a connection failure, a negative amount, an empty model.
  SpanRecord odd = ChatRecord();
  odd.path = "/a\"b\\c\n\x01/\xc3\xa9t\xc3\xa9-long-enough-for-a-word";
  odd.model = "";
  odd.cost_micros = -2'500'001;
  odd.finish_reason = "";
  odd.attempts[0].status = -1;
  odd.attempts[0].server_port = 0;
  odd.attempt_count = 1;
  odd.phases.first_token = 0;
  ExpectSameAsJson(std::span<const SpanRecord>(&odd, 1));
}

TEST(OtlpProtobuf, ManyRecordsOfEverySizeInOneMessage) {
  std::vector<SpanRecord> records;
  for (size_t i = 0; i < 300; ++i) {
    SpanRecord r = i % 3 == 0 ? ChatRecord() : OtherRecord();
    r.trace_lo = i;
    r.span_id = i + 7;
    // Paths from 0 to 127 bytes: spans on both sides of a one-byte length.
    r.path = std::string(i % 128, 'p');
    r.phases.received = 1'764'000'000'000'000'000 + static_cast<int64_t>(i) * 9'000'000;
    r.phases.done = r.phases.received + 1;
    records.push_back(r);
  }
  ExpectSameAsJson(records);
}

TEST(OtlpProtobuf, TextsAreValidUtf8) {
  SpanRecord r = OtherRecord();
  r.path =
      "/a\xff"
      "b\xc3\xa9\xe2\x82"
      "c\xed\xa0\x80\xc0\x80\xf4\x90\x80\x80\xf0\x9f\x98\x80";
  std::string out;
  EncodeOtlpProtobuf(std::span<const SpanRecord>(&r, 1), "gw", out);
  const json::object doc = Decode(out, Request());
  const json::value& span = doc.at("resourceSpans").at(0).at("scopeSpans").at(0).at("spans").at(0);
  // Each byte that starts no valid sequence is one U+FFFD; valid sequences stay.
  const std::string fffd = "\xef\xbf\xbd";
  const std::string want = "/a" + fffd + "b\xc3\xa9" + fffd + fffd + "c" + fffd + fffd + fffd +
                           fffd + fffd + fffd + fffd + fffd + fffd + "\xf0\x9f\x98\x80";
  EXPECT_EQ(span.at("name"), json::string("GET " + want));
  // An ASCII text is itself, not a copy; a byte to replace is found in a short text and in the
  // last, partial word of a longer one.
  char scratch[128];
  for (const std::string_view ascii :
       {"/v1/chat/completions?with=a-query", "", "abc", "abcdefgh"}) {
    EXPECT_EQ(otlp::ValidUtf8(ascii, scratch).data(), ascii.data()) << ascii;
  }
  EXPECT_EQ(otlp::ValidUtf8("ab\xff", scratch), "ab" + fffd);
  EXPECT_EQ(otlp::ValidUtf8("abcdefghij\xff", scratch), "abcdefghij" + fffd);
  EXPECT_EQ(otlp::ValidUtf8("abcdefghi\xc3\xa9", scratch), "abcdefghi\xc3\xa9");
}

}  // namespace
}  // namespace turnpike::observability
