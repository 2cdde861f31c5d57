#include "cache/redis/redis_l2_store.h"

#include <boost/asio/awaitable.hpp>
#include <charconv>
#include <memory>
#include <vector>

#include "net/bridge.h"
#include "redis/client.h"

namespace turnpike::cache {
namespace {

namespace net = boost::asio;
using redis::Reply;

Error BadReply(std::string_view what) {
  return Error{ErrorCode::kUpstreamBadResponse, "unexpected Redis reply to " + std::string(what),
               ""};
}

// Submits one command and resumes the caller on its own executor with the reply
// (net/bridge.h). The client calls every callback exactly once (a reply, a failure, or its
// Stop), from its own thread.
net::awaitable<Result<Reply>> Call(redis::Client& client, redis::Op op,
                                   std::vector<std::string> args) {
  auto submit = [&client, op, command = std::move(args)](auto done) mutable {
    // std::function needs a copyable callable; the completion is move-only.
    auto shared = std::make_shared<decltype(done)>(std::move(done));
    client.Submit(op, std::move(command),
                  [shared](Result<Reply> reply) { std::move (*shared)(std::move(reply)); });
  };
  auto job = turnpike::net::AwaitJob<Result<Reply>>(std::move(submit));
  Result<Reply> reply = co_await std::move(job);
  co_return reply;
}

bool ParseGeneration(const Reply& reply, uint64_t& generation) {
  if (reply.type == Reply::Type::kNil) {
    generation = 0;
    return true;
  }
  if (reply.type != Reply::Type::kString) return false;
  const char* end = reply.text.data() + reply.text.size();
  auto [ptr, ec] = std::from_chars(reply.text.data(), end, generation);
  return ec == std::errc() && ptr == end;
}

}  // namespace

net::awaitable<Result<L2Read>> RedisL2Store::Get(std::string generation_key,
                                                 std::string entry_key) {
  std::vector<std::string> command;
  command.reserve(3);
  command.emplace_back("MGET");
  command.push_back(std::move(generation_key));
  command.push_back(std::move(entry_key));
  auto call = Call(client_, redis::Op::kCacheGet, std::move(command));
  Result<Reply> reply = co_await std::move(call);
  if (!reply.ok()) co_return reply.error();
  if (reply->type != Reply::Type::kArray || reply->items.size() != 2) co_return BadReply("MGET");
  L2Read read;
  if (!ParseGeneration(reply->items[0], read.generation)) co_return BadReply("MGET");
  Reply& entry = reply->items[1];
  if (entry.type == Reply::Type::kString) {
    read.entry = std::move(entry.text);
  } else if (entry.type != Reply::Type::kNil) {
    co_return BadReply("MGET");
  }
  co_return read;
}

net::awaitable<Status> RedisL2Store::Put(std::string entry_key, std::string entry,
                                         std::chrono::milliseconds ttl) {
  std::vector<std::string> command;
  command.reserve(5);
  command.emplace_back("SET");
  command.push_back(std::move(entry_key));
  command.push_back(std::move(entry));
  command.emplace_back("PX");
  command.push_back(std::to_string(std::max<int64_t>(ttl.count(), 1)));
  auto call = Call(client_, redis::Op::kCachePut, std::move(command));
  Result<Reply> reply = co_await std::move(call);
  if (!reply.ok()) co_return reply.error();
  if (reply->type != Reply::Type::kStatus) co_return BadReply("SET");
  co_return Ok{};
}

net::awaitable<Result<uint64_t>> RedisL2Store::Bump(std::string generation_key) {
  std::vector<std::string> command;
  command.reserve(2);
  command.emplace_back("INCR");
  command.push_back(std::move(generation_key));
  auto call = Call(client_, redis::Op::kCacheBump, std::move(command));
  Result<Reply> reply = co_await std::move(call);
  if (!reply.ok()) co_return reply.error();
  if (reply->type != Reply::Type::kInteger || reply->integer < 0) co_return BadReply("INCR");
  co_return static_cast<uint64_t>(reply->integer);
}

}  // namespace turnpike::cache
