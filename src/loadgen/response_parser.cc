#include "loadgen/response_parser.h"

#include <algorithm>
#include <charconv>
#include <cstring>

#include "common/ascii.h"

namespace turnpike::loadgen {
namespace {

// A response whose status line and headers exceed this is treated as garbage.
constexpr size_t kMaxHeaderBytes = 64 * 1024;
constexpr int kStatusContinueLow = 100;
constexpr int kStatusSwitchingProtocols = 101;
constexpr int kStatusFirstFinal = 200;
constexpr int kStatusNoContent = 204;
constexpr int kStatusNotModified = 304;
constexpr std::string_view kDataField = "data:";
constexpr std::string_view kDoneMarker = "[DONE]";
constexpr std::string_view kCompletedEvent = "event: response.completed";
constexpr std::string_view kTextDeltaEvent = "event: response.output_text.delta";

// True if the comma-separated header value contains `token` (lower case), ignoring case.
bool HasToken(std::string_view value, std::string_view token) {
  while (!value.empty()) {
    const size_t comma = value.find(',');
    std::string_view item = value.substr(0, comma);
    while (!item.empty() && (item.front() == ' ' || item.front() == '\t')) item.remove_prefix(1);
    while (!item.empty() && (item.back() == ' ' || item.back() == '\t')) item.remove_suffix(1);
    if (EqualsIgnoreCase(item, token)) return true;
    if (comma == std::string_view::npos) break;
    value.remove_prefix(comma + 1);
  }
  return false;
}

std::string_view Trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r')) {
    s.remove_suffix(1);
  }
  return s;
}

}  // namespace

void ResponseParser::Reset(bool scan_sse, bool keep_body) {
  state_ = State::kStatusLine;
  scan_sse_ = scan_sse;
  keep_body_ = keep_body;
  body_.clear();
  started_ = false;
  status_ = 0;
  keep_alive_ = true;
  chunked_ = false;
  has_length_ = false;
  content_length_ = 0;
  remaining_ = 0;
  body_bytes_ = 0;
  partial_.clear();
  header_bytes_ = 0;
  sse_line_length_ = 0;
  saw_data_ = false;
  saw_done_ = false;
  saw_completed_ = false;
  saw_text_delta_ = false;
}

ParseResult ResponseParser::Result() const {
  if (state_ == State::kComplete) return ParseResult::kComplete;
  if (state_ == State::kBad) return ParseResult::kBadResponse;
  return ParseResult::kNeedMore;
}

bool ResponseParser::TakeLine(std::string_view& data, std::string_view& line) {
  const size_t newline = data.find('\n');
  if (newline == std::string_view::npos) {
    partial_.append(data);
    data = {};
    return false;
  }
  if (partial_.empty()) {
    line = data.substr(0, newline);
  } else {
    partial_.append(data.substr(0, newline));
    line = partial_;
  }
  data.remove_prefix(newline + 1);
  if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  return true;
}

bool ResponseParser::ParseStatusLine(std::string_view line) {
  // "HTTP/1.1 200 OK": version, space, three digits, then an optional reason.
  constexpr std::string_view kHttp = "HTTP/1.";
  constexpr size_t kCodeOffset = 9;
  constexpr size_t kCodeDigits = 3;
  if (line.size() < kCodeOffset + kCodeDigits || line.substr(0, kHttp.size()) != kHttp ||
      line[kCodeOffset - 1] != ' ') {
    return false;
  }
  int code = 0;
  const char* first = line.data() + kCodeOffset;
  const auto [end, ec] = std::from_chars(first, first + kCodeDigits, code);
  if (ec != std::errc() || end != first + kCodeDigits || code < kStatusContinueLow) return false;
  status_ = code;
  keep_alive_ = line[kHttp.size()] != '0';  // HTTP/1.0 closes unless it says keep-alive
  return true;
}

void ResponseParser::ParseHeader(std::string_view line) {
  const size_t colon = line.find(':');
  if (colon == std::string_view::npos) return;
  const std::string_view name = line.substr(0, colon);
  const std::string_view value = Trim(line.substr(colon + 1));
  if (EqualsIgnoreCase(name, "content-length")) {
    uint64_t length = 0;
    const auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), length);
    if (ec != std::errc() || end != value.data() + value.size()) {
      state_ = State::kBad;
      return;
    }
    has_length_ = true;
    content_length_ = length;
  } else if (EqualsIgnoreCase(name, "transfer-encoding")) {
    chunked_ = HasToken(value, "chunked");
  } else if (EqualsIgnoreCase(name, "connection")) {
    if (HasToken(value, "close")) keep_alive_ = false;
    if (HasToken(value, "keep-alive")) keep_alive_ = true;
  }
}

void ResponseParser::EnterBody() {
  if (status_ == kStatusNoContent || status_ == kStatusNotModified) {
    state_ = State::kComplete;
  } else if (chunked_) {
    state_ = State::kChunkSize;  // chunked wins over Content-Length (RFC 9112 section 6.3)
  } else if (has_length_) {
    remaining_ = content_length_;
    state_ = remaining_ == 0 ? State::kComplete : State::kBodyLength;
  } else {
    state_ = State::kUntilClose;
  }
}

