#include "redis/resp.h"

#include <charconv>

namespace turnpike::redis {
namespace {

// Aggregates deeper than this are refused: a reply we asked for is never that deep, and the
// parser recurses.
constexpr int kMaxDepth = 16;
constexpr int64_t kMaxBulkBytes = 512 * 1024 * 1024;  // Redis's own proto-max-bulk-len default

void AppendArg(std::string& out, std::string_view arg) {
  out += '$';
  out += std::to_string(arg.size());
  out += "\r\n";
  out += arg;
  out += "\r\n";
}

class Parser {
 public:
  explicit Parser(std::string_view in) : in_(in) {}
  size_t pos() const { return pos_; }

  ParseStatus Parse(Reply& reply, int depth) {
    if (depth > kMaxDepth) return ParseStatus::kMalformed;
    if (pos_ >= in_.size()) return ParseStatus::kIncomplete;
    const char type = in_[pos_++];
    std::string_view line;
    if (ParseStatus s = Line(line); s != ParseStatus::kDone) return s;
    switch (type) {
      case '+':
        reply.type = Reply::Type::kStatus;
        reply.text.assign(line);
        return ParseStatus::kDone;
      case '-':
        reply.type = Reply::Type::kError;
        reply.text.assign(line);
        return ParseStatus::kDone;
      case ',':
        reply.type = Reply::Type::kString;
        reply.text.assign(line);
        return ParseStatus::kDone;
      case ':':
        reply.type = Reply::Type::kInteger;
        return Integer(line, reply.integer);
      case '#':
        if (line != "t" && line != "f") return ParseStatus::kMalformed;
        reply.type = Reply::Type::kInteger;
        reply.integer = line == "t" ? 1 : 0;
        return ParseStatus::kDone;
      case '_':
        reply.type = Reply::Type::kNil;
        return ParseStatus::kDone;
      case '$':
      case '=':
        return Bulk(line, reply);
      case '*':
      case '~':
      case '>':
        return Aggregate(line, 1, reply, depth);
      case '%':
        return Aggregate(line, 2, reply, depth);
      default:
        return ParseStatus::kMalformed;
    }
  }

 private:
  ParseStatus Line(std::string_view& line) {
    const size_t end = in_.find("\r\n", pos_);
    if (end == std::string_view::npos) return ParseStatus::kIncomplete;
    line = in_.substr(pos_, end - pos_);
    pos_ = end + 2;
    return ParseStatus::kDone;
  }

  static ParseStatus Integer(std::string_view text, int64_t& value) {
    auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (ec != std::errc() || end != text.data() + text.size()) return ParseStatus::kMalformed;
    return ParseStatus::kDone;
  }

  ParseStatus Bulk(std::string_view header, Reply& reply) {
    int64_t length = 0;
    if (Integer(header, length) != ParseStatus::kDone) return ParseStatus::kMalformed;
    if (length == -1) {
      reply.type = Reply::Type::kNil;
      return ParseStatus::kDone;
    }
    if (length < 0 || length > kMaxBulkBytes) return ParseStatus::kMalformed;
    const size_t n = static_cast<size_t>(length);
    if (in_.size() - pos_ < n + 2) return ParseStatus::kIncomplete;
    if (in_.substr(pos_ + n, 2) != "\r\n") return ParseStatus::kMalformed;
    reply.type = Reply::Type::kString;
    reply.text.assign(in_.substr(pos_, n));
    pos_ += n + 2;
    return ParseStatus::kDone;
  }

  ParseStatus Aggregate(std::string_view header, int64_t per_entry, Reply& reply, int depth) {
    int64_t count = 0;
    if (Integer(header, count) != ParseStatus::kDone) return ParseStatus::kMalformed;
    if (count == -1) {
      reply.type = Reply::Type::kNil;
      return ParseStatus::kDone;
    }
    // Each element takes at least 3 bytes, so a count the buffer cannot hold is incomplete
    // (and is not reserved for).
    if (count < 0 || count > kMaxBulkBytes) return ParseStatus::kMalformed;
    count *= per_entry;
    reply.type = Reply::Type::kArray;
    reply.items.clear();
    for (int64_t i = 0; i < count; ++i) {
      Reply item;
      if (ParseStatus s = Parse(item, depth + 1); s != ParseStatus::kDone) return s;
      reply.items.push_back(std::move(item));
    }
    return ParseStatus::kDone;
  }

  std::string_view in_;
  size_t pos_ = 0;
};

}  // namespace

void AppendCommand(std::string& out, std::initializer_list<std::string_view> args) {
  out += '*';
  out += std::to_string(args.size());
  out += "\r\n";
  for (std::string_view arg : args) AppendArg(out, arg);
}

void AppendCommand(std::string& out, const std::vector<std::string>& args) {
  out += '*';
  out += std::to_string(args.size());
  out += "\r\n";
  for (const std::string& arg : args) AppendArg(out, arg);
}

ParseStatus ParseReply(std::string_view in, Reply& reply, size_t& consumed) {
  Parser parser(in);
  reply = Reply{};
  const ParseStatus status = parser.Parse(reply, 0);
  if (status == ParseStatus::kDone) consumed = parser.pos();
  return status;
}

}  // namespace turnpike::redis
