// Any bytes through model_call::DecodeRecording, the response cache's L2 entries read back
// (recording_codec.h). The first byte chooses how the rest is read: odd, as a whole wire form
// (magic, version and check included: almost always refused before the parser); even, as the
// body after the check, which the target frames and seals with RecordingChecksum so that it
// reaches the parser. Besides crashes, checks the codec's contract: a decoded recording is
// complete, encodes again to exactly the bytes it came from (the form is canonical), and those
// decode again; and that a Replay of it in a few client forms ends.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "model_call/recording_codec.h"
#include "model_call/replay.h"
#include "providers/anthropic/anthropic_provider.h"
#include "providers/openai/openai_provider.h"
#include "providers/openai_responses/responses_provider.h"

namespace {

namespace model_call = turnpike::model_call;
namespace providers = turnpike::providers;

// Room for anything -max_len allows, so that the cap is reached only by forged sizes.
constexpr size_t kMaxBytes = size_t{1} << 22;
// A small budget per step: replays take several steps, each frame whole.
constexpr size_t kStepBytes = 512;
constexpr int kMaxSteps = 1 << 16;

void Check(bool ok) {
  if (!ok) __builtin_trap();
}

// The body framed as EncodeRecording frames it, with its check.
std::string Sealed(std::string_view body) {
  std::string bytes("TPRC\x01\x00", model_call::kRecordingChecksumAt);
  const uint64_t check = model_call::RecordingChecksum(body);
  for (size_t i = 0; i < 8; ++i) bytes.push_back(static_cast<char>((check >> (8 * i)) & 0xff));
  bytes.append(body);
  return bytes;
}

void ReplayToTheEnd(const model_call::Recording& recording,
                    const model_call::ReplayOptions& options) {
  model_call::Replay replay(recording, options);
  for (int steps = 0; steps < kMaxSteps; ++steps) {
    if (replay.Next(kStepBytes).end) return;
  }
  Check(false);  // a complete recording's replay always ends
}

void ReplayInSomeForms(const model_call::Recording& recording) {
  static const providers::openai::OpenAiProvider kOpenAi;
  static const providers::anthropic::AnthropicProvider kAnthropic;
  static const providers::openai_responses::ResponsesProvider kResponses;
  providers::EncoderOptions usage;
  usage.include_usage = true;
  ReplayToTheEnd(recording, {{"openai", true}, &kOpenAi, usage});
  ReplayToTheEnd(recording, {{"openai", false}, &kOpenAi, {}});
  ReplayToTheEnd(recording, {{"anthropic", true}, &kAnthropic, {}});
  ReplayToTheEnd(recording, {{"anthropic", false}, &kAnthropic, {}});
  ReplayToTheEnd(recording, {{"openai_responses", true}, &kResponses, {}});
  ReplayToTheEnd(recording, {{"openai", true}, nullptr, {}});
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const std::string_view rest(reinterpret_cast<const char*>(data) + 1, size - 1);
  const std::string bytes = (data[0] & 1) != 0 ? std::string(rest) : Sealed(rest);
  turnpike::Result<std::shared_ptr<const model_call::Recording>> decoded =
      model_call::DecodeRecording(bytes, kMaxBytes);
  if (!decoded.ok()) return 0;
  const model_call::Recording& recording = **decoded;
  const model_call::RecordingProgress progress = recording.progress();
  Check(progress.state == model_call::RecordingState::kComplete && !progress.truncated);
  turnpike::Result<std::string> again = model_call::EncodeRecording(recording);
  Check(again.ok() && *again == bytes);
  turnpike::Result<std::shared_ptr<const model_call::Recording>> redecoded =
      model_call::DecodeRecording(*again, kMaxBytes);
  Check(redecoded.ok());
  turnpike::Result<std::string> third = model_call::EncodeRecording(**redecoded);
  Check(third.ok() && *third == *again);
  ReplayInSomeForms(recording);
  return 0;
}
