// A passive tee over an OpenAI chat.completion.chunk stream: it reads each SSE data payload the
// gateway forwards and keeps what accounting and logging need (usage, content, tool calls,
// finish reasons, time to first token) without ever changing the bytes sent to the client.
//
// Ownership: owns everything it returns; views returned by accessors stay valid until the next
// Consume. Thread safety: none; one accumulator per stream, on the worker owning the stream.
// Errors: never throws and never fails the stream. A payload that is not well-formed JSON, not
// an object, or has a known member of the wrong type is counted in unparsed_chunks() and
// otherwise ignored: a chunk is applied all or nothing. Members the accumulator does not read
// (logprobs, system_fingerprint...) are skipped without being validated.
//
// Speed: most chunks of a stream are the previous chunk's bytes with other text in its content.
// Such a chunk is recognised by comparing the bytes around the content with the last scanned
// content-only chunk, and applied without a scan (see ContentTemplate in the .cc). ConsumeEvent
// does the same for a whole SSE event, so that such an event needs no framing either, and reads
// any other event of one data line without the SSE parser's framing.
//
// Memory: content and each tool call's arguments are capped at max_content_bytes (cut on a
// UTF-8 character boundary); truncated() says whether anything was dropped.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace turnpike::stream {

struct ParsedChunk;  // chunk_parse.h (internal)

// Token counts as reported by the provider; -1 when not reported.
struct Usage {
  int64_t prompt_tokens = -1;
  int64_t completion_tokens = -1;
  int64_t total_tokens = -1;
  int64_t cached_tokens = -1;     // usage.prompt_tokens_details.cached_tokens
  int64_t reasoning_tokens = -1;  // usage.completion_tokens_details.reasoning_tokens

  // Whether the provider reported any of prompt, completion or total tokens.
  bool present() const { return prompt_tokens >= 0 || completion_tokens >= 0 || total_tokens >= 0; }
};

struct ToolCall {
  int index = 0;               // the tool call's `index` within its choice
  std::string id, type, name;  // from the first delta that carries them
  std::string arguments;       // fragments appended in arrival order
};

struct Choice {
  int index = 0;
  std::string role;
  std::string content;
  std::vector<ToolCall> tool_calls;  // sorted by index
  std::string finish_reason;         // empty until the provider sends one
};

enum class ChunkKind {
  kDelta,      // a chunk with choices (or neither choices nor usage): forward it
  kUsageOnly,  // no choices (empty or absent `choices`) but a `usage` object: the final usage
               // chunk of stream_options.include_usage; drop it if the client did not ask
  kDone,       // the "[DONE]" sentinel
  kError,      // {"error": ...} sent in-stream; see error_message()
  kUnparsed,   // malformed; counted in unparsed_chunks(), nothing applied
};

class ChatAccumulator {
 public:
  static constexpr size_t kDefaultMaxContentBytes = size_t{1} << 20;

  // What becomes of content and tool call arguments: kept in choices() (up to
  // max_content_bytes each), or only counted in output_bytes() (choices() then have them empty).
  enum class Text : uint8_t { kKeep, kCount };

  explicit ChatAccumulator(size_t max_content_bytes = kDefaultMaxContentBytes,
                           Text text = Text::kKeep);
  ~ChatAccumulator();
  ChatAccumulator(ChatAccumulator&&) noexcept;
  ChatAccumulator& operator=(ChatAccumulator&&) noexcept;

  // Reads one SSE data payload: a chunk JSON, "[DONE]" or {"error": {...}}. Surrounding
  // whitespace is ignored. Usage reported by several chunks: the last one wins.
  ChunkKind Consume(std::string_view data);

  // The same before SSE framing, for a stream's usual events: when `bytes` starts with an event
  // of one "data: " line (no CR in it) and its blank line, "\n\n", reads that line as Consume
  // reads the data of the framed event, and gives the event's size and the chunk's kind; a
  // chunk that the content-only fast path takes (see Speed, above) is found at the start of
  // `bytes` without looking for the line's end. Otherwise size 0, with nothing applied: frame
  // the event, then Consume.
  struct TakenEvent {
    size_t size = 0;
    ChunkKind kind = ChunkKind::kDelta;
  };
  TakenEvent ConsumeEvent(std::string_view bytes);

  // Whether a non-empty content delta or a tool_calls delta has been seen.
  bool saw_first_token() const { return saw_first_token_; }
  const Usage& usage() const { return usage_; }
  const std::vector<Choice>& choices() const { return choices_; }  // sorted by index
  // Decoded bytes of every content, tool call name and arguments seen, kept or not, uncapped.
  int64_t output_bytes() const { return output_bytes_; }
  bool done() const { return done_; }
  std::string_view id() const { return id_; }        // from the first chunk carrying one
  std::string_view model() const { return model_; }  // idem
  std::string_view error_message() const { return error_message_; }  // of the last kError
  bool truncated() const { return truncated_; }
  size_t unparsed_chunks() const { return unparsed_chunks_; }
  // Chunks applied by the content-only fast path without a scan (for tests and benchmarks).
  size_t template_chunks() const { return template_chunks_; }

 private:
  struct Json;  // parser, padded scratch buffer and staging chunk; defined in the .cc

  // The content-only fast path (see ContentTemplate in the .cc): true when `data` was applied.
  bool ConsumeLikeTemplate(std::string_view data);
  // Applies `content`, the raw body of a chunk that matched the template (`plain`: known to be
  // printable ASCII without a backslash): false, with nothing applied, if it is not a valid JSON
  // string body.
  bool ApplyTemplateContent(std::string_view content, bool plain);
  void RememberTemplate(std::string_view data, const ParsedChunk& chunk);
  Choice& ChoiceAt(int64_t index);
  // Appends `from` to `to` within max_content_bytes_ (kKeep), and counts it in output_bytes_.
  void AddText(std::string& to, std::string_view from);

  // Constant after construction.
  size_t max_content_bytes_;
  Text text_;

  std::unique_ptr<Json> json_;
  std::string id_, model_, error_message_;
  Usage usage_;
  std::vector<Choice> choices_;
  bool saw_first_token_ = false;
  bool done_ = false;
  bool truncated_ = false;
  size_t unparsed_chunks_ = 0;
  int64_t output_bytes_ = 0;
  size_t template_chunks_ = 0;
};

// Usage from a non-streaming chat.completion body; !present() if it has none or is not valid
// JSON (a body whose tail alone decides is read from it: ScanTailUsage). Otherwise uses a
// parser owned by the calling thread (created on first use, then reused).
Usage ExtractUsage(std::string_view body);

}  // namespace turnpike::stream
