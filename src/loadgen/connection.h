// The closed loop of one load generator connection, and the steps it is made of.
//
// Connects (with a short back-off after a failure), then repeatedly: takes permission for a
// request from the worker, writes the prebuilt request in one write, reads into a reused
// buffer until the response parser says the response is complete, and reports a Completion.
// The connection is kept alive unless the server closes it or the exchange failed, in which
// case it reconnects. It ends when the worker stops or has no more requests to give.
// (An agent-turn run's connections loop in agent_connection.h, over the same steps.)
//
// Threads: runs on its worker's event loop only; `worker` and `slot` outlive it.
#pragma once

#include <boost/asio/awaitable.hpp>
#include <boost/asio/buffer.hpp>
#include <string_view>

#include "loadgen/outcome.h"
#include "loadgen/response_parser.h"
#include "loadgen/worker.h"

namespace turnpike::loadgen {

boost::asio::awaitable<void> RunConnection(Worker& worker, Worker::Slot& slot);

// Connects the slot's socket. On failure, records the request (`measured`: its permit) as
// failed and backs off; false.
boost::asio::awaitable<bool> ConnectSlot(Worker& worker, Worker::Slot& slot, bool measured);

// How one request on an open socket went.
struct Exchanged {
  Completion completion;  // all but `measured`, which the caller sets
  bool reusable = false;  // the socket may carry the next request; else the caller closes it
  bool stopped = false;   // the worker stopped meanwhile: record nothing, end the loop
};

// Writes `request` on the slot's open socket and reads its whole response into `parser`
// (reset with `streaming` and `keep_body`), through `read_buffer`; `end` says what ends a
// successful stream.
boost::asio::awaitable<Exchanged> SendAndRead(Worker& worker, Worker::Slot& slot,
                                              std::string_view request, bool streaming,
                                              bool keep_body, StreamEnd end, ResponseParser& parser,
                                              boost::asio::mutable_buffer read_buffer);

// Closes the slot's socket, ignoring errors.
void CloseSocket(Worker::Slot& slot);

}  // namespace turnpike::loadgen
