// Cost of keying an LLM request for the response cache (src/cache/request_digest.h): the
// digest of a ~6 KB chat thread (a system prompt, 20 user/assistant/tool turns, two of them
// tool calls, a tools array, sampling parameters), its members in the order an SDK writes them,
// shuffled at every depth, and already in the canonical order; next to the search cache's path
// on the same body (Boost.JSON parse, CanonicalJsonValue, SHA-256 by Digester), and XXH3 alone
// (Debian's plain build, which the digester does not use: it takes the run-time dispatched one)
// and SHA-256 alone over the canonical text; and the digest of a 107-byte request, without and
// with the "seed" member that makes each of the miss benchmark's requests a new one.
//
//   ninja -C build llm_cache_bench && build/bench/llm_cache_bench
#include <benchmark/benchmark.h>
#include <xxhash.h>

#include <algorithm>
#include <array>
#include <boost/json.hpp>
#include <cstdlib>
#include <random>
#include <string>

#include "cache/canonical_json.h"
#include "cache/key.h"
#include "cache/request_digest.h"

namespace turnpike::cache {
namespace {

namespace json = boost::json;

constexpr uint64_t kSeed = 0x7e57;
constexpr std::array<std::string_view, 5> kExcluded = {"stream", "stream_options", "user",
                                                       "metadata", "store"};

const std::string kProse =
    "The deployment failed at the migration step: the \\\"orders\\\" table has 40 million rows "
    "and the ALTER took the lock for too long. Options: batch the backfill, or add the column "
    "as nullable first and fill it in the background.\\n";

std::string Message(std::string_view role, std::string_view content) {
  return R"({"role":")" + std::string(role) + R"(","content":")" + std::string(content) + "\"}";
}

std::string ToolCall(int id) {
  const std::string call = "call_" + std::to_string(id);
  return R"({"role":"assistant","content":null,"tool_calls":[{"id":")" + call +
         R"(","type":"function","function":{"name":"run_query","arguments":)"
         R"("{\"sql\":\"SELECT count(*) FROM orders WHERE status = 'pending'\",\"limit\":100}"}}]},)" +
         R"({"role":"tool","tool_call_id":")" + call + R"(","content":"{\"count\":18231}"})";
}

// System prompt, then 20 turns: tool call and result pairs at turns 5 and 13, user and
// assistant prose otherwise: 21 messages.
std::string ChatThread() {
  std::string body = R"({"model":"gpt-4o","messages":[)";
  body += Message("system",
                  "You are a senior database engineer. Answer precisely, cite the table names, and "
                  "prefer reversible steps.\\nNever run DDL without asking.");
  for (int turn = 0; turn < 20; ++turn) {
    body += ',';
    if (turn == 5 || turn == 13) {
      body += ToolCall(turn);
      ++turn;
    } else {
      body += Message(turn % 2 == 0 ? "user" : "assistant", kProse);
    }
  }
  body += R"(],"tools":[{"type":"function","function":{"name":"run_query","description":)"
          R"("Run a read-only SQL query","parameters":{"type":"object","properties":{"sql":)"
          R"({"type":"string","description":"One SELECT statement"},"limit":{"type":"integer",)"
          R"("minimum":1,"maximum":1000}},"required":["sql"]}}},{"type":"function","function":)"
          R"({"name":"describe_table","description":"Columns and indexes of a table",)"
          R"("parameters":{"type":"object","properties":{"table":{"type":"string"}},)"
          R"("required":["table"]}}}],"tool_choice":"auto","temperature":0.7,"top_p":0.95,)"
          R"("max_tokens":1024,"stream":true,"stream_options":{"include_usage":true},)"
          R"("user":"user-8841"})";
  return body;
}

// The document with every object's members reordered by `order`, at every depth.
template <typename Order>
json::value Reordered(const json::value& value, Order& order) {
  if (value.is_array()) {
    json::array out;
    for (const json::value& element : value.get_array()) out.push_back(Reordered(element, order));
    return out;
  }
  if (!value.is_object()) return value;
  std::vector<const json::key_value_pair*> members;
  for (const auto& member : value.get_object()) members.push_back(&member);
  order(members);
  json::object out;
  for (const auto* member : members) out[member->key()] = Reordered(member->value(), order);
  return out;
}

std::string Shuffled(const std::string& body) {
  std::mt19937 random(42);
  auto shuffle = [&](auto& members) { std::shuffle(members.begin(), members.end(), random); };
  return json::serialize(Reordered(json::parse(body), shuffle));
}

