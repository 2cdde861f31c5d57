// The closed loop of one connection of an agent-turn run (`turnpike bench --agent ID`).
//
// A conversation per connection, --turns turns on it, one after another: the first permit
// creates a conversation (POST .../conversations), reads its id and builds the conversation's
// two turn requests (plain and streamed, agent_template.h); that permit and the next ones
// each send a turn, until --turns were sent; then the next permit creates a new conversation.
// A turn's latency runs from its own write; the creation before it is not in it. A failed
// creation is the failure of the turn it was for (an answer without an id: bad_response). A
// turn refused because the conversation is busy (409) is an http_status failure; the
// conversation is kept, as after any failed turn.
//
// Threads: runs on its worker's event loop only; `worker` and `slot` outlive it.
#pragma once

#include <boost/asio/awaitable.hpp>

#include "loadgen/worker.h"

namespace turnpike::loadgen {

boost::asio::awaitable<void> RunAgentConnection(Worker& worker, Worker::Slot& slot);

}  // namespace turnpike::loadgen
