// The LLM door's chat flow against a fake upstream, in one process: a real http::Server with
// the core's Dispatcher and the LLM door in front of a scripted upstream server, both on port 0,
// driven by a blocking HTTP client. Covers the identity path (whole and streamed), failover on
// a 5xx, an Anthropic client translated to an OpenAI deployment, and the router's 404/405 in
// the door's dialect.
#include <gtest/gtest.h>

#include <atomic>
#include <boost/asio/connect.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http/read.hpp>
#include <boost/beast/http/string_body.hpp>
#include <boost/beast/http/write.hpp>
#include <memory>
#include <string>
#include <thread>

#include "../../http/running_server.h"
#include "config/config.h"
#include "core/dispatcher.h"
#include "core/router.h"
#include "doors/llm/llm_door.h"
#include "http/exchange.h"
#include "http/server.h"
#include "providers/anthropic/anthropic_provider.h"
#include "providers/openai/openai_provider.h"
#include "providers/openai_responses/responses_provider.h"
#include "providers/registry.h"

namespace turnpike::doors::llm {
namespace {
namespace net = boost::asio;
namespace bhttp = boost::beast::http;

constexpr std::string_view kAnswer =
    R"({"id":"c1","object":"chat.completion","created":1,"model":"up","choices":[{"index":0,)"
    R"("message":{"role":"assistant","content":"hi there"},"finish_reason":"stop"}],)"
    R"("usage":{"prompt_tokens":5,"completion_tokens":2,"total_tokens":7}})";

// The upstream: "fail" in the body answers 503; "stream":true streams two deltas and [DONE];
// anything else is a whole chat answer with usage. Counts the requests it got.
class FakeUpstream : public http::Handler {
 public:
  explicit FakeUpstream(std::atomic<int>& requests) : requests_(requests) {}
  net::awaitable<void> Handle(http::Exchange& exchange) override {
    ++requests_;
    const std::string body = exchange.request().body();
    if (body.find("fail") != std::string::npos) {
      std::string error = R"({"error":{"message":"overloaded","type":"server_error"}})";
      co_await exchange.Respond(503, "application/json", std::move(error));
      co_return;
    }
    if (body.find(R"("stream":true)") != std::string::npos) {
      co_await exchange.StartStream(200, "text/event-stream");
      co_await exchange.Write(
          R"(data: {"id":"c1","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"content":"hi"}}]})"
          "\n\n");
      co_await exchange.Write(
          R"(data: {"id":"c1","object":"chat.completion.chunk","choices":[{"index":0,"delta":{},"finish_reason":"stop"}]})"
          "\n\n");
      co_await exchange.Write("data: [DONE]\n\n");
      co_await exchange.EndStream();
      co_return;
    }
    std::string answer(kAnswer);
    co_await exchange.Respond(200, "application/json", std::move(answer));
  }
  std::string RenderError(std::string_view, const Error& error) const override {
    return error.message;
  }

 private:
  std::atomic<int>& requests_;
};

// A door that takes the "test:" model prefix (core/handoff.h) and answers what it was handed.
class ReceivingDoor : public core::Door {
 public:
  net::awaitable<void> Handle(http::Exchange& exchange, core::RouteMatch) override {
    co_await exchange.Respond(500, "text/plain", std::string("routed, not handed"));
  }
  net::awaitable<void> Receive(http::Exchange& exchange, core::RouteMatch,
                               core::HandedRequest request) override {
    const boost::json::value* store = request.document.as_object().if_contains("store");
    std::string body =
        "received " + request.key + (store != nullptr && *store == true ? " store" : "");
    co_await exchange.Respond(200, "text/plain", std::move(body));
  }
  core::ErrorReply RenderError(int, const Error& error) const override {
    return {HttpStatus(error.code), error.message};
  }
};

// A server on port 0 running on its own thread until the fixture ends.
using Running = http::testing::RunningServer;

struct Reply {
  unsigned status = 0;
  std::string body;
  std::string allow;
};

