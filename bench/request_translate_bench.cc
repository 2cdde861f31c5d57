// What a translated request costs once per request, outside the per-chunk stream path
// (translate_bench): the client's document read into the pivot (ParseRequest), the upstream
// body built from the pivot (BuildRequest), and a whole answer read (ParseResponse) and
// rendered for the client (RenderResponse). The request is a typical agent turn: a system
// prompt, six messages with a tool call and its result, two tools, streaming.
//
//   ninja -C build bench/request_translate_bench && build/bench/request_translate_bench
#include <benchmark/benchmark.h>

#include <boost/json.hpp>
#include <string>

#include "providers/anthropic/anthropic_provider.h"
#include "providers/cohere/cohere_provider.h"
#include "providers/gemini/gemini_provider.h"
#include "providers/ollama/ollama_provider.h"
#include "providers/openai/openai_provider.h"
#include "providers/openai_responses/responses_provider.h"

namespace turnpike::providers {
namespace {

namespace json = boost::json;

// The pivot (an OpenAI chat request).
const std::string kChat = R"({"model":"gpt-4o-mini","stream":true,"max_completion_tokens":512,
"temperature":0.2,"messages":[
{"role":"system","content":"You are a helpful assistant for a travel company. Answer briefly."},
{"role":"user","content":"What is the weather in Paris today, and should I take an umbrella?"},
{"role":"assistant","content":null,"tool_calls":[{"id":"call_Xy12AbC","type":"function",
 "function":{"name":"get_weather","arguments":"{\"city\":\"Paris\",\"unit\":\"celsius\"}"}}]},
{"role":"tool","tool_call_id":"call_Xy12AbC","content":"{\"temp\":14,\"rain_chance\":0.7}"},
{"role":"assistant","content":"It is 14 degrees with a 70% chance of rain: take an umbrella."},
{"role":"user","content":"Thanks. And in Lyon tomorrow?"}],
"tools":[{"type":"function","function":{"name":"get_weather","description":"Current weather",
 "parameters":{"type":"object","properties":{"city":{"type":"string"},
 "unit":{"type":"string","enum":["celsius","fahrenheit"]}},"required":["city"]}}},
{"type":"function","function":{"name":"get_forecast","description":"Forecast for a day",
 "parameters":{"type":"object","properties":{"city":{"type":"string"},
 "day":{"type":"string"}},"required":["city","day"]}}}]})";

// The same turn as an Anthropic Messages request.
const std::string kMessages = R"({"model":"claude-sonnet-4-5","stream":true,"max_tokens":512,
"temperature":0.2,"system":"You are a helpful assistant for a travel company. Answer briefly.",
"messages":[
{"role":"user","content":"What is the weather in Paris today, and should I take an umbrella?"},
{"role":"assistant","content":[{"type":"tool_use","id":"toolu_01Xy12AbC","name":"get_weather",
 "input":{"city":"Paris","unit":"celsius"}}]},
{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_01Xy12AbC",
 "content":"{\"temp\":14,\"rain_chance\":0.7}"}]},
{"role":"assistant","content":"It is 14 degrees with a 70% chance of rain: take an umbrella."},
{"role":"user","content":"Thanks. And in Lyon tomorrow?"}],
"tools":[{"name":"get_weather","description":"Current weather","input_schema":{"type":"object",
 "properties":{"city":{"type":"string"},"unit":{"type":"string","enum":["celsius","fahrenheit"]}},
 "required":["city"]}},
{"name":"get_forecast","description":"Forecast for a day","input_schema":{"type":"object",
 "properties":{"city":{"type":"string"},"day":{"type":"string"}},"required":["city","day"]}}]})";

// A whole Anthropic answer: text and a tool call.
const std::string kAnthropicAnswer = R"({"id":"msg_01XFDUDYJgAACzvnptvVoYEL","type":"message",
"role":"assistant","model":"claude-sonnet-4-5-20250929","content":[
{"type":"text","text":"Let me look up tomorrow's forecast for Lyon before I answer you."},
{"type":"tool_use","id":"toolu_01T1x1fJ34qAmk2tNTrN7Up6","name":"get_forecast",
 "input":{"city":"Lyon","day":"tomorrow"}}],"stop_reason":"tool_use","stop_sequence":null,
"usage":{"input_tokens":412,"output_tokens":58}})";

void ParseRequest(benchmark::State& state, const Provider& client, const std::string& body) {
  for (auto _ : state) {
    Result<json::object> pivot = client.ParseRequest(body);
    if (!pivot.ok()) state.SkipWithError("ParseRequest failed");
    benchmark::DoNotOptimize(pivot);
  }
}

void BuildRequest(benchmark::State& state, const Provider& upstream) {
  const json::object pivot = json::parse(kChat).as_object();
  UpstreamRequestOptions options;
  options.upstream_model = "upstream-model";
  options.default_max_tokens = 1024;
  for (auto _ : state) {
    Result<std::string> body = upstream.BuildRequest(pivot, options);
    if (!body.ok()) state.SkipWithError(body.error().message.c_str());
    benchmark::DoNotOptimize(body);
  }
}

void BM_ParseRequest_Anthropic(benchmark::State& state) {
  ParseRequest(state, anthropic::AnthropicProvider(), kMessages);
}
void BM_ParseRequest_OpenAi(benchmark::State& state) {
  ParseRequest(state, openai::OpenAiProvider(), kChat);
}
void BM_BuildRequest_OpenAi(benchmark::State& state) {
  BuildRequest(state, openai::OpenAiProvider());
}
void BM_BuildRequest_Anthropic(benchmark::State& state) {
  BuildRequest(state, anthropic::AnthropicProvider());
}
void BM_BuildRequest_Gemini(benchmark::State& state) {
  BuildRequest(state, gemini::GeminiProvider());
}
void BM_BuildRequest_Cohere(benchmark::State& state) {
  BuildRequest(state, cohere::CohereProvider());
}
void BM_BuildRequest_Ollama(benchmark::State& state) {
  BuildRequest(state, ollama::OllamaProvider());
}
void BM_BuildRequest_Responses(benchmark::State& state) {
  BuildRequest(state, openai_responses::ResponsesProvider());
}

void BM_ParseResponse_Anthropic(benchmark::State& state) {
  const anthropic::AnthropicProvider upstream;
  for (auto _ : state) {
    Result<Response> response = upstream.ParseResponse(kAnthropicAnswer);
    if (!response.ok()) state.SkipWithError("ParseResponse failed");
    benchmark::DoNotOptimize(response);
  }
}

void BM_RenderResponse_OpenAi(benchmark::State& state) {
  const Response response = anthropic::AnthropicProvider().ParseResponse(kAnthropicAnswer).value();
  const openai::OpenAiProvider client;
  for (auto _ : state) {
    std::string body = client.RenderResponse(response, 1'718'000'000);
    benchmark::DoNotOptimize(body);
  }
}

BENCHMARK(BM_ParseRequest_Anthropic);
BENCHMARK(BM_ParseRequest_OpenAi);
BENCHMARK(BM_BuildRequest_OpenAi);
BENCHMARK(BM_BuildRequest_Anthropic);
BENCHMARK(BM_BuildRequest_Gemini);
BENCHMARK(BM_BuildRequest_Cohere);
BENCHMARK(BM_BuildRequest_Ollama);
BENCHMARK(BM_BuildRequest_Responses);
BENCHMARK(BM_ParseResponse_Anthropic);
BENCHMARK(BM_RenderResponse_OpenAi);

}  // namespace
}  // namespace turnpike::providers
