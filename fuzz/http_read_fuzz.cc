// Bytes a client sends on one connection, read as http/session.cc reads them: requests one after
// another (keep-alive, pipelined), each by net::ParseBufferedHeader / ReadHeader then
// net::ParseBufferedBody / ReadBody (what the buffer holds first, then reads) into
// net::RequestParser, its header fields in the connection's HeaderArena. The bytes arrive
// through an in-memory stream in reads whose sizes the input gives (chunk_plan.h), then end of
// stream. The same bytes, in the same reads, go through Beast's request_parser too.
//
// Checks, besides crashes: a head reported complete is at most kMaxHeadBytes (counted from the
// stream's side: bytes handed out minus bytes left in the buffer), a body reported complete is
// at most kMaxBodyBytes, and the fields can be walked (ASan watches the arena); and against
// Beast: RequestParser reads no request Beast refuses (it may refuse more: obs-fold, versions
// other than 1.0 and 1.1, codings other than chunked; request_parser.h), and a request both
// read is the same request: method, target, version, every field (its enum, name and value, in
// order: trailers too), body and keep-alive.
#include <boost/asio/awaitable.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http/parser.hpp>
#include <boost/beast/http/string_body.hpp>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <string>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "chunk_plan.h"
#include "chunked_stream.h"
#include "net/header_arena.h"
#include "net/http_read.h"
#include "net/request_parser.h"

namespace {

namespace asio = boost::asio;
namespace bhttp = boost::beast::http;
namespace tpnet = turnpike::net;

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

// One request as a parser read it; `ok` false for the read that failed (the connection's last).
struct Outcome {
  bool ok = false;
  std::string method, target;
  unsigned version = 0;
  std::vector<std::tuple<int, std::string, std::string>> fields;
  std::string body;
  bool keep_alive = false;

  bool operator==(const Outcome&) const = default;
};

template <typename Message>
Outcome Read(const Message& m) {
  Outcome o;
  o.ok = true;
  o.method = std::string(m.method_string());
  o.target = std::string(m.target());
  o.version = m.version();
  for (const auto& f : m) {
    o.fields.emplace_back(static_cast<int>(f.name()), std::string(f.name_string()),
                          std::string(f.value()));
  }
  o.body = m.body();
  o.keep_alive = m.keep_alive();
  return o;
}

using BeastParser = bhttp::request_parser<bhttp::string_body, tpnet::ArenaAllocator<char>>;

template <typename Parser>
asio::awaitable<void> ReadConnection(turnpike::fuzz::ChunkedStream& stream,
                                     std::vector<Outcome>& out) {
  tpnet::HeaderArena arena;
  boost::beast::flat_buffer buffer;
  for (int i = 0; i < kMaxRequests; ++i) {
    arena.Reset();  // the previous request's parser and message are gone
    const size_t consumed_before = stream.handed_out() - buffer.size();
    Parser parser = [&] {
      if constexpr (std::is_same_v<Parser, BeastParser>) {
        return Parser(std::piecewise_construct, std::make_tuple(),
                      std::make_tuple(tpnet::ArenaAllocator<char>(&arena)));
      } else {
        return Parser(arena);
      }
    }();
    parser.body_limit(kMaxBodyBytes);
    out.emplace_back();
    // As RunSession: what the buffer holds first, then reads (ReadHeader) if that is not all.
    size_t parsed = 0;
    boost::beast::error_code hec;
    if (!tpnet::ParseBufferedHeader(buffer, parser, kMaxHeadBytes, parsed, hec)) {
      const boost::beast::error_code read_ec =
          co_await tpnet::ReadHeader(stream, buffer, parser, kMaxHeadBytes, parsed);
      hec = read_ec;
    }
    if (hec) co_return;
    Check(parser.is_header_done());
    const size_t head_bytes = stream.handed_out() - buffer.size() - consumed_before;
    Check(head_bytes <= kMaxHeadBytes);
    Check(WalkFields(parser.get()) <= head_bytes);
    if (!parser.is_done()) {
      boost::beast::error_code bec;
      if (!tpnet::ParseBufferedBody(buffer, parser, bec)) {
        const boost::beast::error_code read_ec = co_await tpnet::ReadBody(stream, buffer, parser);
        bec = read_ec;
      }
      if (bec) co_return;
    }
    Check(parser.is_done());
    const auto request = parser.release();
    Check(request.body().size() <= kMaxBodyBytes);
    (void)WalkFields(request);  // trailers of a chunked body too
    out.back() = Read(request);
    if (!request.keep_alive()) co_return;
  }
}

template <typename Parser>
std::vector<Outcome> ReadAll(asio::io_context& io, const turnpike::fuzz::ChunkPlan& plan) {
  std::vector<Outcome> out;
  turnpike::fuzz::ChunkedStream stream(io.get_executor(), plan);
  io.restart();
  asio::co_spawn(io, ReadConnection<Parser>(stream, out), [](std::exception_ptr e) {
    if (e) std::rethrow_exception(e);
  });
  io.run();
  return out;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static asio::io_context io;
  const turnpike::fuzz::ChunkPlan plan(std::string_view(reinterpret_cast<const char*>(data), size));
  const std::vector<Outcome> ours = ReadAll<tpnet::RequestParser>(io, plan);
  const std::vector<Outcome> beast = ReadAll<BeastParser>(io, plan);
  for (size_t i = 0; i < ours.size() && i < beast.size(); ++i) {
    if (!ours[i].ok) break;  // refused: stricter is allowed, and the streams part here
    Check(beast[i].ok);      // never read what Beast refuses
    Check(ours[i] == beast[i]);
  }
  return 0;
}