Reply Send(uint16_t port, bhttp::verb method, const std::string& target, std::string body,
           bool anthropic = false) {
  net::io_context io;
  net::ip::tcp::socket socket(io);
  socket.connect({net::ip::make_address("127.0.0.1"), port});
  bhttp::request<bhttp::string_body> request(method, target, 11);
  request.set(bhttp::field::host, "127.0.0.1");
  request.set(bhttp::field::content_type, "application/json");
  if (anthropic) request.set("anthropic-version", "2023-06-01");
  request.body() = std::move(body);
  request.prepare_payload();
  bhttp::write(socket, request);
  boost::beast::flat_buffer buffer;
  bhttp::response<bhttp::string_body> response;
  bhttp::read(socket, buffer, response);
  return {response.result_int(), response.body(), std::string(response[bhttp::field::allow])};
}

class ChatFlowTest : public ::testing::Test {
 protected:
  ChatFlowTest()
      : upstream_([this](int, net::io_context&) {
          return std::make_unique<FakeUpstream>(upstream_requests_);
        }),
        config_(config::ParseConfig(Yaml(upstream_.port()))),
        registry_(MakeRegistry()),
        routes_(RouteTable::Build(config_, *registry_)),
        tls_("", false),
        llm_{config_, routes_, probes_, *registry_},
        router_(0) {
    doors_.push_back({LlmDoor::Routes(*registry_),
                      [this](int worker, net::io_context& context, core::WorkerCore& core) {
                        return std::make_unique<LlmDoor>(llm_, worker, context, core);
                      }});
    router_.Add(0, doors_[0].routes);
    doors_.push_back(
        {{},
         [](int, net::io_context&, core::WorkerCore&) { return std::make_unique<ReceivingDoor>(); },
         {"test:"}});
    probes_.route_labels = router_.labels();
    core_ = std::make_unique<core::CoreShared>(router_, probes_);
    core_->handoffs.Add("test:", 1);
    core_->model_count = routes_->models().size();
    core_->tls = &tls_;
    gateway_ = std::make_unique<Running>([this](int index, net::io_context& context) {
      return std::make_unique<core::Dispatcher>(*core_, doors_, index, context);
    });
  }

  static std::string Yaml(uint16_t port) {
    const std::string base = "http://127.0.0.1:" + std::to_string(port) + "/v1";
    return "governance: {enabled: false}\n"
           "routing: {max_attempts: 2, backoff_base: 1ms, backoff_max: 1ms}\n"
           "models:\n"
           "  - name: good\n"
           "    deployments: [{provider: openai, base_url: " +
           base +
           ", model: up}]\n"
           "  - name: failover\n"
           "    deployments:\n"
           "      - {provider: openai, base_url: " +
           base +
           ", model: fail, weight: 1000000}\n"
           "      - {provider: openai, base_url: " +
           base + ", model: up, weight: 1}\n";
  }
  static std::unique_ptr<providers::Registry> MakeRegistry() {
    auto registry = std::make_unique<providers::Registry>();
    registry->Add(std::make_unique<providers::openai::OpenAiProvider>());
    registry->Add(std::make_unique<providers::anthropic::AnthropicProvider>());
    registry->Add(std::make_unique<providers::openai_responses::ResponsesProvider>());
    return registry;
  }
  uint16_t port() const { return gateway_->port(); }

  std::atomic<int> upstream_requests_{0};
  Running upstream_;
  const config::Config config_;
  std::unique_ptr<providers::Registry> registry_;
  std::shared_ptr<const RouteTable> routes_;
  const upstream::TlsContexts tls_;
  core::ProbeRegistry probes_;
  const LlmShared llm_;
  core::Router router_;
  std::vector<core::DoorSpec> doors_;
  std::unique_ptr<core::CoreShared> core_;
  std::unique_ptr<Running> gateway_;
};

TEST_F(ChatFlowTest, IdentityPathRelaysTheWholeAnswer) {
  const Reply r = Send(port(), bhttp::verb::post, "/v1/chat/completions",
                       R"({"model":"good","messages":[{"role":"user","content":"hello"}]})");
  EXPECT_EQ(r.status, 200u);
  EXPECT_NE(r.body.find(R"("content":"hi there")"), std::string::npos) << r.body;
  EXPECT_EQ(upstream_requests_.load(), 1);
}