void ResponseParser::HeaderLine(std::string_view line) {
  if (state_ == State::kStatusLine) {
    state_ = ParseStatusLine(line) ? State::kHeaders : State::kBad;
  } else if (!line.empty()) {
    if (state_ == State::kHeaders) ParseHeader(line);
  } else if (state_ == State::kTrailers) {
    state_ = State::kComplete;
  } else if (status_ < kStatusFirstFinal && status_ != kStatusSwitchingProtocols) {
    // An interim response (100 Continue): the real one follows.
    Reset(scan_sse_, keep_body_);
    started_ = true;
  } else {
    EnterBody();
  }
}

void ResponseParser::ChunkSizeLine(std::string_view line) {
  // "1a3f" optionally followed by ";extension"; a size of 0 starts the trailers.
  const std::string_view digits = Trim(line.substr(0, line.find(';')));
  uint64_t size = 0;
  const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), size, 16);
  if (digits.empty() || ec != std::errc() || end != digits.data() + digits.size()) {
    state_ = State::kBad;
    return;
  }
  remaining_ = size;
  state_ = size == 0 ? State::kTrailers : State::kChunkData;
}

void ResponseParser::ConsumeBody(std::string_view bytes) {
  body_bytes_ += bytes.size();
  if (keep_body_ && body_.size() < kMaxKeptBody) {
    body_.append(bytes.substr(0, kMaxKeptBody - body_.size()));
  }
  if (scan_sse_) ScanSse(bytes);
}

void ResponseParser::ScanSse(std::string_view bytes) {
  while (!bytes.empty()) {
    const size_t newline = bytes.find('\n');
    const std::string_view piece = bytes.substr(0, newline);
    if (sse_line_length_ < kSsePrefixCapacity) {
      const size_t copy = std::min(piece.size(), kSsePrefixCapacity - sse_line_length_);
      std::memcpy(sse_prefix_ + sse_line_length_, piece.data(), copy);
    }
    sse_line_length_ += piece.size();
    if (newline == std::string_view::npos) return;
    EndSseLine();
    bytes.remove_prefix(newline + 1);
  }
}

void ResponseParser::EndSseLine() {
  const size_t kept = std::min(sse_line_length_, kSsePrefixCapacity);
  std::string_view line(sse_prefix_, kept);
  const bool whole = sse_line_length_ <= kSsePrefixCapacity;
  sse_line_length_ = 0;
  if (whole && Trim(line) == kCompletedEvent) saw_completed_ = true;
  if (whole && Trim(line) == kTextDeltaEvent) saw_text_delta_ = true;
  if (line.substr(0, kDataField.size()) != kDataField) return;
  saw_data_ = true;
  if (!whole) return;  // longer than the lines looked for could be
  line.remove_prefix(kDataField.size());
  if (Trim(line) == kDoneMarker) saw_done_ = true;
}

ParseResult ResponseParser::Feed(std::string_view data) {
  if (!data.empty()) started_ = true;
  std::string_view line;
  while (!data.empty() && state_ != State::kComplete && state_ != State::kBad) {
    switch (state_) {
      case State::kStatusLine:
      case State::kHeaders:
      case State::kTrailers: {
        const size_t before = data.size();
        const bool got_line = TakeLine(data, line);
        header_bytes_ += before - data.size();
        if (header_bytes_ > kMaxHeaderBytes) {
          state_ = State::kBad;
        } else if (got_line) {
          HeaderLine(line);
          partial_.clear();
        }
        break;
      }
      case State::kChunkSize:
      case State::kChunkDataEnd:
        if (partial_.size() > kMaxHeaderBytes) {
          state_ = State::kBad;
        } else if (TakeLine(data, line)) {
          if (state_ == State::kChunkSize) {
            ChunkSizeLine(line);
          } else {
            state_ = line.empty() ? State::kChunkSize : State::kBad;
          }
          partial_.clear();
        }
        break;
      case State::kBodyLength:
      case State::kChunkData: {
        const size_t take = static_cast<size_t>(std::min<uint64_t>(remaining_, data.size()));
        ConsumeBody(data.substr(0, take));
        data.remove_prefix(take);
        remaining_ -= take;
        if (remaining_ == 0) {
          state_ = state_ == State::kBodyLength ? State::kComplete : State::kChunkDataEnd;
        }
        break;
      }
      case State::kUntilClose:
        ConsumeBody(data);
        data = {};
        break;
      case State::kComplete:
      case State::kBad:
        break;
    }
  }
  return Result();
}

ParseResult ResponseParser::FeedEof() {
  if (state_ == State::kUntilClose) {
    if (scan_sse_ && sse_line_length_ > 0) EndSseLine();
    keep_alive_ = false;
    state_ = State::kComplete;
  }
  return Result();
}

}  // namespace turnpike::loadgen
