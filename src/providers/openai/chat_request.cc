#include "providers/openai/chat_request.h"

#include <charconv>
#include <cstring>
#include <optional>
#include <utility>

#include "providers/openai/json_validate.h"
#include "stream/json_cursor.h"
#include "stream/padded_json.h"

namespace turnpike::providers::openai {
namespace {

namespace od = simdjson::ondemand;
using simdjson::error_code;
using simdjson::SUCCESS;

// Bodies above this get a parser of their own rather than growing the thread's parser for good.
constexpr size_t kMaxRetainedBodyBytes = size_t{1} << 20;
constexpr std::string_view kWhitespace = " \t\r\n";

Error Invalid(std::string message, std::string_view param) {
  return Error{ErrorCode::kInvalidRequest, std::move(message), std::string(param)};
}

std::string_view TypeName(od::json_type type) {
  switch (type) {
    case od::json_type::array:
      return "an array";
    case od::json_type::object:
      return "an object";
    case od::json_type::number:
      return "a number";
    case od::json_type::string:
      return "a string";
    case od::json_type::boolean:
      return "a boolean";
    case od::json_type::null:
      return "null";
  }
  return "an unknown value";
}

Error WrongType(std::string_view param, std::string_view expected, od::json_type actual) {
  return Invalid("Invalid type for '" + std::string(param) + "': expected " +
                     std::string(expected) + ", but got " + std::string(TypeName(actual)) + ".",
                 param);
}

struct Range {
  size_t begin = 0, end = 0;
};

// One pass over the document: reads the known members, validates everything. A field rule
// broken by valid JSON is remembered and reported only once the whole body is known to be JSON.
class RequestReader {
 public:
  explicit RequestReader(const char* base) : base_(base) {}

  Result<ChatRequestInfo> Read(od::document& doc) {
    od::object root;
    if (error_code e = doc.get_object().get(root)) {
      if (e == simdjson::INCORRECT_TYPE)
        return Invalid("The request body must be a JSON object.", "");
      return NotJson(e);
    }
    for (auto field : root) {
      std::string_view key;
      od::value value;
      if (error_code e = field.unescaped_key().get(key)) return NotJson(e);
      if (error_code e = field.value().get(value)) return NotJson(e);
      if (error_code e = ReadMember(key, value)) return NotJson(e);
    }
    if (rule_error_) return std::move(*rule_error_);
    if (!seen_model_) return Invalid("You must provide a model parameter.", "model");
    if (!seen_messages_) return Invalid("Missing required parameter: 'messages'.", "messages");
    info_.max_tokens = max_completion_tokens_ >= 0 ? max_completion_tokens_ : max_tokens_;
    return std::move(info_);
  }

 private:
  static Error NotJson(error_code e) {
    return Invalid("We could not parse the JSON body of your request: " +
                       std::string(simdjson::error_message(e)),
                   "");
  }

  void Fail(Error error) {
    if (!rule_error_) rule_error_ = std::move(error);
  }

  // False (and a rule error) if `seen` was already set.
  bool Once(bool& seen, std::string_view param) {
    if (seen)
      Fail(Invalid("Duplicate key '" + std::string(param) + "' in the request body.", param));
    const bool first = !seen;
    seen = true;
    return first;
  }

  // Byte range of a scalar token, trailing whitespace trimmed.
  Range TokenRange(od::value& value) {
    std::string_view token = value.raw_json_token();
    token = token.substr(0, token.find_last_not_of(kWhitespace) + 1);
    const size_t begin = static_cast<size_t>(token.data() - base_);
    return Range{begin, begin + token.size()};
  }

  // An array's raw token is its "[" and the whitespace after it: the next byte is "]" when the
  // array is empty (the document is padded, so that byte is readable).
  static bool IsEmptyArray(od::value& value) {
    const std::string_view token = value.raw_json_token();
    return token.data()[token.size()] == ']';
  }

