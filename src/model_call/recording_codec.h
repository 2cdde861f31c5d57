// A complete Recording's wire form: the bytes a shared cache (the response cache's Redis L2)
// stores, and the Recording rebuilt from them, which a Replay (replay.h) serves in any form
// exactly as it serves the original.
//
// Layout (format 1), integers little-endian, a string is a u32 length and its bytes:
//   magic    "TPRC", then u16 version (1), then u64 check: RecordingChecksum of every byte
//            after it, so that a flipped or lost byte (storage, network) is refused, not served
//            as another answer. It does not make forged bytes safe: the parser checks
//            everything anyway
//   head     u8 flags (1 stream, 2 identity, 4 events), u32 status, dialect, content_type,
//            upstream_model
//   events   u32 count, each: u8 kind, u8 finish, i32 tool_index, text, id, name, model,
//            stop_sequence; kStart and kUsage: usage; kError: u8 has_error, then error
//   whole    u8 present, then u32 status, content_type, body, u8 has_response, then response
//   forms    u32 count, each: dialect, u8 stream, u8 closed, u64 events_covered, u32 frames,
//            each frame: u8 kind (FrameKind), bytes
//   nothing follows
//   usage    i64 prompt, completion, cached, cache_creation, reasoning tokens: each -1 (not
//            reported) or from 0 to 2^53 (the client encoders sum counts unchecked)
//   error    u8 code (ErrorCode), message, param
//   response id, model, text, reasoning, reasoning_signature, u32 count and each redacted
//            payload, u32 count and each tool call (id, name, arguments), u8 finish,
//            stop_sequence, usage
// A change to this layout, or to the values of EventKind, FinishReason, FrameKind or ErrorCode,
// is a new version: bytes of another version are refused, and a cache treats them as a miss.
//
// The form is canonical: DecodeRecording accepts only what EncodeRecording writes (flags and
// booleans with no other bits, no duplicate form, no empty frame, events_covered only for a
// closed form and at most the events), so encoding a decoded recording gives the same bytes. A
// recording holding a token count out of the usage range above is encoded but refused when
// read back: a miss.
//
// Ownership: EncodeRecording reads the recording (any thread; it may be shared). A decoded
// recording is returned as a shared_ptr to const: a cache shares one entry between the hits
// that replay it on every worker, and an entry evicted during a replay lives until that replay
// ends; it is complete and never written again, and a Recording's readers are thread-safe.
// Errors: kUnavailable, never an exception: EncodeRecording refuses a recording that is not
// complete (in flight, failed, truncated, never started): a cache stores only whole answers.
// DecodeRecording refuses another version and anything malformed, and checks every length and
// count against the input before it reads or allocates (a forged count costs nothing), and the
// rebuilt recording against `max_bytes` (its cap, recording.h).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "common/result.h"
#include "model_call/recording.h"

namespace turnpike::model_call {

inline constexpr uint16_t kRecordingFormatVersion = 1;

Result<std::string> EncodeRecording(const Recording& recording);

Result<std::shared_ptr<const Recording>> DecodeRecording(std::string_view bytes, size_t max_bytes);

// The check the layout carries: a 64-bit hash of `bytes` that changes whenever one 8-byte word
// of them does (a multiply-xorshift per word). Public for the tests and the fuzz target, which
// seal bytes of their own with it so that they reach the parser.
uint64_t RecordingChecksum(std::string_view bytes);

// Where the check sits in the layout, and where the bytes it covers begin.
inline constexpr size_t kRecordingChecksumAt = 6;
inline constexpr size_t kRecordingBodyAt = kRecordingChecksumAt + 8;

}  // namespace turnpike::model_call
