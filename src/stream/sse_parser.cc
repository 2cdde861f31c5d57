#include "stream/sse_parser.h"

#include <cstring>

#include "stream/byte_scan.h"

namespace turnpike::stream {
namespace {

constexpr size_t kNotFound = static_cast<size_t>(-1);
// A tail buffer grown beyond this by one large event is released rather than kept.
constexpr size_t kKeepTailCapacity = size_t{64} << 10;

// A data line's name with its colon.
constexpr std::string_view kDataField = "data:";

bool IsLineEnd(char c) { return c == '\n' || c == '\r'; }

// Offset just past the blank line that ends the event continuing at [begin, end), or kNotFound.
// `at_line_start`/`prev_cr` describe the bytes already buffered before `begin`.
size_t FindEventEnd(const char* begin, const char* end, bool at_line_start, bool prev_cr) {
  const char* p = begin;
  if (prev_cr && p < end && *p == '\n') ++p;  // the second half of a buffered CRLF
  for (;;) {
    if (p == end) return kNotFound;
    if (at_line_start && IsLineEnd(*p)) {
      const char* next = p + 1;
      if (*p == '\r' && next < end && *next == '\n') ++next;
      return static_cast<size_t>(next - begin);
    }
    const char* eol = FindEither(p, end, '\n', '\r');
    if (eol == end) return kNotFound;
    p = eol + 1;
    if (*eol == '\r' && p < end && *p == '\n') ++p;
    at_line_start = true;
  }
}

}  // namespace

SseParser::SseParser(size_t max_event_bytes) : max_event_bytes_(max_event_bytes) {}

Error SseParser::TooLargeError() const {
  return Error{ErrorCode::kUpstreamBadResponse,
               "upstream sent a server-sent event larger than " + std::to_string(max_event_bytes_) +
                   " bytes",
               ""};
}

std::string_view SseParser::EventStart() {
  ReleaseTail();
  if (pos_ == input_.size() || !tail_.empty() || (pending_lf_ && input_[pos_] == '\n')) return {};
  return input_.substr(pos_, max_event_bytes_);
}

void SseParser::ReleaseTail() {
  if (!release_tail_) return;
  release_tail_ = false;
  tail_skip_lf_ = false;
  if (tail_.capacity() > kKeepTailCapacity) {
    std::string().swap(tail_);
  } else {
    tail_.clear();
  }
}

SseParser::Step SseParser::Next() {
  ReleaseTail();
  if (pos_ == input_.size()) return Step::kNeedMore;
  if (!tail_.empty()) return NextFromTail();

  const char* begin = input_.data() + pos_;
  const char* end = input_.data() + input_.size();
  const bool skip_lf = pending_lf_ && *begin == '\n';
  pending_lf_ = false;
  const size_t size = ParseEvent(begin, end, skip_lf);
  if (size == 0) {
    if (static_cast<size_t>(end - begin) > max_event_bytes_) return Step::kTooLarge;
    tail_.assign(begin, end);
    tail_skip_lf_ = skip_lf;
    pos_ = input_.size();
    return Step::kNeedMore;
  }
  if (size > max_event_bytes_) return Step::kTooLarge;
  pos_ += size;
  pending_lf_ = pos_ == input_.size() && event_.raw.back() == '\r';
  return Step::kEvent;
}

SseParser::Step SseParser::NextFromTail() {
  const char* begin = input_.data() + pos_;
  const char* end = input_.data() + input_.size();
  const bool has_content = tail_.size() > static_cast<size_t>(tail_skip_lf_);
  const bool at_line_start = !has_content || IsLineEnd(tail_.back());
  const bool prev_cr = has_content && tail_.back() == '\r';
  const size_t size = FindEventEnd(begin, end, at_line_start, prev_cr);
  const size_t taken = size == kNotFound ? static_cast<size_t>(end - begin) : size;
  if (tail_.size() + taken > max_event_bytes_) return Step::kTooLarge;
  tail_.append(begin, taken);
  pos_ += taken;
  if (size == kNotFound) return Step::kNeedMore;

  // The tail now holds exactly one complete event: FindEventEnd and ParseEvent agree on where
  // the first blank line ends.
  ParseEvent(tail_.data(), tail_.data() + tail_.size(), tail_skip_lf_);
  release_tail_ = true;
  pending_lf_ = pos_ == input_.size() && tail_.back() == '\r';
  return Step::kEvent;
}

size_t SseParser::ParseEvent(const char* begin, const char* end, bool skip_lf) {
  const char* p = begin + (skip_lf ? 1 : 0);
  std::string_view event_name;
  std::string_view data;
  size_t data_lines = 0;
  for (;;) {
    const char* eol = FindEither(p, end, '\n', '\r');
    if (eol == end) return 0;
    const char* next = eol + 1;
    if (*eol == '\r' && next < end && *next == '\n') ++next;
    if (eol == p) {  // blank line: dispatch
      const size_t size = static_cast<size_t>(next - begin);
      event_ = SseEvent{std::string_view(begin, size), event_name, data, data_lines > 0};
      return size;
    }
    const std::string_view line(p, static_cast<size_t>(eol - p));
    p = next;
    if (line.front() == ':') continue;  // comment
    // Nearly every line of a model's stream is "data: ...": its name is read without a search
    // for the colon or a call to compare names.
    const bool data_line = line.size() >= kDataField.size() &&
                           std::memcmp(line.data(), kDataField.data(), kDataField.size()) == 0;
    const size_t colon = data_line ? kDataField.size() - 1 : line.find(':');
    const std::string_view name = line.substr(0, colon);
    std::string_view value =
        colon == std::string_view::npos ? std::string_view() : line.substr(colon + 1);
    if (!value.empty() && value.front() == ' ') value.remove_prefix(1);
    if (data_line || name == "data") {
      if (data_lines == 1) data_buf_.assign(data);
      if (data_lines >= 1) {
        data_buf_ += '\n';
        data_buf_ += value;
        data = data_buf_;
      } else {
        data = value;
      }
      ++data_lines;
    } else if (name == "event") {
      event_name = value;
    }
  }
}

}  // namespace turnpike::stream
