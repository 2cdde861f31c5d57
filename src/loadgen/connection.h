// The closed loop of one load generator connection.
//
// Connects (with a short back-off after a failure), then repeatedly: takes permission for a
// request from the worker, writes the prebuilt request in one write, reads into a reused
// buffer until the response parser says the response is complete, and reports a Completion.
// The connection is kept alive unless the server closes it or the exchange failed, in which
// case it reconnects. It ends when the worker stops or has no more requests to give.
//
// Threads: runs on its worker's event loop only; `worker` and `slot` outlive it.
#pragma once

#include <boost/asio/awaitable.hpp>

#include "loadgen/worker.h"

namespace turnpike::loadgen {

boost::asio::awaitable<void> RunConnection(Worker& worker, Worker::Slot& slot);

}  // namespace turnpike::loadgen