  error_code ReadMember(std::string_view key, od::value value) {
    od::json_type type;
    if (error_code e = value.type().get(type)) return e;
    if (key == "model") {
      if (!Once(seen_model_, key)) return ValidateValue(value, 1);
      if (type != od::json_type::string) {
        Fail(WrongType(key, "a string", type));
        return ValidateValue(value, 1);
      }
      const Range range = TokenRange(value);
      std::string_view model;
      if (error_code e = value.get_string().get(model)) return e;
      if (model.empty()) Fail(Invalid("Invalid value for 'model': must not be empty.", key));
      info_.model.assign(model);
      info_.model_begin = range.begin;
      info_.model_end = range.end;
      return SUCCESS;
    }
    if (key == "messages") {
      seen_messages_ = true;
      if (type != od::json_type::array) {
        Fail(WrongType(key, "an array", type));
      } else if (IsEmptyArray(value)) {
        Fail(
            Invalid("Invalid 'messages': empty array. Expected an array with minimum length 1, "
                    "but got an empty array instead.",
                    key));
      }
      return ValidateValue(value, 1);
    }
    if (key == "stream") {
      if (Once(seen_stream_, key) && type == od::json_type::boolean) {
        return value.get_bool().get(info_.stream);
      }
      if (type != od::json_type::null) Fail(WrongType(key, "a boolean", type));
      return ValidateValue(value, 1);
    }
    if (key == "stream_options") return ReadStreamOptions(value, type);
    if (key == "max_tokens") return ReadMaxTokens(key, value, type, seen_max_tokens_, max_tokens_);
    if (key == "max_completion_tokens") {
      return ReadMaxTokens(key, value, type, seen_max_completion_tokens_, max_completion_tokens_);
    }
    return ValidateValue(value, 1);
  }

  error_code ReadStreamOptions(od::value value, od::json_type type) {
    constexpr std::string_view kParam = "stream_options";
    constexpr std::string_view kUsageParam = "stream_options.include_usage";
    const bool first = Once(seen_stream_options_, kParam);
    if (type != od::json_type::object) {
      if (type != od::json_type::null) Fail(WrongType(kParam, "an object", type));
      if (first && type == od::json_type::null) {
        const Range range = TokenRange(value);
        info_.has_stream_options = true;
        info_.stream_options_begin = range.begin;
        info_.stream_options_end = range.end;
      }
      return ValidateValue(value, 1);
    }
    const size_t begin = static_cast<size_t>(value.raw_json_token().data() - base_);
    od::object object;
    if (error_code e = value.get_object().get(object)) return e;
    bool seen_include_usage = false;
    for (auto field : object) {
      std::string_view key;
      od::value member;
      od::json_type member_type;
      if (error_code e = field.unescaped_key().get(key)) return e;
      if (error_code e = field.value().get(member)) return e;
      if (error_code e = member.type().get(member_type)) return e;
      if (key != "include_usage" || !Once(seen_include_usage, kUsageParam)) {
        if (error_code e = ValidateValue(member, 2)) return e;
        continue;
      }
      if (member_type != od::json_type::boolean && member_type != od::json_type::null) {
        Fail(WrongType(kUsageParam, "a boolean", member_type));
      }
      const Range range = TokenRange(member);
      info_.include_usage_begin = range.begin;
      info_.include_usage_end = range.end;
      if (member_type == od::json_type::boolean) {
        bool include_usage = false;
        if (error_code e = member.get_bool().get(include_usage)) return e;
        info_.include_usage = include_usage;
      } else if (error_code e = ValidateValue(member, 2)) {
        return e;
      }
    }
    // The object has been walked: the next token (',' or '}') follows its closing brace.
    const char* next = nullptr;
    if (error_code e = value.current_location().get(next)) return e;
    std::string_view text(base_ + begin, static_cast<size_t>(next - base_) - begin);
    text = text.substr(0, text.find_last_not_of(kWhitespace) + 1);
    if (first) {
      info_.has_stream_options = true;
      info_.stream_options_begin = begin;
      info_.stream_options_end = begin + text.size();
    }
    return SUCCESS;
  }

  error_code ReadMaxTokens(std::string_view param, od::value value, od::json_type type, bool& seen,
                           int64_t& out) {
    const bool first = Once(seen, param);
    if (type != od::json_type::number) {
      if (type != od::json_type::null) Fail(WrongType(param, "an integer", type));
      return ValidateValue(value, 1);
    }
    const Range range = TokenRange(value);
    double number;
    if (error_code e = value.get_double().get(number)) return e;  // not a JSON number at all
    int64_t tokens = -1;
    const char* begin = base_ + range.begin;
    const char* end = base_ + range.end;
    const auto [parsed_end, ec] = std::from_chars(begin, end, tokens);
    if (ec != std::errc() || parsed_end != end || tokens < 0) {
      Fail(Invalid("Invalid value for '" + std::string(param) +
                       "': expected a non-negative integer below 2^63.",
                   param));
      return SUCCESS;
    }
    if (first) out = tokens;
    return SUCCESS;
  }