TEST_F(ChatFlowTest, IdentityPathRelaysAStream) {
  const Reply r =
      Send(port(), bhttp::verb::post, "/v1/chat/completions",
           R"({"model":"good","stream":true,"messages":[{"role":"user","content":"x"}]})");
  EXPECT_EQ(r.status, 200u);
  EXPECT_NE(r.body.find(R"("delta":{"content":"hi"})"), std::string::npos) << r.body;
  EXPECT_NE(r.body.find("data: [DONE]"), std::string::npos) << r.body;
}

TEST_F(ChatFlowTest, A5xxFailsOverToTheNextDeployment) {
  const Reply r = Send(port(), bhttp::verb::post, "/v1/chat/completions",
                       R"({"model":"failover","messages":[{"role":"user","content":"x"}]})");
  EXPECT_EQ(r.status, 200u) << r.body;
  EXPECT_EQ(upstream_requests_.load(), 2);
  const Reply models = Send(port(), bhttp::verb::get, "/v1/models", "");
  EXPECT_NE(models.body.find(R"("id":"failover")"), std::string::npos);
  EXPECT_EQ(probes_.requests.front()->retries.value(), 1u);
}

TEST_F(ChatFlowTest, AnAnthropicClientIsTranslatedToAnOpenAiDeployment) {
  const Reply r =
      Send(port(), bhttp::verb::post, "/v1/messages",
           R"({"model":"good","max_tokens":50,"messages":[{"role":"user","content":"x"}]})",
           /*anthropic=*/true);
  EXPECT_EQ(r.status, 200u) << r.body;
  EXPECT_NE(r.body.find(R"("type":"message")"), std::string::npos) << r.body;
  EXPECT_NE(r.body.find("hi there"), std::string::npos) << r.body;
  EXPECT_NE(r.body.find(R"("output_tokens":2)"), std::string::npos) << r.body;
}

TEST_F(ChatFlowTest, UnknownModelIsA404AndNoUpstreamCall) {
  const Reply r = Send(port(), bhttp::verb::post, "/v1/chat/completions",
                       R"({"model":"nope","messages":[{"role":"user","content":"x"}]})");
  EXPECT_EQ(r.status, 404u);
  EXPECT_NE(r.body.find("model_not_found"), std::string::npos) << r.body;
  EXPECT_EQ(upstream_requests_.load(), 0);
}

TEST_F(ChatFlowTest, TheRoutersErrorsAreInTheDoorsDialect) {
  Reply r = Send(port(), bhttp::verb::get, "/v1/messages", "");
  EXPECT_EQ(r.status, 405u);
  EXPECT_EQ(r.allow, "POST");
  EXPECT_NE(r.body.find(R"("type":"error")"), std::string::npos) << "Anthropic's shape: " << r.body;
  r = Send(port(), bhttp::verb::get, "/v1/chat/completions", "");
  EXPECT_EQ(r.status, 405u);
  EXPECT_NE(r.body.find(R"({"error":{)"), std::string::npos) << "OpenAI's shape: " << r.body;
  r = Send(port(), bhttp::verb::post, "/v2/nothing", "{}");
  EXPECT_EQ(r.status, 404u);
  EXPECT_NE(r.body.find("Invalid URL (POST /v2/nothing)"), std::string::npos) << r.body;
}

TEST_F(ChatFlowTest, AResponsesModelWithAnotherDoorsPrefixIsHandedToThatDoor) {
  // Fields the stateless Responses parser refuses reach the receiving door: the hand-off comes
  // before that parse, and the body it got is the one this door parsed.
  Reply r = Send(port(), bhttp::verb::post, "/v1/responses",
                 R"({"model":"test:support","input":"hi","store":true})");
  EXPECT_EQ(r.status, 200u);
  EXPECT_EQ(r.body, "received test:support store");
  EXPECT_EQ(upstream_requests_.load(), 0);
  // Any other model is this door's own: parsed (from the same document) and refused.
  r = Send(port(), bhttp::verb::post, "/v1/responses",
           R"({"model":"good","input":"hi","store":true})");
  EXPECT_EQ(r.status, 400u);
  EXPECT_NE(r.body.find("store"), std::string::npos) << r.body;
  r = Send(port(), bhttp::verb::post, "/v1/responses", R"({"model":"good","input":"hi"})");
  EXPECT_EQ(r.status, 200u) << r.body;
  EXPECT_NE(r.body.find("hi there"), std::string::npos) << r.body;
}

}  // namespace
}  // namespace turnpike::doors::llm
