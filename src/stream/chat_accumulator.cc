#include "stream/chat_accumulator.h"

#include <algorithm>
#include <limits>
#include <optional>

#include "stream/byte_scan.h"
#include "stream/chunk_parse.h"
#include "stream/chunk_scan.h"
#include "stream/content_template.h"
#include "stream/json_string.h"
#include "stream/padded_json.h"

namespace turnpike::stream {
namespace {

constexpr std::string_view kDoneSentinel = "[DONE]";

bool IsWhitespace(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n'; }

std::string_view Trim(std::string_view text) {
  while (!text.empty() && IsWhitespace(text.front())) text.remove_prefix(1);
  while (!text.empty() && IsWhitespace(text.back())) text.remove_suffix(1);
  return text;
}

// The longest prefix of `text` no longer than `limit` that does not split a UTF-8 character.
size_t Utf8Floor(std::string_view text, size_t limit) {
  if (limit >= text.size()) return text.size();
  while (limit > 0 && (static_cast<unsigned char>(text[limit]) & 0xC0) == 0x80) --limit;
  return limit;
}

bool IsValidIndex(int64_t index) { return index >= 0 && index <= std::numeric_limits<int>::max(); }

template <typename T>
T& FindOrInsertByIndex(std::vector<T>& items, int index) {
  auto it = std::lower_bound(items.begin(), items.end(), index,
                             [](const T& item, int wanted) { return item.index < wanted; });
  if (it == items.end() || it->index != index) {
    it = items.insert(it, T{});
    it->index = index;
  }
  return *it;
}

}  // namespace

struct ChatAccumulator::Json {
  PaddedJsonParser parser;
  ParsedChunk chunk;      // staging, reused for every chunk
  std::string unescaped;  // ScanChunk's decoded strings
  ChunkLead lead;         // the last scanned chunk's (chunk_scan.h)
  // See content_template.h; framed as an SSE event ("data: ", the chunk, "\n\n") when the
  // chunk has no line break.
  ContentTemplate content_template;
  int64_t template_choice = 0;  // the choice whose content the template holds
};

ChatAccumulator::ChatAccumulator(size_t max_content_bytes, Text text)
    : max_content_bytes_(max_content_bytes), text_(text), json_(std::make_unique<Json>()) {}
ChatAccumulator::~ChatAccumulator() = default;
ChatAccumulator::ChatAccumulator(ChatAccumulator&&) noexcept = default;
ChatAccumulator& ChatAccumulator::operator=(ChatAccumulator&&) noexcept = default;

ChunkKind ChatAccumulator::Consume(std::string_view data) {
  data = Trim(data);
  if (data == kDoneSentinel) {
    done_ = true;
    return ChunkKind::kDone;
  }
  if (ConsumeLikeTemplate(data)) return ChunkKind::kDelta;
  ParsedChunk& chunk = json_->chunk;
  chunk.Clear();
  const bool scanned = ScanChunk(data, chunk, json_->unescaped, json_->lead);
  if (!scanned) {
    // Not decided by the fast path (malformed, or unusual): simdjson has the final say.
    chunk.Clear();
    simdjson::ondemand::document doc;
    if (json_->parser.Iterate(data).get(doc) != simdjson::SUCCESS || !ParseChunk(doc, chunk)) {
      ++unparsed_chunks_;
      return ChunkKind::kUnparsed;
    }
  }
  const bool indexes_valid =
      std::all_of(chunk.choices.begin(), chunk.choices.end(),
                  [](const ChoiceDelta& c) { return IsValidIndex(c.index); }) &&
      std::all_of(chunk.tool_calls.begin(), chunk.tool_calls.end(),
                  [](const ToolCallDelta& t) { return IsValidIndex(t.index); });
  if (!indexes_valid) {
    ++unparsed_chunks_;
    return ChunkKind::kUnparsed;
  }
  if (chunk.is_error) {
    error_message_.assign(chunk.error_message);
    return ChunkKind::kError;
  }

  if (id_.empty()) id_.assign(chunk.id);
  if (model_.empty()) model_.assign(chunk.model);
  if (chunk.has_usage) usage_ = chunk.usage;
  for (const ChoiceDelta& delta : chunk.choices) {
    Choice& choice = ChoiceAt(delta.index);
    if (choice.role.empty()) choice.role.assign(delta.role);
    if (!delta.content.empty()) {
      saw_first_token_ = true;
      AddText(choice.content, delta.content);
    }
    if (!delta.finish_reason.empty()) choice.finish_reason.assign(delta.finish_reason);
  }
  for (const ToolCallDelta& delta : chunk.tool_calls) {
    saw_first_token_ = true;
    Choice& choice = ChoiceAt(chunk.choices[delta.choice_slot].index);
    ToolCall& call = FindOrInsertByIndex(choice.tool_calls, static_cast<int>(delta.index));
    if (call.id.empty()) call.id.assign(delta.id);
    if (call.type.empty()) call.type.assign(delta.type);
    if (call.name.empty() && !delta.name.empty()) {
      call.name.assign(delta.name);
      output_bytes_ += static_cast<int64_t>(delta.name.size());
    }
    AddText(call.arguments, delta.arguments);
  }
  // A template's views must point into `data`: simdjson's point into its padded copy.
  if (scanned) RememberTemplate(data, chunk);
  return chunk.choices.empty() && chunk.has_usage ? ChunkKind::kUsageOnly : ChunkKind::kDelta;
}

bool ChatAccumulator::ConsumeLikeTemplate(std::string_view data) {
  const std::optional<std::string_view> body = json_->content_template.Match(data);
  return body && ApplyTemplateContent(*body, false);
}

ChatAccumulator::TakenEvent ChatAccumulator::ConsumeEvent(std::string_view bytes) {
  const std::optional<ContentTemplate::StartMatch> match =
      json_->content_template.MatchAtStart(bytes);
  if (match && ApplyTemplateContent(match->content, match->plain)) return {match->size};
  // One "data: " line and a blank line: the parser would frame exactly this, with the line's
  // bytes after "data: " as the event's data.
  constexpr std::string_view kData = "data: ";
  if (bytes.size() < kData.size() + 2 || bytes.substr(0, kData.size()) != kData) return {};
  const char* const line = bytes.data() + kData.size();
  const char* const end = bytes.data() + bytes.size();
  const char* const nl = FindEither(line, end, '\n', '\r');
  if (end - nl < 2 || nl[0] != '\n' || nl[1] != '\n') return {};
  const ChunkKind kind = Consume(std::string_view(line, static_cast<size_t>(nl - line)));
  return {static_cast<size_t>(nl + 2 - bytes.data()), kind};
}

bool ChatAccumulator::ApplyTemplateContent(std::string_view content, bool plain) {
  if (!plain && !IsUnescapedStringBody(content)) {
    std::string& decoded = json_->unescaped;
    decoded.clear();
    if (!AppendDecodedStringBody(content, decoded)) return false;  // the full path decides
    content = decoded;
  }
  ++template_chunks_;
  if (!content.empty()) {
    saw_first_token_ = true;
    AddText(ChoiceAt(json_->template_choice).content, content);
  }
  return true;
}

void ChatAccumulator::RememberTemplate(std::string_view data, const ParsedChunk& chunk) {
  ContentTemplate& t = json_->content_template;
  t.Forget();
  if (chunk.is_error || chunk.has_usage || chunk.choices.size() != 1 || !chunk.tool_calls.empty() ||
      !chunk.choices[0].finish_reason.empty()) {
    return;
  }
  // The content must be a view of `data` itself (not null, not unescaped): Remember checks. As
  // an SSE event the chunk is one data line (a chunk with a line break in it is not framed) and
  // the blank line: the parser would frame exactly that and hand over `data` as it is here.
  const char* end = data.data() + data.size();
  const bool one_line = chunk.plain || FindEither(data.data(), end, '\r', '\n') == end;
  if (t.Remember(data, chunk.choices[0].content, one_line ? "data: " : "",
                 one_line ? "\n\n" : "")) {
    json_->template_choice = chunk.choices[0].index;
  }
}

Choice& ChatAccumulator::ChoiceAt(int64_t index) {
  // Nearly every stream has one choice, and the choice a chunk names is most often the last.
  if (!choices_.empty() && choices_.back().index == index) return choices_.back();
  return FindOrInsertByIndex(choices_, static_cast<int>(index));
}

void ChatAccumulator::AddText(std::string& to, std::string_view from) {
  output_bytes_ += static_cast<int64_t>(from.size());
  if (text_ == Text::kCount) return;
  const size_t room = max_content_bytes_ > to.size() ? max_content_bytes_ - to.size() : 0;
  if (from.size() <= room) {
    to.append(from);
    return;
  }
  truncated_ = true;
  to.append(from.substr(0, Utf8Floor(from, room)));
}

Usage ExtractUsage(std::string_view body) {
  // Usage is read from the body's tail when it can be (ScanTailUsage), else by simdjson: on the
  // mock's 430-byte answer the chunk scanner read front to back measured 188 ns against
  // simdjson's 105 (bench/stream_bench.cc BM_ExtractUsage, AVX-512).
  Usage usage;
  if (ScanTailUsage(body, usage)) return usage;
  // Bodies above this get a parser of their own, so that one huge response does not pin its
  // buffers to the thread for good.
  constexpr size_t kMaxRetainedBodyBytes = size_t{1} << 20;
  thread_local PaddedJsonParser thread_parser;
  PaddedJsonParser one_off_parser;
  PaddedJsonParser& parser = body.size() > kMaxRetainedBodyBytes ? one_off_parser : thread_parser;
  simdjson::ondemand::document doc;
  if (parser.Iterate(body).get(doc) != simdjson::SUCCESS) return Usage{};
  return ParseBodyUsage(doc);
}

}  // namespace turnpike::stream
