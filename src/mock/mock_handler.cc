#include "mock/mock_handler.h"

#include <boost/beast/http/verb.hpp>
#include <ctime>

#include "mock/anthropic_render.h"
#include "mock/chat_reply.h"
#include "mock/cohere_render.h"
#include "mock/embeddings.h"
#include "mock/gemini_render.h"
#include "mock/ollama_render.h"
#include "mock/openai_render.h"
#include "mock/responses_render.h"

namespace turnpike::mock {
namespace {

namespace net = boost::asio;
using Verb = boost::beast::http::verb;

constexpr std::string_view kJson = "application/json";
constexpr std::string_view kChatPath = "/v1/chat/completions";
constexpr std::string_view kMessagesPath = "/v1/messages";
constexpr std::string_view kCohereChatPath = "/v2/chat";
constexpr std::string_view kCountTokensPath = "/v1/messages/count_tokens";
constexpr uint64_t kBytesPerCountedToken = 4;  // as the mock counts chat prompts
constexpr std::string_view kVersionHeader = "anthropic-version";
constexpr std::string_view kModelsPath = "/v1/models";
constexpr std::string_view kStatsPath = "/mock/stats";
constexpr std::string_view kStatsResetPath = "/mock/stats/reset";
constexpr std::string_view kHealthPath = "/healthz";
constexpr unsigned kOk = 200;
constexpr unsigned kUnavailable = 503;

struct Route {
  std::string_view path;
  Verb verb;
};

constexpr Route kRoutes[] = {{kChatPath, Verb::post},        {kMessagesPath, Verb::post},
                             {kResponsesPath, Verb::post},   {kOllamaChatPath, Verb::post},
                             {kCohereChatPath, Verb::post},  {kModelsPath, Verb::get},
                             {kStatsPath, Verb::get},        {kStatsResetPath, Verb::post},
                             {kHealthPath, Verb::get},       {kOpenAiEmbeddingsPath, Verb::post},
                             {kOllamaEmbedPath, Verb::post}, {kCohereEmbedPath, Verb::post},
                             {kCountTokensPath, Verb::post}};

// nullopt when the route exists and the method fits; else the error to answer.
std::optional<Error> CheckRoute(std::string_view path, Verb verb) {
  for (const Route& route : kRoutes) {
    if (route.path != path) continue;
    if (route.verb == verb) return std::nullopt;
    return Error{ErrorCode::kMethodNotAllowed, "Method not allowed on " + std::string(path) + ".",
                 ""};
  }
  return Error{ErrorCode::kNotFound, "Unknown request URL: " + std::string(path) + ".", ""};
}

}  // namespace

MockHandler::MockHandler(const MockOptions& options, StatsBoard& board, int worker_index,
                         net::io_context& context)
    : options_(options),
      board_(board),
      stats_(board.worker(worker_index)),
      worker_index_(worker_index),
      context_(context),
      parser_(options.reply, options.reply_text, options.tool_calls_until_result),
      random_(options.seed + static_cast<uint64_t>(worker_index)) {}

std::string MockHandler::RenderError(std::string_view target, const Error& error) const {
  return RenderErrorBody(error);
}

net::awaitable<void> MockHandler::RespondJson(http::Exchange& exchange, unsigned status,
                                              std::string body) {
  co_await exchange.Respond(status, kJson, std::move(body));
}

net::awaitable<void> MockHandler::RespondError(http::Exchange& exchange, Error error, Wire wire) {
  if (wire == Wire::kOllama) {
    std::string body = RenderOllamaError(error);
    co_await exchange.Respond(OllamaStatus(error.code), kJson, std::move(body));
    co_return;
  }
  if (wire == Wire::kGemini) {
    std::string body = RenderGeminiError(error);
    co_await exchange.Respond(GeminiStatus(error.code), kJson, std::move(body));
    co_return;
  }
  const bool anthropic = wire == Wire::kAnthropic;
  std::string body = anthropic ? RenderAnthropicError(error) : RenderErrorBody(error);
  unsigned status =
      anthropic ? AnthropicStatus(error.code) : static_cast<unsigned>(HttpStatus(error.code));
  if (wire == Wire::kCohere) {
    body = RenderCohereError(error);
    status = CohereStatus(error.code);
  }
  co_await exchange.Respond(status, kJson, std::move(body));
}

net::awaitable<void> MockHandler::Handle(http::Exchange& exchange) {
  const std::string_view path = exchange.path();
  if (IsGeminiPath(path)) {
    co_await HandleGemini(exchange);
    co_return;
  }
  std::optional<Error> route_error = CheckRoute(path, exchange.request().method());
  if (route_error) {
    Error error = std::move(*route_error);
    co_await RespondError(exchange, std::move(error));
    co_return;
  }
  if (path == kChatPath) {
    co_await HandleChat(exchange, Wire::kOpenAi);
  } else if (path == kMessagesPath) {
    co_await HandleChat(exchange, Wire::kAnthropic);
  } else if (path == kResponsesPath) {
    co_await HandleChat(exchange, Wire::kResponses);
  } else if (path == kOllamaChatPath) {
    co_await HandleChat(exchange, Wire::kOllama);
  } else if (path == kCohereChatPath) {
    co_await HandleChat(exchange, Wire::kCohere);
  } else if (path == kCountTokensPath) {
    co_await HandleCountTokens(exchange, Wire::kAnthropic);
  } else if (path == kOpenAiEmbeddingsPath) {
    co_await HandleEmbeddings(exchange, Wire::kOpenAi);
  } else if (path == kOllamaEmbedPath) {
    co_await HandleEmbeddings(exchange, Wire::kOllama);
  } else if (path == kCohereEmbedPath) {
    co_await HandleEmbeddings(exchange, Wire::kCohere);
  } else if (path == kModelsPath) {
    std::string body = RenderModelList();
    co_await RespondJson(exchange, kOk, std::move(body));
  } else if (path == kStatsPath) {
    std::optional<Http2Seen> http2;
    if (board_.http2_source()) http2 = board_.http2_source()();
    std::string body = StatsBoard::RenderJson(board_.Read(), http2 ? &*http2 : nullptr);
    co_await RespondJson(exchange, kOk, std::move(body));
  } else if (path == kStatsResetPath) {
    board_.Reset();
    std::string body = StatsBoard::RenderJson(board_.Read());
    co_await RespondJson(exchange, kOk, std::move(body));
  } else {
    const bool draining = exchange.draining();
    std::string body = draining ? R"({"status":"draining"})" : R"({"status":"ok"})";
    co_await RespondJson(exchange, draining ? kUnavailable : kOk, std::move(body));
  }
}

net::awaitable<void> MockHandler::HandleGemini(http::Exchange& exchange) {
  if (exchange.request().method() != Verb::post) {
    Error error{ErrorCode::kNotFound, "Method not found. (mock)", ""};
    co_await RespondError(exchange, std::move(error), Wire::kGemini);
    co_return;
  }
  Result<GeminiRoute> route = ParseGeminiTarget(exchange.target());
  if (!route.ok()) {
    Error error = route.error();
    co_await RespondError(exchange, std::move(error), Wire::kGemini);
    co_return;
  }
  // No key check, as for the other dialects: the mock accepts x-goog-api-key and ignores it.
  if (route->embed) {
    co_await HandleEmbeddings(exchange, Wire::kGemini);
    co_return;
  }
  if (route->count) {
    co_await HandleCountTokens(exchange, Wire::kGemini);
    co_return;
  }
  co_await HandleChat(exchange, Wire::kGemini, route.value());
}

net::awaitable<void> MockHandler::HandleCountTokens(http::Exchange& exchange, Wire wire) {
  stats_.Add(Counter::kRequests);
  const uint64_t tokens = exchange.request().body().size() / kBytesPerCountedToken;
  std::string body = wire == Wire::kGemini ? R"({"totalTokens":)" : R"({"input_tokens":)";
  body += std::to_string(tokens);
  body += "}";
  co_await RespondJson(exchange, kOk, std::move(body));
}

net::awaitable<void> MockHandler::HandleChat(http::Exchange& exchange, Wire wire,
                                             GeminiRoute gemini) {
  stats_.Add(Counter::kRequests);
  const bool anthropic = wire == Wire::kAnthropic;
  if (anthropic && exchange.request().find(kVersionHeader) == exchange.request().end()) {
    // As the Messages API does: the version header is required.
    Error error{ErrorCode::kInvalidRequest, "header is required", std::string(kVersionHeader)};
    co_await RespondError(exchange, std::move(error), wire);
    co_return;
  }
  const std::string_view body = exchange.request().body();
  Result<ChatRequest> chat = wire == Wire::kGemini
                                 ? parser_.ParseGenerateContent(body, gemini.model, gemini.stream)
                             : anthropic                ? parser_.ParseMessages(body)
                             : wire == Wire::kOllama    ? parser_.ParseOllama(body)
                             : wire == Wire::kResponses ? parser_.ParseResponses(body)
                                                        : parser_.Parse(body);
  if (chat.ok() && wire == Wire::kOllama && chat->model.ends_with(kOllamaMissingModelSuffix)) {
    chat = OllamaModelNotFound(chat->model);
  }
  if (!chat.ok()) {
    Error error = chat.error();
    co_await RespondError(exchange, std::move(error), wire);
    co_return;
  }
  // A Cohere v2 body reads like OpenAI's (model, messages, stream, max_tokens, tools).
  if (wire == Wire::kCohere) chat.value().wire = Wire::kCohere;
  Result<ChatPlan> plan = MakePlan(options_, chat.value(), exchange.request(), random_);
  if (!plan.ok()) {
    Error error = plan.error();
    co_await RespondError(exchange, std::move(error), wire);
    co_return;
  }
  const std::string suffix = std::to_string(worker_index_) + "-" + std::to_string(++replies_);
  ReplyIdentity identity;
  identity.id = (wire == Wire::kGemini ? "mock-"
                 : anthropic           ? "msg_mock_"
                                       : "chatcmpl-mock-") +
                suffix;
  if (plan->tool_call) identity.call_id = (anthropic ? "toolu_mock_" : "call_mock_") + suffix;
  identity.created = static_cast<int64_t>(std::time(nullptr));
  identity.model = chat->model;
  identity.description = chat->description;
  ChatReply reply(exchange, options_, chat.value(), plan.value(), identity, stats_, context_);
  co_await reply.Run();
}

net::awaitable<void> MockHandler::HandleEmbeddings(http::Exchange& exchange, Wire wire) {
  stats_.Add(Counter::kRequests);
  const std::string_view body = exchange.request().body();
  Result<EmbedRequest> request = wire == Wire::kOllama   ? ParseOllamaEmbed(body)
                                 : wire == Wire::kCohere ? ParseCohereEmbed(body)
                                 : wire == Wire::kGemini ? ParseGeminiEmbed(body)
                                                         : ParseOpenAiEmbed(body);
  if (request.ok() && wire == Wire::kOllama &&
      request->model.ends_with(kOllamaMissingModelSuffix)) {
    request = OllamaModelNotFound(request->model);
  }
  if (!request.ok()) {
    Error error = request.error();
    co_await RespondError(exchange, std::move(error), wire);
    co_return;
  }
  // Delays and faults are planned as for a non-stream chat request with no output tokens.
  ChatRequest chat;
  chat.wire = wire;
  chat.model = request->model;
  Result<ChatPlan> plan = MakePlan(options_, chat, exchange.request(), random_);
  if (!plan.ok()) {
    Error error = plan.error();
    co_await RespondError(exchange, std::move(error), wire);
    co_return;
  }
  request->words = options_.word_embeddings;
  plan->tokens = 0;
  plan->tool_call = false;
  plan->truncated = false;
  std::string answer = wire == Wire::kOllama   ? RenderOllamaEmbed(request.value())
                       : wire == Wire::kCohere ? RenderCohereEmbed(request.value())
                       : wire == Wire::kGemini ? RenderGeminiEmbed(request.value())
                                               : RenderOpenAiEmbeddings(request.value());
  ReplyIdentity identity;
  identity.model = chat.model;
  ChatReply reply(exchange, options_, chat, plan.value(), identity, stats_, context_,
                  std::move(answer));
  co_await reply.Run();
}

}  // namespace turnpike::mock
