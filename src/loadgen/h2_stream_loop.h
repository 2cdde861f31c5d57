// `turnpike bench --http2`: the closed loop of one HTTP/2 stream slot.
//
// A worker running an --http2 plan opens no sockets of its own: its slots (connections ×
// --streams-per-conn of them) each loop on a stream of the worker's shared HTTP/2 connections,
// through the gateway's own upstream client (upstream::Call over an origin with `http2`, cleartext
// by prior knowledge), whose pool holds at most --streams-per-conn streams per connection. So
// the worker's `connections` share of -c is how many connections it opens while all of its
// slots are busy. Each loop: takes a permit, starts a stream with the plan's next body, reads
// the response to its end (a stream's first `data:` and its `data: [DONE]` are looked for
// across pieces) and reports a Completion, as the HTTP/1.1 loop (connection.h) does.
//
// Timeouts: the call's own (connect, first byte and idle between pieces, each --timeout), not a
// total per request. Threads: its worker's event loop only; `worker` and `pool` outlive it.
#pragma once

#include <boost/asio/awaitable.hpp>

#include "loadgen/worker.h"
#include "upstream/pool.h"

namespace turnpike::loadgen {

boost::asio::awaitable<void> RunHttp2Slot(Worker& worker, upstream::Pool& pool);

}  // namespace turnpike::loadgen
