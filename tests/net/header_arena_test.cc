#include "net/header_arena.h"

#include <gtest/gtest.h>

#include <boost/beast/http/fields.hpp>
#include <boost/beast/http/message.hpp>
#include <boost/beast/http/parser.hpp>
#include <boost/beast/http/string_body.hpp>
#include <string>
#include <utility>

namespace turnpike::net {
namespace {

namespace bhttp = boost::beast::http;
using Fields = bhttp::basic_fields<ArenaAllocator<char>>;

bool InArena(const HeaderArena& arena, const void* p) {
  const auto* byte = static_cast<const std::byte*>(p);
  const auto* base = reinterpret_cast<const std::byte*>(&arena);
  return byte >= base && byte < base + sizeof(HeaderArena);
}

TEST(HeaderArenaTest, BlocksComeFromTheArenaAlignedUntilItIsFull) {
  HeaderArena arena;
  void* a = arena.Allocate(3, 1);
  void* b = arena.Allocate(8, 8);
  EXPECT_TRUE(InArena(arena, a));
  EXPECT_TRUE(InArena(arena, b));
  EXPECT_EQ(reinterpret_cast<uintptr_t>(b) % 8, 0u);
  EXPECT_EQ(arena.used(), 16u);
  void* big = arena.Allocate(HeaderArena::kBytes, 8);  // does not fit: the heap
  EXPECT_FALSE(InArena(arena, big));
  arena.Deallocate(big, 8);
  arena.Deallocate(b, 8);
  arena.Deallocate(a, 1);
  arena.Reset();
  EXPECT_EQ(arena.used(), 0u);
  EXPECT_EQ(arena.Allocate(1, 1), a);  // the space is reused after Reset
  arena.Deallocate(a, 1);
}

TEST(HeaderArenaTest, BeastFieldsLiveInTheArena) {
  HeaderArena arena;
  {
    Fields fields{ArenaAllocator<char>(&arena)};
    fields.insert("content-type", "application/json");
    fields.insert("authorization", "Bearer tp-abc-def");
    fields.insert(bhttp::field::user_agent, "test");
    EXPECT_GT(arena.used(), 0u);
    EXPECT_TRUE(InArena(arena, fields.find("authorization")->value().data()));
    EXPECT_EQ(fields["content-type"], "application/json");
  }
  arena.Reset();  // every node was freed with the fields
}

TEST(HeaderArenaTest, AHeaderLargerThanTheArenaStillParses) {
  HeaderArena arena;
  {
    bhttp::request_parser<bhttp::string_body, ArenaAllocator<char>> parser(
        std::piecewise_construct, std::make_tuple(), std::make_tuple(ArenaAllocator<char>(&arena)));
    std::string head = "POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\n";
    for (int i = 0; i < 40; ++i) {
      head += "x-field-" + std::to_string(i) + ": " + std::string(100, 'a' + i % 26) + "\r\n";
    }
    head += "Content-Length: 2\r\n\r\n{}";
    boost::beast::error_code ec;
    parser.put(boost::asio::buffer(head), ec);
    ASSERT_FALSE(ec) << ec.message();
    ASSERT_TRUE(parser.is_header_done());
    const auto& request = parser.get();
    EXPECT_EQ(request.target(), "/v1/chat/completions");
    EXPECT_EQ(request["x-field-39"], std::string(100, 'a' + 39 % 26));
    EXPECT_EQ(request["x-field-0"], std::string(100, 'a'));
    EXPECT_GT(arena.used(), HeaderArena::kBytes / 2);
  }
  arena.Reset();
}

TEST(HeaderArenaTest, WithoutAnArenaTheAllocatorIsTheHeap) {
  Fields fields;  // default allocator: no arena
  fields.insert("a", "b");
  EXPECT_EQ(fields["a"], "b");
  Fields moved = std::move(fields);
  EXPECT_EQ(moved["a"], "b");
}

}  // namespace
}  // namespace turnpike::net