  const char* base_;  // start of the parsed copy of the body: offsets are relative to it
  ChatRequestInfo info_;
  std::optional<Error> rule_error_;
  int64_t max_tokens_ = -1;
  int64_t max_completion_tokens_ = -1;
  bool seen_model_ = false;
  bool seen_messages_ = false;
  bool seen_stream_ = false;
  bool seen_stream_options_ = false;
  bool seen_max_tokens_ = false;
  bool seen_max_completion_tokens_ = false;
};

// The usual request in one pass, without simdjson (stream/json_cursor.h): true and `info`
// filled as RequestReader fills it, or false for "not decided here". It decides only a body that
// is valid JSON (every string's escapes decoded as simdjson decodes them; no number with an
// exponent or longer than kMaxNumberBytes, which simdjson could find out of range) and breaks no
// field rule: every error, and every duplicated or escaped key, is RequestReader's to report.
class RequestScanner : public stream::JsonCursor {
 public:
  using JsonCursor::JsonCursor;

  bool Read(ChatRequestInfo& info) {
    if (Peek() != '{') return false;
    info_ = &info;
    const bool members =
        Members([this](std::string_view key) { return !Escaped(key) && ReadMember(key); });
    if (!members || !AtEnd() || !seen_model_ || !seen_messages_) return false;
    info.max_tokens = max_completion_tokens_ >= 0 ? max_completion_tokens_ : max_tokens_;
    return true;
  }

 private:
  static constexpr size_t kMaxNumberBytes = 32;

  bool Escaped(std::string_view raw) const {
    return !plain_ && std::memchr(raw.data(), '\\', raw.size()) != nullptr;
  }
  size_t Offset() const { return static_cast<size_t>(p_ - begin_); }

  // What ValidateValue checks beyond the grammar (simdjson decodes every string and key and
  // reads every number as a double): a surrogate escape that decodes, a number that cannot be
  // out of range.
  struct Strict {
    RequestScanner& scanner;
    bool String(std::string_view raw, bool escaped) const {
      return !escaped || scanner.Decodes(raw);
    }
    bool Key(std::string_view raw) const { return !scanner.Escaped(raw) || scanner.Decodes(raw); }
    static bool Number(std::string_view token) {
      if (token.size() > kMaxNumberBytes) return false;
      for (char c : token) {
        if ((c | 0x20) == 'e') return false;
      }
      return true;
    }
  };
  // Any value, checked as ValidateValue checks it.
  bool Value(int depth) { return SkipValue(depth, Strict{*this}); }
  // An escaped string's escapes have been checked for grammar (SkipEscape): only a surrogate
  // escape, which must pair as simdjson pairs it, is judged by decoding the string.
  bool Decodes(std::string_view raw) {
    const char* const end = raw.data() + raw.size();
    for (const char* p = raw.data(); const void* at = std::memchr(p, '\\', end - p);) {
      p = static_cast<const char*>(at);
      if (p[1] == 'u' && (p[2] | 0x20) == 'd' && p[3] >= '8') {
        unescaped_.clear();
        std::string_view decoded;
        return Unescape(raw, decoded);
      }
      p += 2;
    }
    return true;
  }

  // The first time, and a value Read takes as it stands: true and `seen` set.
  static bool Once(bool& seen) { return !std::exchange(seen, true); }

  bool ReadMember(std::string_view key) {
    if (key == "model") {
      std::string_view model;
      bool escaped;
      if (!Once(seen_model_) || Peek() != '"') return false;
      const size_t begin = Offset();
      if (!RawString(model, escaped) || escaped || model.empty()) return false;
      info_->model.assign(model);
      info_->model_begin = begin;
      info_->model_end = Offset();
      return true;
    }
    if (key == "messages") {
      seen_messages_ = true;
      if (Peek() != '[') return false;
      ++p_;
      return Peek() != ']' && ElementsAfterOpen([&](int64_t) { return Value(2); });
    }
    if (key == "stream") {
      if (!Once(seen_stream_)) return false;
      switch (Peek()) {
        case 't':
          info_->stream = true;
          return Literal("true");
        case 'f':
          return Literal("false");
        case 'n':
          return Literal("null");
        default:
          return false;
      }
    }
    if (key == "stream_options") return ReadStreamOptions();
    if (key == "max_tokens") return ReadMaxTokens(seen_max_tokens_, max_tokens_);
    if (key == "max_completion_tokens") {
      return ReadMaxTokens(seen_max_completion_tokens_, max_completion_tokens_);
    }
    return Value(1);
  }

