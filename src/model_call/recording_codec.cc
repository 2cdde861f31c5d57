#include "model_call/recording_codec.h"

#include <array>
#include <span>
#include <string>
#include <utility>

namespace turnpike::model_call {
namespace {

using providers::EventKind;

constexpr std::string_view kMagic = "TPRC";
static_assert(kMagic.size() + sizeof(uint16_t) == kRecordingChecksumAt);
constexpr size_t kBatch = 32;
constexpr uint8_t kStream = 1, kIdentity = 2, kEvents = 4;
constexpr uint8_t kFlags = kStream | kIdentity | kEvents;
constexpr int kBitsPerByte = 8;
constexpr uint64_t kByteMask = 0xff;
// The fewest bytes each element of a counted list takes: a count past what is left is forged.
constexpr size_t kEventMin = 1 + 1 + 4 + 5 * 4;  // kind, finish, tool_index, 5 strings
constexpr size_t kFormMin = 4 + 1 + 1 + 8 + 4;   // dialect, stream, closed, covered, frames
constexpr size_t kFrameMin = 1 + 4;              // kind, bytes
constexpr size_t kCallMin = 3 * 4;               // id, name, arguments
constexpr size_t kStringMin = 4;
// The last value of each enum the format carries (a value past it is malformed).
constexpr EventKind kLastEventKind = EventKind::kEnd;
constexpr providers::FinishReason kLastFinish = providers::FinishReason::kContentFilter;
constexpr FrameKind kLastFrameKind = FrameKind::kOther;
constexpr ErrorCode kLastErrorCode = ErrorCode::kUpstreamTimeout;
// The largest token count read back. The client encoders add and subtract counts (totals,
// Anthropic's input_tokens) without overflow checks, so a forged count must not reach them;
// any count a model reports is far below.
constexpr int64_t kMaxTokenCount = int64_t{1} << 53;

constexpr uint64_t kChecksumSeed = 0xcbf29ce484222325ULL;
constexpr uint64_t kChecksumMultiplier = 0x9e3779b97f4a7c15ULL;  // odd: a bijection
constexpr int kChecksumShift = 32;
constexpr size_t kWord = 8;

uint64_t LoadLe(std::string_view bytes) {
  uint64_t value = 0;
  for (size_t i = 0; i < bytes.size(); ++i) {
    value |= static_cast<uint64_t>(static_cast<uint8_t>(bytes[i])) << (kBitsPerByte * i);
  }
  return value;
}

bool HasUsage(EventKind kind) { return kind == EventKind::kStart || kind == EventKind::kUsage; }

class Writer {
 public:
  void U8(uint8_t value) { out_.push_back(static_cast<char>(value)); }
  void U16(uint16_t value) { Le(value, 2); }
  void U32(uint32_t value) { Le(value, 4); }
  void U64(uint64_t value) { Le(value, 8); }
  void I32(int32_t value) { U32(static_cast<uint32_t>(value)); }
  void I64(int64_t value) { U64(static_cast<uint64_t>(value)); }
  void Bool(bool value) { U8(value ? 1 : 0); }
  // A recording's strings fit in 32 bits (its cap is below 4 GiB: recording.cc).
  void Str(std::string_view bytes) {
    U32(static_cast<uint32_t>(bytes.size()));
    out_.append(bytes);
  }
  void Raw(std::string_view bytes) { out_.append(bytes); }
  std::string Take() { return std::move(out_); }

 private:
  void Le(uint64_t value, int bytes) {
    for (int i = 0; i < bytes; ++i) {
      out_.push_back(static_cast<char>((value >> (kBitsPerByte * i)) & kByteMask));
    }
  }

  std::string out_;
};

// Reads the input front to back. The first read past the end, or a value the format does not
// allow, makes it fail: every later read gives zero or empty, and ok() says so.
class Reader {
 public:
  explicit Reader(std::string_view in) : in_(in) {}

  bool ok() const { return ok_; }
  bool done() const { return ok_ && at_ == in_.size(); }
  void Fail() { ok_ = false; }

