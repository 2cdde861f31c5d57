#include "stream/chunk_scan.h"

#include <cstdint>
#include <cstring>

#include "stream/json_cursor.h"

namespace turnpike::stream {
namespace {

// A chunk's reader (json_cursor.h): "not decided here" leaves the payload to ParseChunk.
class Scanner : public JsonCursor {
 public:
  using JsonCursor::JsonCursor;

  // A whole chunk, as ParsedChunk or EscapedChunk; with `lead`, also its lead (chunk_scan.h).
  template <typename Out>
  bool Whole(Out& out, ChunkLead* lead);
  // A chunk that starts with `lead`'s bytes, scanned from where they end.
  template <typename Out>
  bool AfterLead(Out& out, const ChunkLead& lead);
  // A body's tail from its top-level "usage" key (chunk_scan.h, ScanTailUsage).
  bool TailUsage(stream::Usage& usage);

 private:
  bool Usage(stream::Usage& usage);
  bool ToolCall(ToolCallDelta& call);
  bool Delta(size_t slot, ParsedChunk& out);
  // A top-level member, and an element of "choices", of either reading.
  template <typename Out>
  bool Member(std::string_view key, Out& out);
  bool Choice(int64_t position, ParsedChunk& out);
  bool Choice(int64_t position, stream::EscapedChunk& out);
  bool Error(ParsedChunk& out);
  // Each reading's own way with a string member, and with an upstream error (the decoder's is
  // its simdjson read).
  bool Text(std::string_view& out, const ParsedChunk&) { return OptionalString(out); }
  bool Text(std::string_view& out, const stream::EscapedChunk&) { return EscapedString(out); }
  bool ErrorMember(ParsedChunk& out) { return Error(out); }
  static bool ErrorMember(stream::EscapedChunk&) { return false; }
  bool EscapedTool(int64_t position, stream::EscapedChunk& out);
  // At the first "choices": the lead ends here when nothing before it had to be read but id
  // and model (views into the input: the chunk is plain). Any other member read ends the chance.
  template <typename Out>
  void NoteLead(const Out& out);

