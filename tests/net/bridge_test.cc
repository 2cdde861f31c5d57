#include "net/bridge.h"

#include <gtest/gtest.h>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <optional>
#include <string>
#include <thread>

namespace turnpike::net {
namespace {

namespace asio = boost::asio;

// A job completed on a thread of its own: the coroutine resumes on its io_context's thread
// with the job's value.
asio::awaitable<void> AwaitOnOtherThread(std::thread* job_thread, std::thread::id* job_id,
                                         std::thread::id* resumed_on, int* value) {
  auto submit = [job_thread, job_id](auto done) {
    *job_thread = std::thread([job_id, done = std::move(done)]() mutable {
      *job_id = std::this_thread::get_id();
      std::move(done)(42);
    });
  };
  auto job = AwaitJob<int>(std::move(submit));
  const int got = co_await std::move(job);
  *resumed_on = std::this_thread::get_id();
  *value = got;
}

TEST(BridgeTest, ResumesOnTheCallersIoContextWithTheJobsValue) {
  asio::io_context context;
  std::thread job_thread;
  std::thread::id job_id;
  std::thread::id resumed_on;
  int value = 0;
  asio::co_spawn(context, AwaitOnOtherThread(&job_thread, &job_id, &resumed_on, &value),
                 asio::detached);
  // run() returns once the coroutine ends: the outstanding handler keeps it running meanwhile.
  context.run();
  job_thread.join();
  EXPECT_EQ(value, 42);
  EXPECT_NE(job_id, std::thread::id());
  EXPECT_NE(job_id, std::this_thread::get_id());
  EXPECT_EQ(resumed_on, std::this_thread::get_id());
}

// A refusal: the submitter completes at once on the calling thread; the coroutine resumes
// with the refusal value, but only after submit returned (posted, not inline).
asio::awaitable<void> AwaitRefused(bool* submit_returned, bool* resumed_after_submit,
                                   std::string* value) {
  auto submit = [submit_returned](auto done) {
    std::move(done)(std::string("refused"));
    *submit_returned = true;
  };
  auto job = AwaitJob<std::string>(std::move(submit));
  std::string got = co_await std::move(job);
  *resumed_after_submit = *submit_returned;
  *value = std::move(got);
}

TEST(BridgeTest, ARefusalResumesWithItsValueAfterSubmitReturns) {
  asio::io_context context;
  bool submit_returned = false;
  bool resumed_after_submit = false;
  std::string value;
  asio::co_spawn(context, AwaitRefused(&submit_returned, &resumed_after_submit, &value),
                 asio::detached);
  const size_t handlers = context.run();
  EXPECT_EQ(value, "refused");
  EXPECT_TRUE(resumed_after_submit);
  EXPECT_GE(handlers, 2u);  // the coroutine's start, then its posted resumption
}

// Many jobs from one coroutine, each on its own thread: every one resumes with its own value.
asio::awaitable<void> AwaitMany(int n, int* sum, int* resumed_off_thread) {
  const std::thread::id loop = std::this_thread::get_id();
  for (int i = 1; i <= n; ++i) {
    std::thread worker;
    auto submit = [&worker, i](auto done) {
      worker = std::thread([i, done = std::move(done)]() mutable { std::move(done)(i); });
    };
    auto job = AwaitJob<int>(std::move(submit));
    const int got = co_await std::move(job);
    worker.join();
    *sum += got;
    if (std::this_thread::get_id() != loop) ++*resumed_off_thread;
  }
}

TEST(BridgeTest, EachJobResumesWithItsOwnValue) {
  asio::io_context context;
  int sum = 0;
  int off_thread = 0;
  asio::co_spawn(context, AwaitMany(10, &sum, &off_thread), asio::detached);
  context.run();
  EXPECT_EQ(sum, 55);
  EXPECT_EQ(off_thread, 0);
}

}  // namespace
}  // namespace turnpike::net
