// Drives coroutines for the cache's tests: RunOnLoop runs one to its end on a fresh event
// loop, as a worker's request coroutine would run, and returns its value.
#pragma once

#include <boost/asio/awaitable.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <optional>

namespace turnpike::cache::testing {

template <typename T>
boost::asio::awaitable<void> StoreResult(boost::asio::awaitable<T> coroutine,
                                         std::optional<T>* out) {
  out->emplace(co_await std::move(coroutine));
}

// T need not be default-constructible (Result<T>).
template <typename T>
T RunOnLoop(boost::asio::awaitable<T> coroutine) {
  boost::asio::io_context io;
  std::optional<T> result;
  boost::asio::co_spawn(io, StoreResult(std::move(coroutine), &result), boost::asio::detached);
  io.run();
  return std::move(*result);
}

}  // namespace turnpike::cache::testing