  bool ReadStreamOptions() {
    if (!Once(seen_stream_options_)) return false;
    const char first = Peek();
    const size_t begin = Offset();
    if (first == 'n') {
      if (!Literal("null")) return false;
    } else {
      if (first != '{') return false;
      bool seen_include_usage = false;
      const bool members = Members([&](std::string_view key) {
        if (Escaped(key)) return false;
        if (key != "include_usage") return Value(2);
        if (!Once(seen_include_usage)) return false;
        switch (Peek()) {
          case 't':
            info_->include_usage_begin = Offset();
            info_->include_usage = true;
            if (!Literal("true")) return false;
            break;
          case 'f':
            info_->include_usage_begin = Offset();
            if (!Literal("false")) return false;
            break;
          case 'n':
            info_->include_usage_begin = Offset();
            if (!Literal("null")) return false;
            break;
          default:
            return false;
        }
        info_->include_usage_end = Offset();
        return true;
      });
      if (!members) return false;
    }
    info_->has_stream_options = true;
    info_->stream_options_begin = begin;
    info_->stream_options_end = Offset();
    return true;
  }

  // A non-negative integer literal (or null, not set).
  bool ReadMaxTokens(bool& seen, int64_t& out) {
    if (!Once(seen)) return false;
    if (Peek() == 'n') return Literal("null");
    int64_t value = 0;
    int digits = 0;
    for (; p_ < end_ && IsDigit(*p_); ++p_) {
      if (++digits > kMaxIntDigits) return false;
      value = value * 10 + (*p_ - '0');
    }
    if (digits == 0 || (digits > 1 && p_[-digits] == '0')) return false;
    if (p_ < end_ && (*p_ == '.' || *p_ == 'e' || *p_ == 'E')) return false;
    out = value;
    return true;
  }

  ChatRequestInfo* info_ = nullptr;
  int64_t max_tokens_ = -1;
  int64_t max_completion_tokens_ = -1;
  bool seen_model_ = false;
  bool seen_messages_ = false;
  bool seen_stream_ = false;
  bool seen_stream_options_ = false;
  bool seen_max_tokens_ = false;
  bool seen_max_completion_tokens_ = false;
};

}  // namespace

bool ScanChatRequest(std::string_view body, ChatRequestInfo& info) {
  // A long body is scanned only when plain; most that are not have an escape (a "\n"), which
  // memchr finds before the cursor's plainness pass would have read the whole body.
  if (body.size() > kScanBodyBytes && std::memchr(body.data(), '\\', body.size()) != nullptr) {
    return false;
  }
  // The scratch holds one decoded string at a time, reserved at the body's size: bounded by
  // kScanBodyBytes, since only a body that is not plain has escapes to decode.
  thread_local std::string unescaped;
  RequestScanner scanner(body, unescaped);
  if (!scanner.plain() && body.size() > kScanBodyBytes) return false;
  return scanner.Read(info);
}

Result<ChatRequestInfo> ParseChatRequest(std::string_view body) {
  thread_local stream::PaddedJsonParser thread_parser;
  std::optional<stream::PaddedJsonParser> one_off_parser;
  stream::PaddedJsonParser& parser =
      body.size() > kMaxRetainedBodyBytes ? one_off_parser.emplace() : thread_parser;
  od::document doc;
  if (error_code e = parser.Iterate(body).get(doc)) {
    return Invalid("We could not parse the JSON body of your request: " +
                       std::string(simdjson::error_message(e)),
                   "");
  }
  // Trailing content (a second document, garbage): skip over the root value once to learn
  // where it ends, then walk it for real. (simdjson 3.0's document has no public at_end(),
  // and current_location() after the walk reports the iterator's liveness, not the input.)
  std::string_view root_bytes;
  if (error_code e = doc.raw_json().get(root_bytes)) {
    return Invalid("We could not parse the JSON body of your request: " +
                       std::string(simdjson::error_message(e)),
                   "");
  }
  const size_t root_end =
      static_cast<size_t>(root_bytes.data() - parser.data()) + root_bytes.size();
  if (body.find_first_not_of(" \t\r\n", root_end) != std::string_view::npos) {
    return Invalid("We could not parse the JSON body of your request: " +
                       std::string(simdjson::error_message(simdjson::TRAILING_CONTENT)),
                   "");
  }
  doc.rewind();
  return RequestReader(parser.data()).Read(doc);
}

Result<ChatRequestInfo> InspectChatRequest(std::string_view body) {
  if (ChatRequestInfo info; ScanChatRequest(body, info)) return info;
  return ParseChatRequest(body);
}

}  // namespace turnpike::providers::openai
