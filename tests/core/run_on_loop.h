// Runs one coroutine to its end on a fresh event loop and returns its value: how the core's
// tests drive a filter or a chain that may suspend, as a door's request coroutine would.
#pragma once

#include <boost/asio/awaitable.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/use_future.hpp>

namespace turnpike::core::testing {

template <typename T>
T RunOnLoop(boost::asio::awaitable<T> coroutine) {
  boost::asio::io_context io;
  auto result = boost::asio::co_spawn(io, std::move(coroutine), boost::asio::use_future);
  io.run();
  return result.get();
}

}  // namespace turnpike::core::testing
