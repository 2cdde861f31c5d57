#include "net/request_parser.h"

#include <boost/beast/http/error.hpp>
#include <boost/beast/http/field.hpp>
#include <boost/beast/http/verb.hpp>
#include <cstring>
#include <tuple>
#include <utility>

#include "common/ascii.h"
#include "net/http1_syntax.h"

namespace turnpike::net {
namespace {

namespace bhttp = boost::beast::http;
using boost::beast::error_code;
using namespace http1;

// The field a token name stands for: the names clients send on nearly every request by their
// length and one comparison, any other through Beast's table (the authority: the same enum
// either way).
bhttp::field Classify(std::string_view name) {
  using F = bhttp::field;
  auto is = [name](std::string_view known) { return TokenEqualsLower(name, known); };
  switch (name.size()) {
    case 4:
      if (is("host")) return F::host;
      break;
    case 6:
      if (is("accept")) return F::accept;
      if (is("expect")) return F::expect;
      break;
    case 10:
      if (is("connection")) return F::connection;
      if (is("user-agent")) return F::user_agent;
      break;
    case 12:
      if (is("content-type")) return F::content_type;
      break;
    case 13:
      if (is("authorization")) return F::authorization;
      break;
    case 14:
      if (is("content-length")) return F::content_length;
      break;
    case 15:
      if (is("accept-encoding")) return F::accept_encoding;
      break;
    case 17:
      if (is("transfer-encoding")) return F::transfer_encoding;
      break;
    default:
      break;
  }
  return bhttp::string_to_field(name);
}

}  // namespace

RequestParser::RequestParser(HeaderArena& arena)
    : message_(std::piecewise_construct, std::make_tuple(),
               std::make_tuple(ArenaAllocator<char>(&arena))) {}

size_t RequestParser::put(boost::asio::const_buffer input, error_code& ec) {
  ec = {};
  const char* const begin = static_cast<const char*>(input.data());
  const char* const end = begin + input.size();
  if (begin != end) got_some_ = true;
  const char* p = begin;

  if (state_ == State::kRequestLine) {
    const char* nl = LineEnd(begin + scanned_, end);
    if (nl == nullptr) {
      scanned_ = input.size();
      ec = input.size() > header_limit_ ? bhttp::error::header_limit : bhttp::error::need_more;
      return 0;
    }
    const size_t line = static_cast<size_t>(nl + 1 - begin);
    if (line > header_limit_) {
      ec = bhttp::error::header_limit;
      return 0;
    }
    if (nl == begin || nl[-1] != '\r') {
      ec = bhttp::error::bad_line_ending;
      return 0;
    }
    ParseRequestLine(begin, nl - 1, ec);
    if (ec) return 0;
    scanned_ = 0;
    head_bytes_ = line;
    p = nl + 1;
    state_ = State::kFields;
  }

  if (state_ == State::kFields) {
    // The block ends at its first empty line; search on from the first line not yet known to
    // be complete (nothing of the block was consumed: it still starts at p).
    const char* line = p + scanned_;
    const char* block_end = nullptr;
    while (const char* nl = LineEnd(line, end)) {
      if (nl == line || (nl == line + 1 && *line == '\r')) {
        block_end = nl + 1;
        break;
      }
      line = nl + 1;
    }
    const size_t have = static_cast<size_t>((block_end != nullptr ? block_end : end) - p);
    if (head_bytes_ + have > header_limit_) {
      ec = bhttp::error::header_limit;
      return static_cast<size_t>(p - begin);
    }
    if (block_end == nullptr) {
      scanned_ = static_cast<size_t>(line - p);
      ec = bhttp::error::need_more;
      return static_cast<size_t>(p - begin);
    }
    ParseFields(p, block_end, ec);
    if (!ec) Frame(ec);
    if (ec) return static_cast<size_t>(p - begin);
    head_bytes_ = 0;  // from here on: the trailers' bytes
    return static_cast<size_t>(block_end - begin);
  }

  while (state_ != State::kDone) {
    switch (state_) {
      case State::kLength:
      case State::kChunkData: {
        if (p == end) {
          ec = bhttp::error::need_more;
          return static_cast<size_t>(p - begin);
        }
        const size_t n = TakeBody(p, end, ec);
        p += n;
        if (ec) return static_cast<size_t>(p - begin);
        left_ -= n;
        if (left_ == 0) state_ = state_ == State::kLength ? State::kDone : State::kChunkEnd;
        break;
      }
      case State::kChunkEnd:
        ec = TakeChunkEnd(p, end);
        if (ec) return static_cast<size_t>(p - begin);
        state_ = State::kChunkSize;
        break;
      case State::kChunkSize: {
        const char* line = p;
        uint64_t size = 0;
        ec = TakeChunkSize(p, end, size);
        if (ec) return static_cast<size_t>(p - begin);
        if (size > body_limit_ - message_.body().size()) {
          ec = bhttp::error::body_limit;
          return static_cast<size_t>(line - begin);
        }
        left_ = size;
        state_ = size == 0 ? State::kTrailers : State::kChunkData;
        break;
      }
      case State::kTrailers: {
        const char* nl = LineEnd(p, end);
        const size_t have = static_cast<size_t>((nl != nullptr ? nl + 1 : end) - p);
        if (head_bytes_ + have > header_limit_) {
          ec = bhttp::error::header_limit;
          return static_cast<size_t>(p - begin);
        }
        if (nl == nullptr) {
          ec = bhttp::error::need_more;
          return static_cast<size_t>(p - begin);
        }
        if (nl == p || nl[-1] != '\r') {
          ec = bhttp::error::bad_line_ending;
          return static_cast<size_t>(p - begin);
        }
        if (nl - 1 == p) {
          state_ = State::kDone;
        } else {
          std::string_view name, value;
          if (IsBlank(*p)) {
            ec = bhttp::error::bad_value;  // obs-fold
          } else if (!SplitField(p, nl - 1, name, value)) {
            ec = bhttp::error::bad_field;
          } else {
            AddField(name, value, true, ec);
          }
          if (ec) return static_cast<size_t>(p - begin);
        }
        head_bytes_ += have;
        p = nl + 1;
        break;
      }
      case State::kRequestLine:
      case State::kFields:
      case State::kDone:
        break;
    }
  }
  return static_cast<size_t>(p - begin);
}

void RequestParser::put_eof(error_code& ec) {
  ec = state_ == State::kDone ? error_code{} : error_code(bhttp::error::partial_message);
}

void RequestParser::ParseRequestLine(const char* begin, const char* end, error_code& ec) {
  const char* p = begin;
  while (p < end && IsTokenChar(static_cast<unsigned char>(*p))) ++p;
  if (p == begin || p == end || *p != ' ') {
    ec = bhttp::error::bad_method;
    return;
  }
  const std::string_view method(begin, static_cast<size_t>(p - begin));
  // The target: Beast's set of bytes (visible ASCII and obs-text), up to a space.
  const char* target_begin = ++p;
  p = SkipValueChars</*space_too=*/true>(p, end);
  if (p == target_begin || p == end || *p != ' ') {
    ec = bhttp::error::bad_target;
    return;
  }
  const std::string_view target(target_begin, static_cast<size_t>(p - target_begin));
  ++p;
  if (end - p != 8 || std::memcmp(p, "HTTP/1.", 7) != 0 || (p[7] != '0' && p[7] != '1')) {
    ec = bhttp::error::bad_version;
    return;
  }
  const bhttp::verb verb = bhttp::string_to_verb(method);
  if (verb != bhttp::verb::unknown) {
    message_.method(verb);
  } else {
    message_.method_string(method);
  }
  message_.target(target);
  message_.version(p[7] == '1' ? 11 : 10);
}

void RequestParser::ParseFields(const char* begin, const char* end, error_code& ec) {
  for (const char* p = begin;;) {
    const char* nl = LineEnd(p, end);  // there is one: the block ends with an empty line
    if (nl == p || nl[-1] != '\r') {
      ec = bhttp::error::bad_line_ending;
      return;
    }
    if (nl - 1 == p) return;  // the empty line
    if (IsBlank(*p)) {        // obs-fold
      ec = bhttp::error::bad_value;
      return;
    }
    std::string_view name, value;
    if (!SplitField(p, nl - 1, name, value, end)) {
      ec = bhttp::error::bad_field;
      return;
    }
    AddField(name, value, false, ec);
    if (ec) return;
    p = nl + 1;
  }
}

void RequestParser::AddField(std::string_view name, std::string_view value, bool trailer,
                             error_code& ec) {
  const bhttp::field field = Classify(name);
  switch (field) {
    case bhttp::field::content_length: {
      // One value (a list is refused, though RFC 9110 8.6 allows repeats of one value); a
      // second field must repeat it.
      uint64_t length = 0;
      if (trailer || !ParseLength(value, length) || (has_length_ && length != length_)) {
        ec = bhttp::error::bad_content_length;
        return;
      }
      has_length_ = true;
      length_ = length;
      break;
    }
    case bhttp::field::transfer_encoding: {
      // Exactly "chunked" (RFC 9112 6.1: the only coding this gateway decodes).
      int codings = 0;
      bool chunked = false;
      ForEachElement(value, [&](std::string_view coding) {
        ++codings;
        chunked = EqualsIgnoreCase(coding, "chunked");
      });
      if (trailer || chunked_ || codings != 1 || !chunked) {
        ec = bhttp::error::bad_transfer_encoding;
        return;
      }
      chunked_ = true;
      break;
    }
    case bhttp::field::connection:
    case bhttp::field::proxy_connection: {
      bool tokens = true;
      ForEachElement(value, [&](std::string_view option) { tokens = tokens && IsToken(option); });
      if (!tokens) {
        ec = bhttp::error::bad_value;
        return;
      }
      break;
    }
    default:
      break;
  }
  message_.insert(field, name, value);
}

void RequestParser::Frame(error_code& ec) {
  if (chunked_ && has_length_) {
    ec = bhttp::error::bad_transfer_encoding;  // RFC 9112 6.3: the framing is in doubt
    return;
  }
  if (chunked_) {
    state_ = State::kChunkSize;
    return;
  }
  if (!has_length_ || length_ == 0) {
    state_ = State::kDone;
    return;
  }
  if (length_ > body_limit_) {
    ec = bhttp::error::body_limit;
    return;
  }
  message_.body().reserve(static_cast<size_t>(length_));
  left_ = length_;
  state_ = State::kLength;
}

size_t RequestParser::TakeBody(const char* p, const char* end, error_code& ec) {
  uint64_t n = static_cast<uint64_t>(end - p);
  if (n > left_) n = left_;
  std::string& body = message_.body();
  if (n > body_limit_ - body.size()) {
    ec = bhttp::error::body_limit;
    return 0;
  }
  body.append(p, static_cast<size_t>(n));
  return static_cast<size_t>(n);
}

}  // namespace turnpike::net
