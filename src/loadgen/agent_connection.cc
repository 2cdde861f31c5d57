#include "loadgen/agent_connection.h"

#include <memory>
#include <optional>
#include <string>

#include "loadgen/agent_template.h"
#include "loadgen/connection.h"
#include "loadgen/request_template.h"
#include "loadgen/response_parser.h"

namespace turnpike::loadgen {
namespace {

namespace asio = boost::asio;

constexpr size_t kReadBufferSize = 16 * 1024;

}  // namespace

asio::awaitable<void> RunAgentConnection(Worker& worker, Worker::Slot& slot) {
  const AgentPlan& agent = *worker.plan().agent;
  ResponseParser parser;
  auto read_storage = std::make_unique<char[]>(kReadBufferSize);
  const asio::mutable_buffer read_buffer(read_storage.get(), kReadBufferSize);
  std::string plain_turn;
  std::string stream_turn;
  int turns_left = 0;  // on the current conversation; 0: create one first

  while (true) {
    const Permit permit = worker.NextRequest();
    if (permit == Permit::kStop) break;
    const bool measured = permit == Permit::kMeasured;
    if (!slot.socket.is_open()) {
      const bool connected = co_await ConnectSlot(worker, slot, measured);
      if (!connected) continue;
    }
    if (turns_left == 0) {
      Exchanged created = co_await SendAndRead(worker, slot, agent.create_request, false, true,
                                               StreamEnd::kDoneMarker, parser, read_buffer);
      if (created.stopped) break;
      if (!created.reusable) CloseSocket(slot);
      std::optional<std::string> id;
      if (created.completion.outcome == Outcome::kOk) id = ConversationIdOf(parser.body());
      if (!id) {
        if (created.completion.outcome == Outcome::kOk) {
          created.completion.outcome = Outcome::kBadResponse;
        }
        created.completion.measured = measured;
        worker.Record(created.completion);
        continue;
      }
      worker.RecordConversation(measured);
      const std::string body = TurnBody(agent.agent, *id, agent.input);
      plain_turn = BuildRequest(agent.turn_target, body, agent.headers);
      stream_turn = BuildRequest(agent.turn_target, StreamingBody(body), agent.headers);
      turns_left = agent.turns;
      if (!slot.socket.is_open()) {
        const bool reconnected = co_await ConnectSlot(worker, slot, measured);
        if (!reconnected) continue;
      }
    }
    const bool streaming = worker.NextIsStream();
    const std::string& request = streaming ? stream_turn : plain_turn;
    Exchanged turn = co_await SendAndRead(worker, slot, request, streaming, false,
                                          StreamEnd::kResponseCompleted, parser, read_buffer);
    if (turn.stopped) break;
    --turns_left;
    turn.completion.measured = measured;
    worker.Record(turn.completion);
    if (!turn.reusable) CloseSocket(slot);
  }
  worker.ConnectionExited();
}

}  // namespace turnpike::loadgen