  uint8_t U8() { return static_cast<uint8_t>(Le(1)); }
  uint16_t U16() { return static_cast<uint16_t>(Le(2)); }
  uint32_t U32() { return static_cast<uint32_t>(Le(4)); }
  uint64_t U64() { return Le(8); }
  int32_t I32() { return static_cast<int32_t>(U32()); }
  int64_t I64() { return static_cast<int64_t>(U64()); }
  bool Bool() {
    const uint8_t value = U8();
    if (value > 1) Fail();
    return value == 1;
  }
  std::string_view Raw(size_t size) {
    if (!Need(size)) return {};
    const std::string_view bytes = in_.substr(at_, size);
    at_ += size;
    return bytes;
  }
  std::string_view Str() { return Raw(U32()); }
  // A count of elements of at least `min_each` bytes each: zero (and failed) when the input
  // left cannot hold that many.
  uint32_t Count(size_t min_each) {
    const uint32_t count = U32();
    if (ok_ && count > (in_.size() - at_) / min_each) Fail();
    return ok_ ? count : 0;
  }
  template <typename Enum>
  Enum Of(Enum last) {
    const uint8_t value = U8();
    if (value > static_cast<uint8_t>(last)) Fail();
    return ok_ ? static_cast<Enum>(value) : Enum{};
  }

 private:
  bool Need(size_t size) {
    if (ok_ && size <= in_.size() - at_) return true;
    ok_ = false;
    return false;
  }
  uint64_t Le(int bytes) {
    if (!Need(static_cast<size_t>(bytes))) return 0;
    uint64_t value = 0;
    for (int i = 0; i < bytes; ++i) {
      value |= static_cast<uint64_t>(static_cast<uint8_t>(in_[at_ + i])) << (kBitsPerByte * i);
    }
    at_ += static_cast<size_t>(bytes);
    return value;
  }

