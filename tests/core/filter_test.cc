#include "core/filter.h"

#include <gtest/gtest.h>

#include <boost/asio/post.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <string>
#include <vector>

#include "run_on_loop.h"

namespace turnpike::core {
namespace {
namespace net = boost::asio;

// Records what the chain called, and answers as told.
class ScriptedFilter : public Filter {
 public:
  ScriptedFilter(std::string name, std::vector<std::string>& log, FilterStatus on_request,
                 FilterStatus on_resume = FilterStatus::kContinue)
      : name_(std::move(name)), log_(log), on_request_(on_request), on_resume_(on_resume) {}

  FilterStatus OnRequest(RequestContext& context) override {
    log_.push_back(name_ + ".request");
    if (on_request_ == FilterStatus::kRespond) {
      context.refusal = Error{ErrorCode::kForbidden, name_, ""};
    }
    return on_request_;
  }
  net::awaitable<FilterStatus> Resume(RequestContext& context) override {
    // Really wait: go round the event loop once before answering.
    co_await net::post(co_await net::this_coro::executor, net::use_awaitable);
    log_.push_back(name_ + ".resume");
    if (on_resume_ == FilterStatus::kRespond) {
      context.refusal = Error{ErrorCode::kRateLimited, name_, ""};
    }
    co_return on_resume_;
  }
  void OnComplete(RequestContext& context) override { log_.push_back(name_ + ".complete"); }

 private:
  const std::string name_;
  std::vector<std::string>& log_;
  const FilterStatus on_request_;
  const FilterStatus on_resume_;
};

// Runs the chain the way a door does; returns the final status.
net::awaitable<FilterStatus> RunLikeADoor(FilterChain& chain, RequestContext& ctx) {
  FilterStatus status = chain.Run(ctx);
  if (status == FilterStatus::kSuspend) status = co_await chain.Resume(ctx);
  co_return status;
}

TEST(FilterChainTest, AllContinueSynchronouslyAndCompleteInReverse) {
  std::vector<std::string> log;
  FilterChain chain;
  chain.Add(std::make_unique<ScriptedFilter>("a", log, FilterStatus::kContinue));
  chain.Add(std::make_unique<ScriptedFilter>("b", log, FilterStatus::kContinue));
  RequestContext ctx;
  EXPECT_EQ(chain.Run(ctx), FilterStatus::kContinue) << "no event loop needed";
  chain.Complete(ctx);
  EXPECT_EQ(log, (std::vector<std::string>{"a.request", "b.request", "b.complete", "a.complete"}));
}

TEST(FilterChainTest, ARespondingFilterStopsTheChainAndOnlyFiltersThatRanComplete) {
  std::vector<std::string> log;
  FilterChain chain;
  chain.Add(std::make_unique<ScriptedFilter>("a", log, FilterStatus::kContinue));
  chain.Add(std::make_unique<ScriptedFilter>("b", log, FilterStatus::kRespond));
  chain.Add(std::make_unique<ScriptedFilter>("c", log, FilterStatus::kContinue));
  RequestContext ctx;
  EXPECT_EQ(chain.Run(ctx), FilterStatus::kRespond);
  ASSERT_TRUE(ctx.refusal);
  EXPECT_EQ(ctx.refusal->message, "b");
  chain.Complete(ctx);
  EXPECT_EQ(log, (std::vector<std::string>{"a.request", "b.request", "b.complete", "a.complete"}));
}

TEST(FilterChainTest, ASuspendedFilterIsResumedAndTheChainGoesOn) {
  std::vector<std::string> log;
  FilterChain chain;
  chain.Add(std::make_unique<ScriptedFilter>("a", log, FilterStatus::kSuspend));
  chain.Add(std::make_unique<ScriptedFilter>("b", log, FilterStatus::kSuspend));
  chain.Add(std::make_unique<ScriptedFilter>("c", log, FilterStatus::kContinue));
  RequestContext ctx;
  EXPECT_EQ(testing::RunOnLoop(RunLikeADoor(chain, ctx)), FilterStatus::kContinue);
  chain.Complete(ctx);
  EXPECT_EQ(log, (std::vector<std::string>{"a.request", "a.resume", "b.request", "b.resume",
                                           "c.request", "c.complete", "b.complete", "a.complete"}));
}

TEST(FilterChainTest, AResumedFilterMayRespond) {
  std::vector<std::string> log;
  FilterChain chain;
  chain.Add(
      std::make_unique<ScriptedFilter>("a", log, FilterStatus::kSuspend, FilterStatus::kRespond));
  chain.Add(std::make_unique<ScriptedFilter>("b", log, FilterStatus::kContinue));
  RequestContext ctx;
  EXPECT_EQ(testing::RunOnLoop(RunLikeADoor(chain, ctx)), FilterStatus::kRespond);
  ASSERT_TRUE(ctx.refusal);
  EXPECT_EQ(ctx.refusal->code, ErrorCode::kRateLimited);
  chain.Complete(ctx);
  EXPECT_EQ(log, (std::vector<std::string>{"a.request", "a.resume", "a.complete"}));
}

}  // namespace
}  // namespace turnpike::core
