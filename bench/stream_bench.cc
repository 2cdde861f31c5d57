// Stream stages per event: SSE framing and the chat accumulator tee.
//
//   ninja -C build bench/stream_bench && build/bench/stream_bench
#include <benchmark/benchmark.h>

#include <string>
#include <vector>

#include "stream/chat_accumulator.h"
#include "stream/chunk_parse.h"
#include "stream/padded_json.h"
#include "stream/sse_parser.h"

namespace turnpike::stream {
namespace {

// A typical OpenAI content chunk (~230 bytes of JSON; the event is ~240 bytes).
const std::string kChunkJson =
    R"({"id":"chatcmpl-AbCdEfGhIjKlMnOpQrStUvWxYz012","object":"chat.completion.chunk",)"
    R"("created":1718000000,"model":"gpt-4o-mini-2024-07-18","system_fingerprint":"fp_0ba0d124f1",)"
    R"("choices":[{"index":0,"delta":{"content":" world"},"logprobs":null,"finish_reason":null}]})";
// A short chunk close to the ~150-byte events of smaller providers.
const std::string kShortChunkJson =
    R"({"id":"cmpl-7","object":"chat.completion.chunk","created":1718000000,"model":"llama3",)"
    R"("choices":[{"index":0,"delta":{"content":" the"},"finish_reason":null}]})";

std::string Event(const std::string& json) { return "data: " + json + "\n\n"; }

void CountEvents(benchmark::State& state, size_t events_per_iteration, size_t bytes) {
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations() * events_per_iteration));
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * bytes));
}

// One event per read: the usual shape of a token stream.
void BM_SseOneEventPerFeed(benchmark::State& state, const std::string& json) {
  const std::string event = Event(json);
  SseParser parser;
  size_t data_bytes = 0;
  for (auto _ : state) {
    Status status = parser.Feed(event, [&](const SseEvent& e) { data_bytes += e.data.size(); });
    benchmark::DoNotOptimize(status);
  }
  benchmark::DoNotOptimize(data_bytes);
  CountEvents(state, 1, event.size());
  state.counters["event_bytes"] = static_cast<double>(event.size());
}
BENCHMARK_CAPTURE(BM_SseOneEventPerFeed, openai_chunk, kChunkJson);
BENCHMARK_CAPTURE(BM_SseOneEventPerFeed, short_chunk, kShortChunkJson);

// Many events per read (a fast upstream, a slow reader).
void BM_SseManyEventsPerFeed(benchmark::State& state) {
  constexpr size_t kEvents = 64;
  std::string chunk;
  for (size_t i = 0; i < kEvents; ++i) chunk += Event(kChunkJson);
  SseParser parser;
  size_t data_bytes = 0;
  for (auto _ : state) {
    Status status = parser.Feed(chunk, [&](const SseEvent& e) { data_bytes += e.data.size(); });
    benchmark::DoNotOptimize(status);
  }
  benchmark::DoNotOptimize(data_bytes);
  CountEvents(state, kEvents, chunk.size());
}
BENCHMARK(BM_SseManyEventsPerFeed);

// Every event split in the middle across two reads: the copying path.
void BM_SseEventSplitAcrossFeeds(benchmark::State& state) {
  const std::string event = Event(kChunkJson);
  const std::string_view head = std::string_view(event).substr(0, event.size() / 2);
  const std::string_view rest = std::string_view(event).substr(event.size() / 2);
  SseParser parser;
  size_t data_bytes = 0;
  auto on_event = [&](const SseEvent& e) { data_bytes += e.data.size(); };
  for (auto _ : state) {
    Status first = parser.Feed(head, on_event);
    Status second = parser.Feed(rest, on_event);
    benchmark::DoNotOptimize(first);
    benchmark::DoNotOptimize(second);
  }
  benchmark::DoNotOptimize(data_bytes);
  CountEvents(state, 1, event.size());
}
BENCHMARK(BM_SseEventSplitAcrossFeeds);

