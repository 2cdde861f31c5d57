// Request inspection and upstream body splicing on 2 KB and 40 KB chat bodies, next to the two
// ways of validating JSON that chat_request.h weighs (simdjson DOM vs. a full On-Demand walk).
//
//   ninja -C build bench/chat_request_bench && build/bench/chat_request_bench
#include <benchmark/benchmark.h>
#include <simdjson.h>

#include <string>

#include "providers/openai/chat_request.h"

namespace turnpike::providers::openai {
namespace {

// A chat body of about `target_bytes`: a system prompt, a tool with a JSON schema, then
// alternating user/assistant turns of prose (with escapes and non-ASCII text), streaming.
std::string ChatBody(size_t target_bytes) {
  const std::string prose =
      "Lorem ipsum dolor sit amet, consectetur adipiscing elit \\\"quoted\\\" caf\u00e9 "
      "\\u00e9t\u00e9, sed do eiusmod tempor incididunt ut labore et dolore magna aliqua.\\n";
  std::string body =
      R"({"model":"gpt-4o-mini","temperature":0.7,"stream":true,"max_tokens":512,)"
      R"("tools":[{"type":"function","function":{"name":"get_weather","description":)"
      R"("Current weather","parameters":{"type":"object","properties":{"city":{"type":)"
      R"("string"},"unit":{"type":"string","enum":["c","f"]}},"required":["city"]}}}],)"
      R"("messages":[{"role":"system","content":"You are a helpful assistant."})";
  bool user = true;
  while (body.size() + 2 < target_bytes) {
    body += R"(,{"role":")";
    body += user ? "user" : "assistant";
    body += R"(","content":")";
    body += prose;
    body += "\"}";
    user = !user;
  }
  body += "]}";
  return body;
}

const std::string kBody2K = ChatBody(2 << 10);
const std::string kBody40K = ChatBody(40 << 10);

// bench/governance-callgrind.sh's measured request.
const std::string kBodySmall =
    R"({"model":"bench-model","messages":[{"role":"user","content":"Say hello!"}],"max_tokens":20,"stream":false})";

const std::string& Body(const benchmark::State& state) {
  return state.range(0) == 0 ? kBodySmall : state.range(0) == 2 ? kBody2K : kBody40K;
}

void SetCounters(benchmark::State& state) {
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * Body(state).size()));
  state.counters["body_bytes"] = static_cast<double>(Body(state).size());
}

void BM_InspectChatRequest(benchmark::State& state) {
  const std::string& body = Body(state);
  for (auto _ : state) {
    Result<ChatRequestInfo> info = InspectChatRequest(body);
    if (!info.ok()) state.SkipWithError(info.error().message.c_str());
    benchmark::DoNotOptimize(info);
  }
  SetCounters(state);
}
BENCHMARK(BM_InspectChatRequest)->Arg(2)->Arg(40)->ArgName("kb");

// InspectChatRequest's two readers apart, on the governance benchmark's 107-byte request (the
// scanner's) and on the bodies above (simdjson's: they have escapes and are over 512 bytes).
void BM_ScanChatRequest(benchmark::State& state) {
  const std::string& body = Body(state);
  for (auto _ : state) {
    ChatRequestInfo info;
    if (!ScanChatRequest(body, info)) state.SkipWithError("not decided by the scanner");
    benchmark::DoNotOptimize(info);
  }
  SetCounters(state);
}
BENCHMARK(BM_ScanChatRequest)->Arg(0)->ArgName("kb");

void BM_ParseChatRequest(benchmark::State& state) {
  const std::string& body = Body(state);
  for (auto _ : state) {
    Result<ChatRequestInfo> info = ParseChatRequest(body);
    if (!info.ok()) state.SkipWithError(info.error().message.c_str());
    benchmark::DoNotOptimize(info);
  }
  SetCounters(state);
}
BENCHMARK(BM_ParseChatRequest)->Arg(0)->Arg(2)->Arg(40)->ArgName("kb");

void BM_BuildUpstreamChatBody(benchmark::State& state) {
  const std::string& body = Body(state);
  Result<ChatRequestInfo> info = InspectChatRequest(body);
  for (auto _ : state) {
    std::string out = BuildUpstreamChatBody(body, info.value(), "gpt-4o-mini-2024-07-18", true);
    benchmark::DoNotOptimize(out.data());
  }
  SetCounters(state);
}
BENCHMARK(BM_BuildUpstreamChatBody)->Arg(2)->Arg(40)->ArgName("kb");

