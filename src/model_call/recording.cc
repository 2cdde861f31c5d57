#include "model_call/recording.h"

#include <algorithm>
#include <array>
#include <cstring>
#include <limits>

namespace turnpike::model_call {

namespace {

// Room made at the first record of each list (or past a form's inline frames, and the arena's
// inline blocks), so that a long answer's records take one allocation per list rather than one
// per doubling.
constexpr size_t kFirstBlock = 4096;  // without a block from the owner
constexpr size_t kFirstEvents = 64;
constexpr size_t kFirstFrames = 64;
constexpr size_t kFirstBlocks = 8;
constexpr size_t kLargestBlock = 64 * 1024;
constexpr size_t kReplayBatch = 32;
constexpr size_t kFrameBatch = 32;  // AppendFrames' records published per lock
constexpr size_t kFields = 5;
constexpr uint32_t kNoExtra = std::numeric_limits<uint32_t>::max();

// Record lengths are 32-bit; a cap below 4 GiB keeps every string within them.
constexpr size_t kMaxCap = std::numeric_limits<uint32_t>::max();

size_t ResponseBytes(const providers::Response& response) {
  size_t size = sizeof(providers::Response) + response.id.size() + response.model.size() +
                response.text.size() + response.reasoning.size() +
                response.reasoning_signature.size() + response.stop_sequence.size();
  for (const std::string& payload : response.redacted_reasoning) size += payload.size();
  for (const providers::ToolCall& call : response.tool_calls) {
    size += sizeof(providers::ToolCall) + call.id.size() + call.name.size() + call.arguments.size();
  }
  return size;
}

}  // namespace

Recording::Arena::Arena(std::span<char> first_block)
    : next_(first_block.data()),
      left_(first_block.size()),
      next_block_(first_block.empty() ? kFirstBlock / 2 : first_block.size()) {}

char* Recording::Arena::Allocate(size_t size) {
  if (size > left_) {
    // Blocks double up to kLargestBlock, so a short answer takes little and a long one few
    // allocations; a string larger than a block gets a block of its own size.
    next_block_ = std::min(next_block_ * 2, kLargestBlock);
    const size_t block = std::max(size, next_block_);
    // Not value-initialised: every byte handed out is written before it is read.
    std::unique_ptr<char[]> bytes = std::make_unique_for_overwrite<char[]>(block);
    next_ = bytes.get();
    left_ = block;
    if (heap_blocks_ < kInlineBlocks) {
      blocks_[heap_blocks_] = std::move(bytes);
    } else {
      if (more_.empty()) more_.reserve(kFirstBlocks);
      more_.push_back(std::move(bytes));
    }
    ++heap_blocks_;
  }
  char* out = next_;
  next_ += size;
  left_ -= size;
  return out;
}

void Recording::FrameList::push_back(const FrameRecord& frame) {
  if (size_ < kInlineFrames) {
    inline_[size_++] = frame;
    return;
  }
  if (more_.empty()) more_.reserve(kFirstFrames);
  more_.push_back(frame);
  ++size_;
}

Recording::Recording(size_t max_bytes, std::span<char> first_block)
    : max_bytes_(std::min(max_bytes, kMaxCap)), arena_(first_block) {}

Recording::~Recording() = default;

bool Recording::Charge(size_t size) {
  if (ended_) return false;
  if (charged_ + size <= max_bytes_ && !truncated_writer_) {
    charged_ += size;
    return true;
  }
  truncated_writer_ = true;
  std::lock_guard lock(mu_);
  truncated_ = true;
  return false;
}

std::string_view Recording::Copy(std::string_view bytes) {
  if (bytes.empty() || !Charge(bytes.size())) return {};
  char* data = arena_.Allocate(bytes.size());
  std::memcpy(data, bytes.data(), bytes.size());
  return {data, bytes.size()};
}

void Recording::Start(const AnswerStart& start) {
  if (ended_) return;
  start_ = start;
  start_.dialect = Copy(start.dialect);
  start_.content_type = Copy(start.content_type);
  start_.upstream_model = Copy(start.upstream_model);
  std::lock_guard lock(mu_);
  started_ = true;
  bytes_ = charged_;
}

void Recording::AppendEvent(const providers::StreamEvent& event) {
  using providers::EventKind;
  const std::array<std::string_view, kFields> fields = {event.text, event.id, event.name,
                                                        event.model, event.stop_sequence};
  size_t strings = 0;
  for (std::string_view field : fields) strings += field.size();
  const bool has_usage = event.kind == EventKind::kStart || event.kind == EventKind::kUsage;
  const bool has_error = event.kind == EventKind::kError && event.error != nullptr;
  size_t cost = strings + sizeof(EventRecord);
  if (has_usage) cost += sizeof(providers::TokenUsage);
  if (has_error) cost += sizeof(Error) + event.error->message.size() + event.error->param.size();
  if (!Charge(cost)) return;

  EventRecord record{};
  record.extra = kNoExtra;
  record.kind = event.kind;
  record.finish = event.finish;
  record.tool_index = event.tool_index;
  char* out = strings == 0 ? nullptr : arena_.Allocate(strings);
  record.strings = out;
  for (size_t i = 0; i < kFields; ++i) {
    if (!fields[i].empty()) std::memcpy(out, fields[i].data(), fields[i].size());
    out += fields[i].size();
    record.lengths[i] = static_cast<uint32_t>(fields[i].size());
  }
  std::unique_ptr<Error> error = has_error ? std::make_unique<Error>(*event.error) : nullptr;

  std::lock_guard lock(mu_);
  if (has_usage) {
    record.extra = static_cast<uint32_t>(usages_.size());
    usages_.push_back(event.usage);
  } else if (has_error) {
    record.extra = static_cast<uint32_t>(errors_.size());
    errors_.push_back(std::move(error));
  }
  if (events_.empty()) events_.reserve(kFirstEvents);
  events_.push_back(record);
  bytes_ = charged_;
}

size_t Recording::AddForm(const Form& form) {
  std::lock_guard lock(mu_);
  for (size_t i = 0; i < forms_; ++i) {
    if (Log(i).dialect == form.dialect && Log(i).stream == form.stream) return i;
  }
  if (forms_ > 0) more_forms_.push_back(std::make_unique<FormLog>());
  FormLog& log = Log(forms_);
  log.dialect = std::string(form.dialect);
  log.stream = form.stream;
  return forms_++;
}

void Recording::AppendFrame(size_t form, std::string_view frame, FrameKind kind) {
  // The writer is the only one that changes the forms, so it reads them without the lock.
  if (form >= forms_ || Log(form).closed || frame.empty()) return;
  if (!Charge(frame.size() + sizeof(FrameRecord))) return;
  char* data = arena_.Allocate(frame.size());
  std::memcpy(data, frame.data(), frame.size());
  std::lock_guard lock(mu_);
  Log(form).frames.push_back({data, static_cast<uint32_t>(frame.size()), kind});
  bytes_ = charged_;
}

void Recording::AppendFrames(size_t form, std::span<const IdentityFrame> frames) {
  if (form >= forms_ || Log(form).closed) return;
  std::array<FrameRecord, kFrameBatch> batch;
  size_t count = 0;
  size_t recorded = charged_;  // what the records in `batch` and before it were charged
  const auto publish = [&] {
    std::lock_guard lock(mu_);
    for (size_t i = 0; i < count; ++i) Log(form).frames.push_back(batch[i]);
    bytes_ = recorded;
    count = 0;
  };
  // Frames framed from one read lie back to back in it: each run of them is copied at once, its
  // frames recorded at their offsets in the copy. Each frame is still charged on its own, and
  // the first that does not fit ends the recording's frames, as it did one copy per frame.
  for (size_t i = 0; i < frames.size();) {
    if (frames[i].bytes.empty()) {
      ++i;
      continue;
    }
    const char* const begin = frames[i].bytes.data();
    const char* end = begin;
    size_t next = i;
    bool charged = true;
    for (; next < frames.size(); ++next) {
      const std::string_view bytes = frames[next].bytes;
      if (bytes.empty()) continue;
      if (bytes.data() != end) break;
      charged = Charge(bytes.size() + sizeof(FrameRecord));
      if (!charged) break;
      end += bytes.size();
    }
    if (end != begin) {
      char* data = arena_.Allocate(static_cast<size_t>(end - begin));
      std::memcpy(data, begin, static_cast<size_t>(end - begin));
      for (size_t k = i; k < next; ++k) {
        const std::string_view bytes = frames[k].bytes;
        if (bytes.empty()) continue;
        batch[count++] = {data + (bytes.data() - begin), static_cast<uint32_t>(bytes.size()),
                          frames[k].kind};
        recorded += bytes.size() + sizeof(FrameRecord);
        if (count == batch.size()) publish();
      }
    }
    if (!charged) break;
    i = next;
  }
  if (count > 0) publish();
}

void Recording::AppendFrame(const Form& form, std::string_view frame, FrameKind kind) {
  AppendFrame(AddForm(form), frame, kind);
}

void Recording::CloseForm(size_t form, size_t events_covered) {
  std::lock_guard lock(mu_);
  if (form >= forms_ || Log(form).closed) return;
  Log(form).closed = true;
  Log(form).events_covered = std::min(events_covered, events_.size());
}

void Recording::SetWhole(const WholeAnswer& answer) {
  if (ended_) return;
  whole_.status = answer.status;
  whole_.content_type = Copy(answer.content_type);
  whole_.body = Copy(answer.body);
  if (answer.response != nullptr && Charge(ResponseBytes(*answer.response))) {
    response_ = *answer.response;
    whole_.response = &*response_;
  }
  std::lock_guard lock(mu_);
  whole_set_ = true;
  bytes_ = charged_;
}

void Recording::Finish(const Error* error) {
  if (ended_) return;
  ended_ = true;
  std::unique_ptr<Error> copy = error != nullptr ? std::make_unique<Error>(*error) : nullptr;
  std::lock_guard lock(mu_);
  state_ = copy ? RecordingState::kFailed : RecordingState::kComplete;
  error_ = std::move(copy);
}

RecordingProgress Recording::progress() const {
  std::lock_guard lock(mu_);
  RecordingProgress progress;
  progress.started = started_;
  progress.state = state_;
  progress.truncated = truncated_;
  progress.whole = whole_set_;
  progress.events = events_.size();
  progress.bytes = bytes_;
  progress.error = error_.get();
  return progress;
}

providers::StreamEvent Recording::EventAt(size_t index) const {
  const EventRecord& record = events_[index];
  providers::StreamEvent event;
  event.kind = record.kind;
  event.finish = record.finish;
  event.tool_index = record.tool_index;
  std::string_view* fields[kFields] = {&event.text, &event.id, &event.name, &event.model,
                                       &event.stop_sequence};
  const char* at = record.strings;
  for (size_t i = 0; i < kFields; ++i) {
    *fields[i] = std::string_view(record.lengths[i] == 0 ? "" : at, record.lengths[i]);
    at += record.lengths[i];
  }
  if (record.kind == providers::EventKind::kStart || record.kind == providers::EventKind::kUsage) {
    event.usage = usages_[record.extra];
  } else if (record.kind == providers::EventKind::kError && record.extra != kNoExtra) {
    event.error = errors_[record.extra].get();
  }
  return event;
}

size_t Recording::CopyEvents(size_t from, std::span<providers::StreamEvent> out) const {
  std::lock_guard lock(mu_);
  if (from >= events_.size()) return 0;
  const size_t count = std::min(out.size(), events_.size() - from);
  for (size_t i = 0; i < count; ++i) out[i] = EventAt(from + i);
  return count;
}

size_t Recording::Replay(providers::EventSink& sink, size_t from) const {
  std::array<providers::StreamEvent, kReplayBatch> batch;
  size_t sent = 0;
  for (;;) {
    const size_t count = CopyEvents(from + sent, batch);
    if (count == 0) return sent;
    for (size_t i = 0; i < count; ++i) sink.OnEvent(batch[i]);
    sent += count;
  }
}

size_t Recording::FindForm(const Form& form) const {
  std::lock_guard lock(mu_);
  for (size_t i = 0; i < forms_; ++i) {
    if (Log(i).dialect == form.dialect && Log(i).stream == form.stream) return i;
  }
  return npos;
}

size_t Recording::forms() const {
  std::lock_guard lock(mu_);
  return forms_;
}

Form Recording::form(size_t index) const {
  std::lock_guard lock(mu_);
  if (index >= forms_) return {};
  return {Log(index).dialect, Log(index).stream};
}

FormProgress Recording::form_progress(size_t form) const {
  std::lock_guard lock(mu_);
  if (form >= forms_) return {};
  const FormLog& log = Log(form);
  return {log.frames.size(), log.closed, log.events_covered};
}

size_t Recording::CopyFrames(size_t form, size_t from, std::span<RecordedFrame> out) const {
  std::lock_guard lock(mu_);
  if (form >= forms_) return 0;
  const FrameList& frames = Log(form).frames;
  if (from >= frames.size()) return 0;
  const size_t count = std::min(out.size(), frames.size() - from);
  for (size_t i = 0; i < count; ++i) {
    const FrameRecord& frame = frames[from + i];
    out[i] = {std::string_view(frame.data, frame.size), frame.kind};
  }
  return count;
}

}  // namespace turnpike::model_call
