// The output guard per text delta (issue 24 bar: <= 100 ns per 64-byte delta when nothing
// matches, the forward to a trivial downstream sink included), next to that forward alone; and
// what a delta costs around URLs, a whole answer, and a turn's context hosts.
//
//   ninja -C build guard_bench && build/bench/guard_bench
//
// Deltas are JSON-escaped, as StreamEvent::text is. "Clean" deltas are 64-byte pieces of prose
// with sentence punctuation and no URL, none ending in a held tail; "prose" is a longer
// Markdown answer (newlines as \n, a few held tails such as a trailing "h") cut every 64 bytes.
#include <benchmark/benchmark.h>

#include <string>
#include <vector>

#include "common/json_escape.h"
#include "guard/guard_sink.h"
#include "guard/output_guard.h"

namespace turnpike::guard {
namespace {

constexpr size_t kDelta = 64;

const std::string kProse =
    "The gateway keeps one connection per worker, and each request is read, governed and "
    "answered on that worker. Budgets are reserved before the call (an estimate of its cost) "
    "and settled once its usage is known: the difference goes back to the key.\n\n"
    "## Streaming\n\nText is released as it arrives; a stage that must look ahead holds back "
    "only what it needs. Tool calls, reasoning and usage pass through untouched, in order. "
    "When the client leaves, the upstream read stops at once: nothing is buffered for it.\n\n"
    "- Keys are hashed; the hash is the lookup.\n- Limits are counted per minute, per key.\n"
    "- Spend is written in batches, never on the request path.\n";

const std::string kLinks =
    "See the [guide](https://docs.example.com/guide) or www.example.com/start for details, "
    "not https://evil.example.net/x?q=secret. Images: ![chart](https://cdn.evil.io/c.png). "
    "Context: https://docs.rust-lang.org/book/ch01. Plain text follows, then https://a.co.\n";

std::string Escaped(const std::string& raw) {
  std::string out;
  AppendJsonEscaped(out, raw);
  return out;
}

std::vector<std::string> Cut(const std::string& text, size_t size) {
  std::vector<std::string> pieces;
  for (size_t at = 0; at < text.size(); at += size) pieces.push_back(text.substr(at, size));
  return pieces;
}

// 64-byte deltas of the prose in which nothing matches and nothing is held.
std::vector<std::string> CleanDeltas() {
  std::string flat = kProse;
  for (char& c : flat) c = c == '\n' ? ' ' : c;
  std::vector<std::string> deltas;
  for (size_t at = 0; at + kDelta <= flat.size(); at += kDelta) {
    std::string delta = flat.substr(at, kDelta);
    const char last = delta.back() | 0x20;
    if (last == 'h' || last == 't' || last == 'p' || last == 's' || last == 'w') {
      delta.back() = ' ';
    }
    deltas.push_back(std::move(delta));
  }
  return deltas;
}

struct Agent {
  Agent() : config(Allowlist()) {
    context.AddHostsIn("Tool output: https://docs.rust-lang.org/book", TextForm::kRaw);
  }
  static HostSet Allowlist() {
    HostSet hosts;
    hosts.Add("example.com");
    return hosts;
  }
  GuardConfig config;
  HostSet context;
  GuardReport report;
};

// The cheapest downstream: counts what it is given.
class CountingSink final : public model_call::AnswerSink {
 public:
  void OnEvent(const providers::StreamEvent& event) override { bytes += event.text.size(); }
  size_t bytes = 0;
};

providers::StreamEvent TextEvent(std::string_view text) {
  providers::StreamEvent event;
  event.kind = providers::EventKind::kTextDelta;
  event.text = text;
  return event;
}

void Count(benchmark::State& state, int64_t deltas_per_iteration, int64_t bytes_per_iteration) {
  state.SetItemsProcessed(state.iterations() * deltas_per_iteration);
  state.SetBytesProcessed(state.iterations() * bytes_per_iteration);
}

// The bar: a clean 64-byte delta through GuardSink to a trivial sink.
void BM_GuardSinkCleanDelta(benchmark::State& state) {
  const std::vector<std::string> deltas = CleanDeltas();
  std::vector<providers::StreamEvent> events;
  for (const std::string& delta : deltas) events.push_back(TextEvent(delta));
  Agent agent;
  GuardSink guard(agent.config, agent.context, agent.report);
  CountingSink sink;
  guard.AddDownstream(sink);
  for (const providers::StreamEvent& event : events) {
    guard.OnEvent(event);
    if (sink.bytes != kDelta) state.SkipWithError("a clean delta was not released whole");
    sink.bytes = 0;
  }
  size_t i = 0;
  for (auto _ : state) {
    guard.OnEvent(events[i]);
    if (++i == events.size()) i = 0;
  }
  benchmark::DoNotOptimize(sink.bytes);
  Count(state, 1, kDelta);
}
BENCHMARK(BM_GuardSinkCleanDelta);

// The same deltas given to the trivial sink directly: the forward alone.
void BM_ForwardOnlyCleanDelta(benchmark::State& state) {
  const std::vector<std::string> deltas = CleanDeltas();
  std::vector<providers::StreamEvent> events;
  for (const std::string& delta : deltas) events.push_back(TextEvent(delta));
  CountingSink counting;
  model_call::AnswerSink* sink = &counting;
  benchmark::DoNotOptimize(sink);
  size_t i = 0;
  for (auto _ : state) {
    sink->OnEvent(events[i]);
    if (++i == events.size()) i = 0;
  }
  benchmark::DoNotOptimize(counting.bytes);
  Count(state, 1, kDelta);
}
BENCHMARK(BM_ForwardOnlyCleanDelta);

// OutputGuard::Push alone on the clean deltas.
void BM_PushCleanDelta(benchmark::State& state) {
  const std::vector<std::string> deltas = CleanDeltas();
  Agent agent;
  OutputGuard guard(agent.config, agent.context, agent.report);
  size_t i = 0;
  for (auto _ : state) {
    benchmark::DoNotOptimize(guard.Push(deltas[i]));
    if (++i == deltas.size()) i = 0;
  }
  Count(state, 1, kDelta);
}
BENCHMARK(BM_PushCleanDelta);

// A whole answer's text cut into deltas of `size` bytes, through GuardSink, Finish at the end.
void RunStream(benchmark::State& state, const std::string& raw, size_t size) {
  const std::vector<std::string> deltas = Cut(Escaped(raw), size);
  std::vector<providers::StreamEvent> events;
  for (const std::string& delta : deltas) events.push_back(TextEvent(delta));
  const providers::StreamEvent finish = [] {
    providers::StreamEvent event;
    event.kind = providers::EventKind::kFinish;
    return event;
  }();
  Agent agent;
  GuardSink guard(agent.config, agent.context, agent.report);
  CountingSink sink;
  guard.AddDownstream(sink);
  for (auto _ : state) {
    for (const providers::StreamEvent& event : events) guard.OnEvent(event);
    guard.OnEvent(finish);
  }
  benchmark::DoNotOptimize(sink.bytes);
  Count(state, static_cast<int64_t>(events.size()), static_cast<int64_t>(Escaped(raw).size()));
}

// Prose cut every 64 bytes: newlines, held tails ("wit|h"), Markdown, no URL.
void BM_GuardSinkProse64(benchmark::State& state) { RunStream(state, kProse, kDelta); }
BENCHMARK(BM_GuardSinkProse64);

// Text with URLs (allowed, replaced, in Markdown) in the ~16-byte deltas of a token stream.
void BM_GuardSinkLinks16(benchmark::State& state) { RunStream(state, kLinks, 16); }
BENCHMARK(BM_GuardSinkLinks16);

// A whole answer's unescaped text (~4 KiB, prose and links).
void BM_WholeText4K(benchmark::State& state) {
  std::string text;
  while (text.size() < 4096) text += kProse + kLinks;
  Agent agent;
  OutputGuard guard(agent.config, agent.context, agent.report, TextForm::kRaw);
  for (auto _ : state) benchmark::DoNotOptimize(guard.Whole(text));
  Count(state, 1, static_cast<int64_t>(text.size()));
}
BENCHMARK(BM_WholeText4K);

// A turn's context hosts from ~16 KiB of context (instructions, memory, tool outputs).
void BM_ContextHosts16K(benchmark::State& state) {
  std::string text;
  while (text.size() < 16384) text += kProse + kLinks;
  for (auto _ : state) {
    HostSet hosts;
    hosts.AddHostsIn(text, TextForm::kRaw);
    benchmark::DoNotOptimize(hosts.size());
  }
  Count(state, 1, static_cast<int64_t>(text.size()));
}
BENCHMARK(BM_ContextHosts16K);

}  // namespace
}  // namespace turnpike::guard