void BM_InspectAndBuild(benchmark::State& state) {
  const std::string& body = Body(state);
  for (auto _ : state) {
    Result<ChatRequestInfo> info = InspectChatRequest(body);
    std::string out = BuildUpstreamChatBody(body, info.value(), "gpt-4o-mini-2024-07-18", true);
    benchmark::DoNotOptimize(out.data());
  }
  SetCounters(state);
}
BENCHMARK(BM_InspectAndBuild)->Arg(2)->Arg(40)->ArgName("kb");

// Baseline: simdjson DOM validation alone (what InspectChatRequest builds on).
void BM_Baseline_DomParse(benchmark::State& state) {
  const std::string& body = Body(state);
  simdjson::dom::parser parser;
  for (auto _ : state) {
    simdjson::dom::element root;
    benchmark::DoNotOptimize(parser.parse(body.data(), body.size(), true).get(root));
  }
  SetCounters(state);
}
BENCHMARK(BM_Baseline_DomParse)->Arg(2)->Arg(40)->ArgName("kb");

// Baseline: the alternative, an On-Demand walk visiting every value so that all of it is
// validated.
simdjson::error_code VisitAll(simdjson::ondemand::value value) {
  namespace od = simdjson::ondemand;
  od::json_type type;
  if (auto e = value.type().get(type)) return e;
  switch (type) {
    case od::json_type::object: {
      od::object object;
      if (auto e = value.get_object().get(object)) return e;
      for (auto field : object) {
        std::string_view key;
        if (auto e = field.unescaped_key().get(key)) return e;
        od::value member;
        if (auto e = field.value().get(member)) return e;
        if (auto e = VisitAll(member)) return e;
      }
      return simdjson::SUCCESS;
    }
    case od::json_type::array: {
      od::array array;
      if (auto e = value.get_array().get(array)) return e;
      for (auto element : array) {
        od::value item;
        if (auto e = element.get(item)) return e;
        if (auto e = VisitAll(item)) return e;
      }
      return simdjson::SUCCESS;
    }
    case od::json_type::string: {
      std::string_view text;
      return value.get_string().get(text);
    }
    case od::json_type::number: {
      double number;
      return value.get_double().get(number);
    }
    case od::json_type::boolean: {
      bool flag;
      return value.get_bool().get(flag);
    }
    case od::json_type::null: {
      bool is_null;
      return value.is_null().get(is_null);
    }
  }
  return simdjson::TAPE_ERROR;
}

void BM_Baseline_OnDemandFullWalk(benchmark::State& state) {
  const simdjson::padded_string body(Body(state));
  simdjson::ondemand::parser parser;
  for (auto _ : state) {
    simdjson::ondemand::document doc;
    simdjson::ondemand::value root;
    simdjson::error_code e = parser.iterate(body).get(doc);
    if (!e) e = doc.get_value().get(root);
    if (!e) e = VisitAll(root);
    if (e) state.SkipWithError(simdjson::error_message(e));
    benchmark::DoNotOptimize(e);
  }
  SetCounters(state);
}
BENCHMARK(BM_Baseline_OnDemandFullWalk)->Arg(2)->Arg(40)->ArgName("kb");

// Baseline: an On-Demand pass over the top-level members only (what a DOM-validated body still
// needs to learn where its values are).
void BM_Baseline_OnDemandTopLevel(benchmark::State& state) {
  const simdjson::padded_string body(Body(state));
  simdjson::ondemand::parser parser;
  for (auto _ : state) {
    simdjson::ondemand::document doc;
    simdjson::ondemand::object root;
    simdjson::error_code e = parser.iterate(body).get(doc);
    if (!e) e = doc.get_object().get(root);
    size_t model_offset = 0;
    for (auto field : root) {
      if (e) break;
      std::string_view key;
      simdjson::ondemand::value value;
      if ((e = field.unescaped_key().get(key)) || (e = field.value().get(value))) break;
      if (key != "model") continue;
      model_offset = static_cast<size_t>(value.raw_json_token().data() - body.data());
    }
    if (e) state.SkipWithError(simdjson::error_message(e));
    benchmark::DoNotOptimize(model_offset);
  }
  SetCounters(state);
}
BENCHMARK(BM_Baseline_OnDemandTopLevel)->Arg(2)->Arg(40)->ArgName("kb");

}  // namespace
}  // namespace turnpike::providers::openai