  // Recording a lead: where it ends (0: none), and whether the members so far allow one.
  size_t lead_size_ = 0;
  bool lead_open_ = false;
  std::string_view lead_id_, lead_model_;  // id and model as the lead ends
};

bool Scanner::Usage(stream::Usage& usage) {
  return Members([&](std::string_view key) {
    if (key == "prompt_tokens") return OptionalInt(usage.prompt_tokens);
    if (key == "completion_tokens") return OptionalInt(usage.completion_tokens);
    if (key == "total_tokens") return OptionalInt(usage.total_tokens);
    if (key == "completion_tokens_details") {
      return Members([&](std::string_view detail) {
        return detail == "reasoning_tokens" ? OptionalInt(usage.reasoning_tokens) : SkipValue(4);
      });
    }
    if (key != "prompt_tokens_details") return SkipValue(3);
    return Members([&](std::string_view detail) {
      return detail == "cached_tokens" ? OptionalInt(usage.cached_tokens) : SkipValue(4);
    });
  });
}

bool Scanner::ToolCall(ToolCallDelta& call) {
  return Members([&](std::string_view key) {
    if (key == "index") return OptionalInt(call.index);
    if (key == "id") return OptionalString(call.id);
    if (key == "type") return OptionalString(call.type);
    if (key != "function") return SkipValue(7);
    return Members([&](std::string_view field) {
      if (field == "name") return OptionalString(call.name);
      if (field == "arguments") return OptionalString(call.arguments);
      return SkipValue(8);
    });
  });
}

bool Scanner::Delta(size_t slot, ParsedChunk& out) {
  return Members([&](std::string_view key) {
    ChoiceDelta& choice = out.choices[slot];  // re-fetched: tool calls do not touch `choices`
    if (key == "content") return OptionalString(choice.content);
    if (key == "role") return OptionalString(choice.role);
    if (key != "tool_calls") return SkipValue(5);
    return Elements([&](int64_t position) {
      ToolCallDelta& call = out.tool_calls.emplace_back();
      call.choice_slot = slot;
      call.index = position;
      return ToolCall(call);
    });
  });
}

bool Scanner::Choice(int64_t position, ParsedChunk& out) {
  const size_t slot = out.choices.size();
  out.choices.emplace_back().index = position;
  return Members([&](std::string_view key) {
    if (key == "index") return OptionalInt(out.choices[slot].index);
    if (key == "delta") return Delta(slot, out);
    if (key == "finish_reason") return OptionalString(out.choices[slot].finish_reason);
    return SkipValue(4);
  });
}

bool Scanner::Error(ParsedChunk& out) {
  out.is_error = true;
  if (Peek() == '"') return OptionalString(out.error_message);
  return Members([&](std::string_view key) {
    return key == "message" ? OptionalString(out.error_message) : SkipValue(3);
  });
}

template <typename Out>
void Scanner::NoteLead(const Out& out) {
  if (lead_open_ && plain_ && Peek() == '[') {
    lead_size_ = static_cast<size_t>(p_ + 1 - begin_);
    lead_id_ = out.id;
    lead_model_ = out.model;
  }
  lead_open_ = false;
}

template <typename Out>
bool Scanner::Member(std::string_view key, Out& out) {
  if (key == "choices") {
    NoteLead(out);
    return Elements([&](int64_t position) { return Choice(position, out); });
  }
  if (key == "usage") {
    lead_open_ = false;
    out.has_usage = Peek() == '{';
    return Usage(out.usage);
  }
  if (key == "id") return Text(out.id, out);
  if (key == "model") return Text(out.model, out);
  if (key == "error") {
    lead_open_ = false;
    return ErrorMember(out);
  }
  return SkipValue(2);
}

template <typename Out>
bool Scanner::Whole(Out& out, ChunkLead* lead) {
  if (Peek() != '{') return false;
  lead_open_ = lead != nullptr;
  const bool members = Members([&](std::string_view key) { return Member(key, out); });
  if (!members || !AtEnd()) return false;
  if (lead != nullptr) lead->Learn(std::string_view(begin_, lead_size_), lead_id_, lead_model_);
  return true;
}

template <typename Out>
bool Scanner::AfterLead(Out& out, const ChunkLead& lead) {
  // As a whole scan stands after the lead: id and model read, inside "choices" at its first
  // element, nothing else read.
  out.id = lead.Id(begin_);
  out.model = lead.Model(begin_);
  p_ = begin_ + lead.size();
  const auto member = [&](std::string_view key) { return Member(key, out); };
  return ElementsAfterOpen([&](int64_t position) { return Choice(position, out); }) &&
         MembersAfterValue(member) && AtEnd();
}

bool Scanner::EscapedTool(int64_t position, stream::EscapedChunk& out) {
  EscapedToolDelta& tool = out.tools.emplace_back();
  tool.index = position;
  return Members([&](std::string_view key) {
    if (key == "index") return OptionalInt(tool.index);
    if (key == "id") return EscapedString(tool.id);
    if (key != "function") return SkipValue(7);
    return Members([&](std::string_view field) {
      if (field == "name") return EscapedString(tool.name);
      if (field == "arguments") return EscapedString(tool.arguments);
      return SkipValue(8);
    });
  });
}

bool Scanner::Choice(int64_t position, stream::EscapedChunk& out) {
  int64_t index = position;  // one per choice, as the decoder's read keeps it
  return Members([&](std::string_view key) {
    if (key == "index") {
      if (!OptionalInt(index)) return false;
      if (index != 0) out.other_choice = true;
      return true;
    }
    if (key == "finish_reason") return EscapedString(out.finish_reason);
    if (key != "delta") return SkipValue(4);
    return Members([&](std::string_view field) {
      if (field == "content") return EscapedString(out.content);
      if (field == "refusal") return EscapedString(out.refusal);
      if (field == "reasoning_content" || field == "reasoning") {
        return EscapedString(out.reasoning);
      }
      if (field != "tool_calls") return SkipValue(5);
      return Elements([&](int64_t at) { return EscapedTool(at, out); });
    });
  });
}

bool Scanner::TailUsage(stream::Usage& usage) {
  std::string_view key;
  bool escaped;
  if (!RawString(key, escaped) || Peek() != ':') return false;
  ++p_;
  // The members after it are the top-level object's last: none is "usage" (the search found the
  // last), and the object must close at the body's end.
  return Usage(usage) && MembersAfterValue([&](std::string_view) { return SkipValue(2); }) &&
         AtEnd();
}

// A chunk read with a lead (chunk_scan.h), as ParsedChunk or EscapedChunk.
template <typename Out>
bool ScanWithLead(std::string_view json, Out& out, std::string& scratch, ChunkLead& lead) {
  const size_t lead_size = lead.size();
  if (lead_size != 0 && json.size() > lead_size &&
      std::memcmp(json.data(), lead.bytes().data(), lead_size) == 0) {
    Scanner scanner(json, scratch, lead_size);
    out.plain = scanner.plain();
    return scanner.AfterLead(out, lead);
  }
  Scanner scanner(json, scratch);
  out.plain = scanner.plain();
  if (scanner.Whole(out, &lead)) return true;
  lead.Forget();
  return false;
}

}  // namespace

bool ScanChunk(std::string_view json, ParsedChunk& out, std::string& unescaped) {
  unescaped.clear();
  Scanner scanner(json, unescaped);
  out.plain = scanner.plain();
  return scanner.Whole(out, nullptr);
}

bool ScanTailUsage(std::string_view body, Usage& usage) {
  // The last `"usage"` in the body: its 'u' stands in [1, size - 6].
  constexpr std::string_view kKey = "\"usage\"";
  if (body.size() < kKey.size()) return false;
  const char* const begin = body.data();
  size_t stop = body.size() - kKey.size() + 2;  // one past the last place its 'u' can stand
  const char* key = nullptr;
  while (key == nullptr) {
    if (stop <= 1) return false;
    const auto* u = static_cast<const char*>(memrchr(begin + 1, 'u', stop - 1));
    if (u == nullptr) return false;
    if (std::memcmp(u - 1, kKey.data(), kKey.size()) == 0) key = u - 1;
    stop = static_cast<size_t>(u - begin);
  }
  // A quote after a backslash may be escaped, inside a string: not decided here. Any other
  // quote is one of the body's own, and one followed by `usage"` opens a string.
  if (key != begin && key[-1] == '\\') return false;
  std::string unescaped;  // Usage reads no string: never grows
  Scanner scanner(body.substr(static_cast<size_t>(key - begin)), unescaped);
  usage = Usage{};
  return scanner.TailUsage(usage);
}

void ChunkLead::Learn(std::string_view bytes, std::string_view id, std::string_view model) {
  if (bytes.size() > kMaxBytes) bytes = {};
  if (!bytes.empty()) std::memcpy(bytes_, bytes.data(), bytes.size());
  size_ = bytes.size();
  // Views into the lead (or empty: absent or null), kept as offsets.
  const auto offset = [&](std::string_view v) {
    return v.empty() ? 0 : static_cast<size_t>(v.data() - bytes.data());
  };
  id_at_ = offset(id);
  id_size_ = id.size();
  model_at_ = offset(model);
  model_size_ = model.size();
}

bool ScanChunk(std::string_view json, ParsedChunk& out, std::string& unescaped, ChunkLead& lead) {
  unescaped.clear();
  return ScanWithLead(json, out, unescaped, lead);
}

void EscapedChunk::Clear() {
  id = model = content = refusal = reasoning = finish_reason = {};
  has_usage = other_choice = plain = false;
  usage = Usage{};
  tools.clear();
}

bool ScanEscapedChunk(std::string_view json, EscapedChunk& out, std::string& scratch) {
  Scanner scanner(json, scratch);
  out.plain = scanner.plain();
  return scanner.Whole(out, nullptr);
}

bool ScanEscapedChunk(std::string_view json, EscapedChunk& out, std::string& scratch,
                      ChunkLead& lead) {
  return ScanWithLead(json, out, scratch, lead);
}

}  // namespace turnpike::stream
