// Bytes a client sends on one connection, read as http/session.cc reads them: requests one after
// another (keep-alive, pipelined), each by net::ReadHeader then net::ReadBody into Beast's
// request_parser with string_body, its header fields in the connection's HeaderArena. The bytes
// arrive through an in-memory stream in reads whose sizes the input gives (chunk_plan.h), then
// end of stream. Checks that a head reported complete is at most kMaxHeadBytes (counted from
// the stream's side: bytes handed out minus bytes left in the buffer), that a body reported
// complete is at most kMaxBodyBytes, and that the fields can be walked (ASan watches the arena).
#include <boost/asio/awaitable.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http/parser.hpp>
#include <boost/beast/http/string_body.hpp>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <string_view>
#include <tuple>
#include <utility>

#include "chunk_plan.h"
#include "chunked_stream.h"
#include "net/header_arena.h"
#include "net/http_read.h"

namespace {

namespace asio = boost::asio;
namespace bhttp = boost::beast::http;

constexpr size_t kMaxHeadBytes = 1024;
constexpr size_t kMaxBodyBytes = 4096;
constexpr int kMaxRequests = 8;  // per connection

void Check(bool ok) {
  if (!ok) __builtin_trap();
}

// Reads every byte of the target and of each field's name and value; returns how many.
template <typename Message>
size_t WalkFields(const Message& message) {
  static volatile unsigned char sink;
  size_t bytes = 0;
  auto read = [&](std::string_view text) {
    for (char c : text) sink = static_cast<unsigned char>(sink ^ static_cast<unsigned char>(c));
    bytes += text.size();
  };
  read(message.target());
  for (const auto& field : message) {
    read(field.name_string());
    read(field.value());
  }
  return bytes;
}

asio::awaitable<void> ReadConnection(turnpike::fuzz::ChunkedStream& stream) {
  namespace tpnet = turnpike::net;
  tpnet::HeaderArena arena;
  boost::beast::flat_buffer buffer;
  for (int i = 0; i < kMaxRequests; ++i) {
    arena.Reset();  // the previous request's parser and message are gone
    const size_t consumed_before = stream.handed_out() - buffer.size();
    bhttp::request_parser<bhttp::string_body, tpnet::ArenaAllocator<char>> parser(
        std::piecewise_construct, std::make_tuple(),
        std::make_tuple(tpnet::ArenaAllocator<char>(&arena)));
    parser.body_limit(kMaxBodyBytes);
    const boost::beast::error_code hec =
        co_await tpnet::ReadHeader(stream, buffer, parser, kMaxHeadBytes);
    if (hec) co_return;
    Check(parser.is_header_done());
    const size_t head_bytes = stream.handed_out() - buffer.size() - consumed_before;
    Check(head_bytes <= kMaxHeadBytes);
    Check(WalkFields(parser.get()) <= head_bytes);
    if (!parser.is_done()) {
      const boost::beast::error_code bec = co_await tpnet::ReadBody(stream, buffer, parser);
      if (bec) co_return;
    }
    Check(parser.is_done());
    const auto request = parser.release();
    Check(request.body().size() <= kMaxBodyBytes);
    (void)WalkFields(request);  // trailers of a chunked body too
    if (!request.keep_alive()) co_return;
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static asio::io_context io;
  const turnpike::fuzz::ChunkPlan plan(std::string_view(reinterpret_cast<const char*>(data), size));
  turnpike::fuzz::ChunkedStream stream(io.get_executor(), plan);
  io.restart();
  asio::co_spawn(io, ReadConnection(stream), [](std::exception_ptr e) {
    if (e) std::rethrow_exception(e);
  });
  io.run();
  return 0;
}