// A stream of kStreamChunks content chunks into a fresh accumulator per iteration, so content
// growth and the accumulator's construction are amortized as in a real stream.
constexpr size_t kStreamChunks = 256;

void BM_AccumulatorConsume(benchmark::State& state, const std::string& json) {
  for (auto _ : state) {
    ChatAccumulator acc;
    for (size_t i = 0; i < kStreamChunks; ++i) benchmark::DoNotOptimize(acc.Consume(json));
    benchmark::DoNotOptimize(acc.choices().data());
  }
  CountEvents(state, kStreamChunks, kStreamChunks * json.size());
}
BENCHMARK_CAPTURE(BM_AccumulatorConsume, openai_chunk, kChunkJson);
BENCHMARK_CAPTURE(BM_AccumulatorConsume, short_chunk, kShortChunkJson);

// A stream as a provider sends it: a role chunk, then content chunks whose text changes (words
// of 1 to 9 bytes, some non-ASCII, one in 16 with an escape), the finish chunk and the usage
// chunk. Repeating one identical chunk would flatter any cache; this is the honest case.
std::vector<std::string> RealisticStream() {
  const std::string head =
      R"({"id":"chatcmpl-AbCdEfGhIjKlMnOpQrStUvWxYz012","object":"chat.completion.chunk",)"
      R"("created":1718000000,"model":"gpt-4o-mini-2024-07-18","system_fingerprint":"fp_0ba0d124f1",)"
      R"("choices":[{"index":0,"delta":{)";
  const std::string tail = R"(},"logprobs":null,"finish_reason":null}]})";
  const char* words[] = {
      " the", " world", ",",       " caf\xc3\xa9", " is",  " open",         " today", ".",
      " We",  " serve", " coffee", " and",         " tea", " \xe2\x80\x94", " 42",    "!"};
  std::vector<std::string> chunks;
  chunks.push_back(head + R"("role":"assistant","content":"")" + tail);
  for (size_t i = 0; chunks.size() < kStreamChunks - 2; ++i) {
    const std::string word = i % 16 == 15 ? std::string(R"(\n)") : std::string(words[i % 16]);
    chunks.push_back(head + R"("content":")" + word + R"(")" + tail);
  }
  chunks.push_back(head.substr(0, head.size() - std::string_view(R"("delta":{)").size()) +
                   R"("delta":{},"logprobs":null,"finish_reason":"stop"}]})");
  chunks.push_back(
      R"({"id":"chatcmpl-AbCdEfGhIjKlMnOpQrStUvWxYz012","object":"chat.completion.chunk",)"
      R"("created":1718000000,"model":"gpt-4o-mini-2024-07-18","choices":[],)"
      R"("usage":{"prompt_tokens":12,"completion_tokens":254,"total_tokens":266}})");
  return chunks;
}

void BM_AccumulatorStream(benchmark::State& state) {
  const std::vector<std::string> chunks = RealisticStream();
  size_t bytes = 0;
  for (const std::string& chunk : chunks) bytes += chunk.size();
  size_t fast = 0;
  for (auto _ : state) {
    ChatAccumulator acc;
    for (const std::string& chunk : chunks) benchmark::DoNotOptimize(acc.Consume(chunk));
    benchmark::DoNotOptimize(acc.choices().data());
    fast = acc.template_chunks();
  }
  CountEvents(state, chunks.size(), bytes);
  state.counters["template_chunks"] = static_cast<double>(fast);
}
BENCHMARK(BM_AccumulatorStream);

