#include "net/response_parser.h"

#include <boost/beast/http/error.hpp>
#include <cstring>
#include <new>

#include "common/ascii.h"
#include "net/http1_syntax.h"

namespace turnpike::net {
namespace {

namespace bhttp = boost::beast::http;
using boost::beast::error_code;

using namespace http1;

}  // namespace

ResponseParser::~ResponseParser() {
  for (Field* f = first_; f != nullptr;) {
    Field* next = f->next;
    arena_.Deallocate(f, alignof(Field));
    f = next;
  }
}

bool ResponseParser::keep_alive() const {
  if (until_close_ || close_) return false;
  return version_ == 11 || keep_alive_;
}

std::string_view ResponseParser::field(std::string_view name) const {
  for (const Field* f = first_; f != nullptr; f = f->next) {
    if (EqualsIgnoreCase(f->name, name)) return f->value;
  }
  return {};
}

std::string_view ResponseParser::field(boost::beast::http::field name) const {
  const auto text = boost::beast::http::to_string(name);
  return field(std::string_view(text.data(), text.size()));
}

size_t ResponseParser::put(boost::asio::const_buffer input, error_code& ec) {
  ec = {};
  const char* const begin = static_cast<const char*>(input.data());
  const char* const end = begin + input.size();
  if (begin != end) got_some_ = true;
  if (state_ == State::kHead) {
    // The head ends at its first empty line; search on from where the last call stopped (the
    // input still starts at the head: nothing of it was consumed).
    const char* p = begin + (head_scanned_ > 3 ? head_scanned_ - 3 : 0);
    const char* head_end = nullptr;
    while (const char* nl = LineEnd(p, end)) {
      if (nl - begin >= 3 && nl[-1] == '\r' && nl[-2] == '\n' && nl[-3] == '\r') {
        head_end = nl + 1;
        break;
      }
      p = nl + 1;
    }
    if (head_end == nullptr) {
      head_scanned_ = input.size();
      ec = input.size() > header_limit_ ? bhttp::error::header_limit : bhttp::error::need_more;
      return 0;
    }
    if (static_cast<size_t>(head_end - begin) > header_limit_) {
      ec = bhttp::error::header_limit;
      return 0;
    }
    ParseHead(begin, head_end, ec);
    if (!ec) Frame(ec);
    return ec ? 0 : static_cast<size_t>(head_end - begin);
  }

  const char* p = begin;
  while (state_ != State::kDone) {
    switch (state_) {
      case State::kLength:
      case State::kChunkData:
      case State::kUntilClose: {
        if (p == end) {
          ec = bhttp::error::need_more;
          return static_cast<size_t>(p - begin);
        }
        const uint64_t left = state_ == State::kUntilClose ? UINT64_MAX : left_;
        const size_t n = TakeBody(p, end, left, ec);
        p += n;
        if (ec) return static_cast<size_t>(p - begin);
        if (state_ == State::kUntilClose) break;
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
        p = TakeWholeChunks(p, end);
        uint64_t size = 0;
        ec = TakeChunkSize(p, end, size);
        if (ec) return static_cast<size_t>(p - begin);
        left_ = size;
        state_ = size == 0 ? State::kTrailers : State::kChunkData;
        break;
      }
      case State::kTrailers: {
        const char* nl = LineEnd(p, end);
        if (nl == nullptr) {
          ec = end - p > static_cast<long>(header_limit_) ? bhttp::error::header_limit
                                                          : bhttp::error::need_more;
          return static_cast<size_t>(p - begin);
        }
        if (nl == p || nl[-1] != '\r') {
          ec = bhttp::error::bad_line_ending;
          return static_cast<size_t>(p - begin);
        }
        if (nl - 1 == p) {
          state_ = State::kDone;
        } else if (!ParseField(p, nl - 1, false)) {  // a trailer: checked, not kept
          ec = bhttp::error::bad_field;
          return static_cast<size_t>(p - begin);
        }
        p = nl + 1;
        break;
      }
      case State::kHead:
      case State::kDone:
        break;
    }
  }
  return static_cast<size_t>(p - begin);
}

void ResponseParser::put_eof(error_code& ec) {
  ec = {};
  if (state_ == State::kUntilClose) {
    state_ = State::kDone;
    return;
  }
  if (state_ != State::kDone) ec = bhttp::error::partial_message;
}

void ResponseParser::ParseHead(const char* begin, const char* end, error_code& ec) {
  const char* p = begin;
  // Empty lines before the status line are skipped (RFC 9112 2.2).
  while (end - p >= 2 && p[0] == '\r' && p[1] == '\n') p += 2;
  // "HTTP/1.x SP 3DIGIT [SP reason]"
  if (end - p < 12 || std::memcmp(p, "HTTP/1.", 7) != 0 || (p[7] != '0' && p[7] != '1')) {
    ec = bhttp::error::bad_version;
    return;
  }
  version_ = p[7] == '1' ? 11 : 10;
  if (p[8] != ' ') {
    ec = bhttp::error::bad_version;
    return;
  }
  p += 9;
  unsigned status = 0;
  for (int i = 0; i < 3; ++i, ++p) {
    if (*p < '0' || *p > '9') {
      ec = bhttp::error::bad_status;
      return;
    }
    status = status * 10 + static_cast<unsigned>(*p - '0');
  }
  const char* nl = LineEnd(p, end);  // there is one: the head ends with CRLF CRLF
  if (nl == nullptr || nl[-1] != '\r' || nl - 1 < p) {
    ec = bhttp::error::bad_line_ending;
    return;
  }
  if (p < nl - 1) {
    bool ok = *p == ' ';
    for (const char* r = p + 1; ok && r < nl - 1; ++r) {
      ok = IsValueChar(static_cast<unsigned char>(*r));
    }
    if (!ok) {
      ec = bhttp::error::bad_reason;
      return;
    }
  }
  status_ = status;
  // The fields, up to the empty line that ends the head.
  for (p = nl + 1;;) {
    nl = LineEnd(p, end);
    if (nl == p || nl[-1] != '\r') {
      ec = bhttp::error::bad_line_ending;
      return;
    }
    if (nl - 1 == p) return;  // the empty line
    if (IsBlank(*p)) {        // obs-fold
      ec = bhttp::error::bad_value;
      return;
    }
    if (!ParseField(p, nl - 1, true)) {
      ec = bhttp::error::bad_field;
      return;
    }
    p = nl + 1;
  }
}

bool ResponseParser::ParseField(const char* begin, const char* end, bool keep) {
  std::string_view name, value;
  if (!SplitField(begin, end, name, value)) return false;
  if (keep) {
    Keep(name, value);
  } else if (name.size() == 10 && EqualsIgnoreCase(name, "connection")) {
    // Connection in the trailers (RFC 9110 forbids it there): a "close" is still heeded,
    // since reusing the connection is the one thing it could make unsafe.
    ReadConnection(value);
  }
  return true;
}

void ResponseParser::ReadConnection(std::string_view value) {
  // An option that is not a token: the connection is not reused.
  ForEachElement(value, [&](std::string_view option) {
    if (!IsToken(option) || EqualsIgnoreCase(option, "close")) close_ = true;
    if (EqualsIgnoreCase(option, "keep-alive")) keep_alive_ = true;
  });
}

void ResponseParser::Keep(std::string_view name, std::string_view value) {
  // The views point into the caller's input, which the next read may move: copy.
  void* block = arena_.Allocate(sizeof(Field) + name.size() + value.size(), alignof(Field));
  char* text = static_cast<char*>(block) + sizeof(Field);
  if (!name.empty()) std::memcpy(text, name.data(), name.size());
  if (!value.empty()) std::memcpy(text + name.size(), value.data(), value.size());
  Field* f = ::new (block) Field{nullptr, std::string_view(text, name.size()),
                                 std::string_view(text + name.size(), value.size())};
  (last_ != nullptr ? last_->next : first_) = f;
  last_ = f;
}

void ResponseParser::Frame(error_code& ec) {
  bool transfer_encoding = false;
  bool chunked = false;
  for (const Field* f = first_; f != nullptr; f = f->next) {
    if (f->name.size() == 14 && EqualsIgnoreCase(f->name, "content-length")) {
      uint64_t length = 0;
      if (!ParseLength(f->value, length) || (content_length_ && *content_length_ != length)) {
        ec = bhttp::error::bad_content_length;
        return;
      }
      content_length_ = length;
    } else if (f->name.size() == 17 && EqualsIgnoreCase(f->name, "transfer-encoding")) {
      // A coding that is not a token leaves the framing in doubt: refused, not guessed.
      transfer_encoding = true;
      bool tokens = true;
      ForEachElement(f->value, [&](std::string_view coding) {
        tokens = tokens && IsToken(coding);
        chunked = EqualsIgnoreCase(coding, "chunked");
      });
      if (!tokens) {
        ec = bhttp::error::bad_transfer_encoding;
        return;
      }
    } else if (f->name.size() == 10 && EqualsIgnoreCase(f->name, "connection")) {
      ReadConnection(f->value);
    }
  }
  if (transfer_encoding && content_length_) {
    ec = bhttp::error::bad_transfer_encoding;
    return;
  }
  if (status_ / 100 == 1 || status_ == 204 || status_ == 304) {
    state_ = State::kDone;
  } else if (transfer_encoding) {
    until_close_ = !chunked;
    state_ = chunked ? State::kChunkSize : State::kUntilClose;
  } else if (content_length_) {
    left_ = *content_length_;
    state_ = left_ == 0 ? State::kDone : State::kLength;
  } else {
    until_close_ = true;
    state_ = State::kUntilClose;
  }
}

const char* ResponseParser::TakeWholeChunks(const char* p, const char* end) {
  for (;;) {
    const char* q = p;
    uint64_t size = 0;
    if (!TakeUsualChunkSize(q, end, size) || size == 0) return p;
    // Sizes have at most 15 hex digits: `size + 2` cannot wrap.
    if (static_cast<uint64_t>(end - q) < size + 2 || q[size] != '\r' || q[size + 1] != '\n' ||
        size > room_ || size > body_limit_ - body_bytes_) {
      return p;
    }
    std::memcpy(out_, q, size);
    out_ += size;
    room_ -= size;
    body_bytes_ += size;
    p = q + size + 2;
  }
}

size_t ResponseParser::TakeBody(const char* p, const char* end, uint64_t left, error_code& ec) {
  if (room_ == 0) {
    ec = bhttp::error::need_buffer;
    return 0;
  }
  uint64_t n = static_cast<uint64_t>(end - p);
  if (n > left) n = left;
  if (n > room_) n = room_;
  if (n > body_limit_ - body_bytes_) {
    ec = bhttp::error::body_limit;
    return 0;
  }
  std::memcpy(out_, p, n);
  out_ += n;
  room_ -= n;
  body_bytes_ += n;
  return static_cast<size_t>(n);
}

}  // namespace turnpike::net
