#include "mock/mock_command.h"

#include <pthread.h>
#include <signal.h>

#include <atomic>
#include <ctime>
#include <iostream>
#include <memory>
#include <string>
#include <thread>

#include "http/server.h"
#include "mock/mock_service.h"

namespace turnpike::mock {
namespace {

// How often the signal thread checks whether the server stopped on its own.
constexpr long kSignalPollNanos = 100'000'000;

// The options as typed; durations and the address are parsed in the callback.
struct RawOptions {
  MockOptions options;
  std::string listen = "127.0.0.1:" + std::to_string(kDefaultPort);
  std::string first_token_delay = "0";
  std::string inter_token = "0";
  std::string slow_headers = "0";
  std::string embeddings = "hash";
  std::string reply = "tokens";
  std::string reply_text;
};

Millis DurationOrThrow(const std::string& option, const std::string& text) {
  Result<Millis> value = ParseDuration(option, text);
  if (!value.ok()) throw CLI::ValidationError(option, value.error().message);
  return value.value();
}

MockOptions Resolve(const RawOptions& raw) {
  MockOptions options = raw.options;
  Result<HostPort> address = ParseHostPort(raw.listen);
  if (!address.ok()) throw CLI::ValidationError("--listen", address.error().message);
  options.host = address->host;
  options.port = address->port;
  options.first_token_delay = DurationOrThrow("--first-token-delay", raw.first_token_delay);
  options.inter_token = DurationOrThrow("--inter-token", raw.inter_token);
  options.slow_headers = DurationOrThrow("--slow-headers", raw.slow_headers);
  options.word_embeddings = raw.embeddings == "words";
  options.reply = raw.reply == "describe" ? ReplyMode::kDescribe : ReplyMode::kTokens;
  if (!raw.reply_text.empty()) {
    options.reply = ReplyMode::kText;
    options.reply_text = raw.reply_text;
  }
  Status valid = Validate(options);
  if (!valid.ok()) throw CLI::ValidationError(valid.error().message);
  return options;
}

// The first signal drains, a second one stops; returns once `server_done` is set.
void WaitForSignals(const sigset_t* signals, const std::atomic<bool>* server_done,
                    http::Server* server) {
  bool drained = false;
  while (!server_done->load()) {
    timespec poll{0, kSignalPollNanos};
    const int received = sigtimedwait(signals, nullptr, &poll);
    if (received != SIGINT && received != SIGTERM) continue;
    if (drained) {
      server->Stop();
    } else {
      drained = true;
      server->Drain();
    }
  }
}

std::string FormatAddress(const std::string& host, uint16_t port) {
  const bool v6 = host.find(':') != std::string::npos;
  return (v6 ? "[" + host + "]" : host) + ":" + std::to_string(port);
}

}  // namespace

void ServeMockProvider(const MockOptions& options, std::ostream& out) {
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGINT);
  sigaddset(&signals, SIGTERM);
  sigset_t previous;
  pthread_sigmask(SIG_BLOCK, &signals, &previous);

  MockService service(options);
  http::Server server(service.server_options(), service.MakeHandlerFactory());
  service.stats().set_http2_source([&server] {
    const http::Http2Totals totals = server.http2_totals();
    return Http2Seen{totals.connections, totals.streams, totals.client_resets};
  });
  Status bound = server.Bind();
  if (!bound.ok()) {
    pthread_sigmask(SIG_SETMASK, &previous, nullptr);
    throw CLI::RuntimeError(bound.error().message, 1);
  }
  out << "mock-provider listening on " << FormatAddress(options.host, server.port()) << std::endl;

  std::atomic<bool> server_done{false};
  std::thread signal_thread(WaitForSignals, &signals, &server_done, &server);
  server.Run();
  server_done.store(true);
  signal_thread.join();
  pthread_sigmask(SIG_SETMASK, &previous, nullptr);
}

void RegisterMockProviderCommand(CLI::App& root) {
  // Option storage lives as long as the subcommand: CLI11 owns it through the callback.
  auto raw = std::make_shared<RawOptions>();
  MockOptions& o = raw->options;
  CLI::App* cmd = root.add_subcommand(
      "mock-provider",
      "Fake LLM provider for tests: OpenAI (/v1/chat/completions), Anthropic (/v1/messages) and "
      "Gemini (/v1beta/models/{model}:generateContent, :streamGenerateContent?alt=sse)");
  cmd->add_option("--listen", raw->listen, "HOST:PORT (port 0 picks a free one)")
      ->capture_default_str();
  cmd->add_option("--workers", o.workers, "Worker threads")->capture_default_str();
  cmd->add_option("--first-token-delay", raw->first_token_delay, "Delay before the first token")
      ->capture_default_str();
  cmd->add_option("--tokens", o.tokens, "Completion tokens per reply")->capture_default_str();
  cmd->add_option("--inter-token", raw->inter_token, "Delay between tokens")->capture_default_str();
  cmd->add_option("--fail-rate", o.fail_rate, "Share of requests answered 500")
      ->capture_default_str();
  cmd->add_option("--rate-limit-rate", o.rate_limit_rate, "Share answered 429")
      ->capture_default_str();
  cmd->add_option("--retry-after", o.retry_after_s, "Retry-After seconds of a 429")
      ->capture_default_str();
  cmd->add_option("--reset-rate", o.reset_rate, "Share of streams reset after half the tokens")
      ->capture_default_str();
  cmd->add_option("--slow-headers", raw->slow_headers, "Delay before every response head")
      ->capture_default_str();
  cmd->add_option("--seed", o.seed, "Seed of the fault draws")->capture_default_str();
  cmd->add_option("--cached-tokens", o.cached_tokens,
                  "Prompt tokens reported as read from the prompt cache")
      ->capture_default_str();
  cmd->add_option("--cache-write-tokens", o.cache_write_tokens,
                  "Prompt tokens reported as written to the prompt cache (Anthropic)")
      ->capture_default_str();
  cmd->add_flag("--tool-calls", o.tool_calls,
                "Answer requests that offer tools with a call to the first tool");
  cmd->add_flag("--tool-calls-until-result", o.tool_calls_until_result,
                "As --tool-calls, unless the conversation ends with a tool result: then the "
                "reply --reply says");
  cmd->add_option("--embeddings", raw->embeddings,
                  "Embedding vectors: hash (a random unit vector per text) or words (bag of "
                  "words: texts sharing most words are close)")
      ->check(CLI::IsMember({"hash", "words"}))
      ->capture_default_str();
  cmd->add_option("--reply", raw->reply,
                  "Chat reply text: tokens (tok0 tok1 ..., --tokens of them) or describe (the "
                  "conversation received, one 'role: text' per message, tool call and tool result, "
                  "joined by ' | ', e.g. "
                  "'system: Be terse. | user: hi | assistant: call f({\"a\":1}) | tool: 42'; "
                  "roles system, user, assistant, tool; never cut by --tokens or max_tokens)")
      ->check(CLI::IsMember({"tokens", "describe"}))
      ->capture_default_str();
  cmd->add_option("--reply-text", raw->reply_text,
                  "Every chat reply is this text (streamed word by word; overrides --reply)");
  cmd->callback([raw] { ServeMockProvider(Resolve(*raw), std::cout); });
}

}  // namespace turnpike::mock
