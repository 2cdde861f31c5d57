#include "stream/ndjson_parser.h"

namespace turnpike::stream {
namespace {

// A tail buffer grown beyond this by one long line is released rather than kept.
constexpr size_t kKeepTailCapacity = size_t{64} << 10;

bool IsBlank(std::string_view line) {
  for (char c : line) {
    if (c != ' ' && c != '\t' && c != '\r') return false;
  }
  return true;
}

}  // namespace

NdjsonParser::NdjsonParser(size_t max_line_bytes) : max_line_bytes_(max_line_bytes) {}

bool NdjsonParser::MakeEvent(std::string_view raw) {
  std::string_view line = raw.substr(0, raw.size() - 1);  // without the "\n"
  if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  if (IsBlank(line)) return false;
  event_ = SseEvent{raw, std::string_view(), line, true};
  return true;
}

void NdjsonParser::ReleaseTail() {
  if (tail_.capacity() > kKeepTailCapacity) {
    std::string().swap(tail_);
  } else {
    tail_.clear();
  }
}

Status NdjsonParser::Fail() {
  failed_ = true;
  return Error{
      ErrorCode::kUpstreamBadResponse,
      "upstream sent an NDJSON line longer than " + std::to_string(max_line_bytes_) + " bytes", ""};
}

}  // namespace turnpike::stream