  std::string_view in_;
  size_t at_ = 0;
  bool ok_ = true;
};

Error Unavailable(std::string message) {
  return Error{ErrorCode::kUnavailable, std::move(message), ""};
}

// Writing.

void WriteUsage(Writer& w, const providers::TokenUsage& usage) {
  w.I64(usage.prompt_tokens);
  w.I64(usage.completion_tokens);
  w.I64(usage.cached_tokens);
  w.I64(usage.cache_creation_tokens);
  w.I64(usage.reasoning_tokens);
}

void WriteError(Writer& w, const Error& error) {
  w.U8(static_cast<uint8_t>(error.code));
  w.Str(error.message);
  w.Str(error.param);
}

void WriteHead(Writer& w, const AnswerStart& start) {
  w.U8((start.stream ? kStream : 0) | (start.identity ? kIdentity : 0) |
       (start.events ? kEvents : 0));
  w.U32(start.status);
  w.Str(start.dialect);
  w.Str(start.content_type);
  w.Str(start.upstream_model);
}

void WriteEvent(Writer& w, const providers::StreamEvent& event) {
  w.U8(static_cast<uint8_t>(event.kind));
  w.U8(static_cast<uint8_t>(event.finish));
  w.I32(event.tool_index);
  for (std::string_view field :
       {event.text, event.id, event.name, event.model, event.stop_sequence}) {
    w.Str(field);
  }
  if (HasUsage(event.kind)) WriteUsage(w, event.usage);
  if (event.kind != EventKind::kError) return;
  w.Bool(event.error != nullptr);
  if (event.error != nullptr) WriteError(w, *event.error);
}

void WriteEvents(Writer& w, const Recording& recording, size_t events) {
  w.U32(static_cast<uint32_t>(events));
  std::array<providers::StreamEvent, kBatch> batch;
  for (size_t from = 0; from < events;) {
    const size_t count = recording.CopyEvents(from, batch);
    for (size_t i = 0; i < count; ++i) WriteEvent(w, batch[i]);
    from += count;
  }
}

void WriteResponse(Writer& w, const providers::Response& response) {
  for (std::string_view field :
       {std::string_view(response.id), std::string_view(response.model),
        std::string_view(response.text), std::string_view(response.reasoning),
        std::string_view(response.reasoning_signature)}) {
    w.Str(field);
  }
  w.U32(static_cast<uint32_t>(response.redacted_reasoning.size()));
  for (const std::string& payload : response.redacted_reasoning) w.Str(payload);
  w.U32(static_cast<uint32_t>(response.tool_calls.size()));
  for (const providers::ToolCall& call : response.tool_calls) {
    w.Str(call.id);
    w.Str(call.name);
    w.Str(call.arguments);
  }
  w.U8(static_cast<uint8_t>(response.finish));
  w.Str(response.stop_sequence);
  WriteUsage(w, response.usage);
}

void WriteWhole(Writer& w, const Recording& recording, bool present) {
  w.Bool(present);
  if (!present) return;
  const WholeAnswer& whole = recording.whole();
  w.U32(whole.status);
  w.Str(whole.content_type);
  w.Str(whole.body);
  w.Bool(whole.response != nullptr);
  if (whole.response != nullptr) WriteResponse(w, *whole.response);
}

void WriteForms(Writer& w, const Recording& recording) {
  const size_t forms = recording.forms();
  w.U32(static_cast<uint32_t>(forms));
  std::array<RecordedFrame, kBatch> batch;
  for (size_t i = 0; i < forms; ++i) {
    const Form form = recording.form(i);
    const FormProgress progress = recording.form_progress(i);
    w.Str(form.dialect);
    w.Bool(form.stream);
    w.Bool(progress.closed);
    w.U64(progress.closed ? progress.events_covered : 0);
    w.U32(static_cast<uint32_t>(progress.frames));
    for (size_t from = 0; from < progress.frames;) {
      const size_t count = recording.CopyFrames(i, from, batch);
      for (size_t k = 0; k < count; ++k) {
        w.U8(static_cast<uint8_t>(batch[k].kind));
        w.Str(batch[k].bytes);
      }
      from += count;
    }
  }
}

// Reading: each part straight into the recording, through its writer methods.

// A token count: -1 (not reported) or at most kMaxTokenCount.
int64_t ReadCount(Reader& r) {
  const int64_t count = r.I64();
  if (count < -1 || count > kMaxTokenCount) r.Fail();
  return count;
}

providers::TokenUsage ReadUsage(Reader& r) {
  providers::TokenUsage usage;
  usage.prompt_tokens = ReadCount(r);
  usage.completion_tokens = ReadCount(r);
  usage.cached_tokens = ReadCount(r);
  usage.cache_creation_tokens = ReadCount(r);
  usage.reasoning_tokens = ReadCount(r);
  return usage;
}

Error ReadError(Reader& r) {
  Error error{r.Of(kLastErrorCode), {}, {}};
  error.message = r.Str();
  error.param = r.Str();
  return error;
}

bool ReadHead(Reader& r, Recording& recording) {
  const uint8_t flags = r.U8();
  if ((flags & ~kFlags) != 0) r.Fail();
  AnswerStart start;
  start.stream = (flags & kStream) != 0;
  start.identity = (flags & kIdentity) != 0;
  start.events = (flags & kEvents) != 0;
  start.status = r.U32();
  start.dialect = r.Str();
  start.content_type = r.Str();
  start.upstream_model = r.Str();
  if (r.ok()) recording.Start(start);
  return r.ok();
}

bool ReadEvents(Reader& r, Recording& recording, size_t& events) {
  events = r.Count(kEventMin);
  for (size_t i = 0; i < events && r.ok(); ++i) {
    providers::StreamEvent event;
    event.kind = r.Of(kLastEventKind);
    event.finish = r.Of(kLastFinish);
    event.tool_index = r.I32();
    event.text = r.Str();
    event.id = r.Str();
    event.name = r.Str();
    event.model = r.Str();
    event.stop_sequence = r.Str();
    if (HasUsage(event.kind)) event.usage = ReadUsage(r);
    Error error;
    if (event.kind == EventKind::kError && r.Bool()) {
      error = ReadError(r);
      event.error = &error;
    }
    if (r.ok()) recording.AppendEvent(event);
  }
  return r.ok();
}

bool ReadResponse(Reader& r, providers::Response& response) {
  for (std::string* field : {&response.id, &response.model, &response.text, &response.reasoning,
                             &response.reasoning_signature}) {
    field->assign(r.Str());
  }
  const uint32_t redacted = r.Count(kStringMin);
  for (uint32_t i = 0; i < redacted && r.ok(); ++i) {
    response.redacted_reasoning.emplace_back(r.Str());
  }
  const uint32_t calls = r.Count(kCallMin);
  for (uint32_t i = 0; i < calls && r.ok(); ++i) {
    providers::ToolCall& call = response.tool_calls.emplace_back();
    call.id = r.Str();
    call.name = r.Str();
    call.arguments = r.Str();
  }
  response.finish = r.Of(kLastFinish);
  response.stop_sequence = r.Str();
  response.usage = ReadUsage(r);
  return r.ok();
}

bool ReadWhole(Reader& r, Recording& recording) {
  if (!r.Bool()) return r.ok();
  WholeAnswer whole;
  whole.status = r.U32();
  whole.content_type = r.Str();
  whole.body = r.Str();
  providers::Response response;
  if (r.Bool() && ReadResponse(r, response)) whole.response = &response;
  if (r.ok()) recording.SetWhole(whole);
  return r.ok();
}

bool ReadFrames(Reader& r, Recording& recording, size_t form) {
  const uint32_t frames = r.Count(kFrameMin);
  for (uint32_t i = 0; i < frames && r.ok(); ++i) {
    const FrameKind kind = r.Of(kLastFrameKind);
    const std::string_view bytes = r.Str();
    if (bytes.empty()) r.Fail();  // a recording keeps no empty frame
    if (r.ok()) recording.AppendFrame(form, bytes, kind);
  }
  return r.ok();
}

bool ReadForms(Reader& r, Recording& recording, size_t events) {
  const uint32_t forms = r.Count(kFormMin);
  for (uint32_t i = 0; i < forms && r.ok(); ++i) {
    const std::string_view dialect = r.Str();
    const bool stream = r.Bool();
    const bool closed = r.Bool();
    const uint64_t covered = r.U64();
    if (covered > events || (!closed && covered != 0)) r.Fail();
    if (!r.ok()) break;
    // A form already added comes back with its first index: a duplicate is malformed.
    const size_t form = recording.AddForm({dialect, stream});
    if (form != i) r.Fail();
    if (!ReadFrames(r, recording, form)) break;
    if (closed) recording.CloseForm(form, static_cast<size_t>(covered));
  }
  return r.ok();
}

}  // namespace

uint64_t RecordingChecksum(std::string_view bytes) {
  // Each step is a bijection of the state for a given word, and of the word for a given state:
  // a change to any one word always changes the result. The length tells the zero-padded tail
  // from real zeros.
  uint64_t h = kChecksumSeed ^ bytes.size();
  for (size_t at = 0; at < bytes.size(); at += kWord) {
    h = (h ^ LoadLe(bytes.substr(at, kWord))) * kChecksumMultiplier;
    h ^= h >> kChecksumShift;
  }
  return h;
}

Result<std::string> EncodeRecording(const Recording& recording) {
  const RecordingProgress progress = recording.progress();
  if (!progress.started || progress.state != RecordingState::kComplete || progress.truncated) {
    return Unavailable("only a complete recording has a wire form");
  }
  Writer w;
  w.Raw(kMagic);
  w.U16(kRecordingFormatVersion);
  w.U64(0);  // the check, once the rest is written
  WriteHead(w, recording.start());
  WriteEvents(w, recording, progress.events);
  WriteWhole(w, recording, progress.whole);
  WriteForms(w, recording);
  std::string bytes = w.Take();
  Writer check;
  check.U64(RecordingChecksum(std::string_view(bytes).substr(kRecordingBodyAt)));
  bytes.replace(kRecordingChecksumAt, kWord, check.Take());
  return bytes;
}

Result<std::shared_ptr<const Recording>> DecodeRecording(std::string_view bytes, size_t max_bytes) {
  Reader r(bytes);
  if (r.Raw(kMagic.size()) != kMagic) return Unavailable("not a recording's wire form");
  const uint16_t version = r.U16();
  if (!r.ok()) return Unavailable("not a recording's wire form");
  if (version != kRecordingFormatVersion) {
    return Unavailable("a recording in format " + std::to_string(version) + ", not " +
                       std::to_string(kRecordingFormatVersion));
  }
  const uint64_t check = r.U64();
  if (!r.ok() || check != RecordingChecksum(bytes.substr(kRecordingBodyAt))) {
    return Unavailable("a recording whose bytes do not match their check");
  }
  auto recording = std::make_shared<Recording>(max_bytes);
  size_t events = 0;
  if (!ReadHead(r, *recording) || !ReadEvents(r, *recording, events) || !ReadWhole(r, *recording) ||
      !ReadForms(r, *recording, events) || !r.done()) {
    return Unavailable("a malformed recording");
  }
  recording->Finish(nullptr);
  if (recording->progress().truncated) return Unavailable("a recording larger than its cap");
  return std::shared_ptr<const Recording>(std::move(recording));
}

}  // namespace turnpike::model_call