// Members in the digest's canonical order (request_digest.h: shorter names first, then bytes).
std::string Sorted(const std::string& body) {
  auto sort = [](auto& members) {
    std::sort(members.begin(), members.end(), [](const auto* a, const auto* b) {
      const std::string_view x = a->key(), y = b->key();
      return x.size() != y.size() ? x.size() < y.size() : x < y;
    });
  };
  return json::serialize(Reordered(json::parse(body), sort));
}

const std::string kThread = ChatThread();
const std::string kShuffled = Shuffled(kThread);
const std::string kSorted = Sorted(kThread);

void Digest(benchmark::State& state, const std::string& body) {
  RequestDigester digester(kSeed);
  const Digest128 expected = *RequestDigester(kSeed).Of(kThread, kExcluded);
  if (!digester.Of(body, kExcluded).ok() || *digester.Of(body, kExcluded) != expected) {
    state.SkipWithError("the variants' digests differ");
    return;
  }
  for (auto _ : state) {
    Result<Digest128> digest = digester.Of(body, kExcluded);
    benchmark::DoNotOptimize(digest);
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * body.size()));
  state.counters["body_bytes"] = static_cast<double>(body.size());
}

void BM_RequestDigest(benchmark::State& state) { Digest(state, kThread); }
BENCHMARK(BM_RequestDigest);

void BM_RequestDigestShuffled(benchmark::State& state) { Digest(state, kShuffled); }
BENCHMARK(BM_RequestDigestShuffled);

void BM_RequestDigestSorted(benchmark::State& state) { Digest(state, kSorted); }
BENCHMARK(BM_RequestDigestSorted);

// A small request, the one bench/governance-callgrind.sh --llm-cache sends (107 bytes): the
// miss path's digest, where per-call costs outweigh per-byte ones; and the same as that script
// sends it, with the "seed" member `turnpike bench --distinct` puts first.
void DigestSmall(benchmark::State& state, const std::string& body) {
  RequestDigester digester(kSeed);
  for (auto _ : state) {
    Result<Digest128> digest = digester.Of(body, kExcluded);
    benchmark::DoNotOptimize(digest);
  }
  state.counters["body_bytes"] = static_cast<double>(body.size());
}

const std::string kSmall =
    R"({"model":"bench-model","messages":[{"role":"user","content":"Say hello!"}],)"
    R"("max_tokens":20,"stream":false})";

void BM_RequestDigestSmall(benchmark::State& state) { DigestSmall(state, kSmall); }
BENCHMARK(BM_RequestDigestSmall);

void BM_RequestDigestSmallDistinct(benchmark::State& state) {
  DigestSmall(state, R"({"seed":1234,)" + kSmall.substr(1));
}
BENCHMARK(BM_RequestDigestSmallDistinct);

void BM_Xxh3OfCanonical(benchmark::State& state) {
  RequestDigester digester(kSeed);
  (void)digester.Of(kThread, kExcluded);
  const std::string canonical(digester.canonical());
  for (auto _ : state) {
    benchmark::DoNotOptimize(XXH3_128bits_withSeed(canonical.data(), canonical.size(), kSeed));
  }
  state.counters["canonical_bytes"] = static_cast<double>(canonical.size());
}
BENCHMARK(BM_Xxh3OfCanonical);

void BM_Sha256OfCanonical(benchmark::State& state) {
  RequestDigester digester(kSeed);
  (void)digester.Of(kThread, kExcluded);
  const std::string canonical(digester.canonical());
  Digester sha256 = std::move(*Digester::Create());
  for (auto _ : state) benchmark::DoNotOptimize(sha256.Of(canonical));
}
BENCHMARK(BM_Sha256OfCanonical);

// The search cache's path from the bytes: parse, canonical text, SHA-256.
void BM_CanonicalJsonSha256(benchmark::State& state) {
  Digester digester = std::move(*Digester::Create());
  const CanonicalOptions options{nullptr, kExcluded};
  for (auto _ : state) {
    const json::value value = json::parse(kThread);
    benchmark::DoNotOptimize(digester.Of(CanonicalJsonValue(value, options)));
  }
}
BENCHMARK(BM_CanonicalJsonSha256);

// The same from a document already parsed (the search door parses the request anyway).
void BM_CanonicalJsonSha256Parsed(benchmark::State& state) {
  Digester digester = std::move(*Digester::Create());
  const CanonicalOptions options{nullptr, kExcluded};
  const json::value value = json::parse(kThread);
  for (auto _ : state) benchmark::DoNotOptimize(digester.Of(CanonicalJsonValue(value, options)));
}
BENCHMARK(BM_CanonicalJsonSha256Parsed);

}  // namespace
}  // namespace turnpike::cache