// Both stages together, one event per read: the per-event cost of the tee.
void BM_SseThenAccumulate(benchmark::State& state) {
  const std::string event = Event(kChunkJson);
  for (auto _ : state) {
    SseParser parser;
    ChatAccumulator acc;
    for (size_t i = 0; i < kStreamChunks; ++i) {
      Status status = parser.Feed(event, [&](const SseEvent& e) { acc.Consume(e.data); });
      benchmark::DoNotOptimize(status);
    }
    benchmark::DoNotOptimize(acc.choices().data());
  }
  CountEvents(state, kStreamChunks, kStreamChunks * event.size());
}
BENCHMARK(BM_SseThenAccumulate);

// The usage of a whole answer, as a call without a stream reads it: the mock provider's body for
// 20 tokens (bench/governance-callgrind.sh's plain row), and OpenAI's shape with usage details
// and members after the usage, for 20 and 1,000 tokens of content. ExtractUsage reads the tail
// (ScanTailUsage); the "Simdjson" rows read the same body as ExtractUsage does when the tail does
// not decide.
std::string MockAnswer() {
  std::string content;
  for (int i = 0; i < 20; ++i) content += "tok" + std::to_string(i) + " ";
  return R"({"id":"chatcmpl-mock-0-1","object":"chat.completion","created":1796631674,)"
         R"("model":"bench-model","system_fingerprint":"fp_mock","choices":[{"index":0,)"
         R"("message":{"role":"assistant","content":")" +
         content +
         R"("},"logprobs":null,"finish_reason":"stop"}],)"
         R"("usage":{"prompt_tokens":14,"completion_tokens":20,"total_tokens":34}})";
}
std::string OpenAiAnswer(int tokens) {
  std::string content;
  for (int i = 0; i < tokens; ++i) content += "tok" + std::to_string(i) + " ";
  return R"({"id":"chatcmpl-B9MHDbslfkBeAs8l4bebGdFOJ6PeG","object":"chat.completion",)"
         R"("created":1741570283,"model":"gpt-4o-2024-08-06","choices":[{"index":0,)"
         R"("message":{"role":"assistant","content":")" +
         content +
         R"(\n","refusal":null,"annotations":[]},"logprobs":null,"finish_reason":"stop"}],)"
         R"("usage":{"prompt_tokens":1117,"completion_tokens":46,"total_tokens":1163,)"
         R"("prompt_tokens_details":{"cached_tokens":0,"audio_tokens":0},)"
         R"("completion_tokens_details":{"reasoning_tokens":0,"audio_tokens":0,)"
         R"("accepted_prediction_tokens":0,"rejected_prediction_tokens":0}},)"
         R"("service_tier":"default","system_fingerprint":"fp_fc9f1d7035"})";
}

void ReadUsage(benchmark::State& state, const std::string& body, bool simdjson) {
  PaddedJsonParser parser;
  for (auto _ : state) {
    if (simdjson) {
      simdjson::ondemand::document doc;
      if (parser.Iterate(body).get(doc) == simdjson::SUCCESS) {
        benchmark::DoNotOptimize(ParseBodyUsage(doc));
      }
    } else {
      benchmark::DoNotOptimize(ExtractUsage(body));
    }
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * body.size()));
}
void BM_ExtractUsage(benchmark::State& state) { ReadUsage(state, MockAnswer(), false); }
void BM_ExtractUsageSimdjson(benchmark::State& state) { ReadUsage(state, MockAnswer(), true); }
void BM_ExtractUsageOpenAi(benchmark::State& state) {
  ReadUsage(state, OpenAiAnswer(static_cast<int>(state.range(0))), false);
}
void BM_ExtractUsageOpenAiSimdjson(benchmark::State& state) {
  ReadUsage(state, OpenAiAnswer(static_cast<int>(state.range(0))), true);
}
BENCHMARK(BM_ExtractUsage);
BENCHMARK(BM_ExtractUsageSimdjson);
BENCHMARK(BM_ExtractUsageOpenAi)->Arg(20)->Arg(1000);
BENCHMARK(BM_ExtractUsageOpenAiSimdjson)->Arg(20)->Arg(1000);

}  // namespace
}  // namespace turnpike::stream
