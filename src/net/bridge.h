// The bridge from a job on another thread to an awaitable: a coroutine hands a job to a thread
// it does not own (a store thread, the embedded search engine's thread, the Redis client's
// thread), suspends without blocking its event loop, and resumes with the job's result.
//
//   R result = co_await net::AwaitJob<R>([&](auto done) { queue.Push(job_with(done)); });
//
// `submit` runs at once, on the calling thread, with a Completion `done`. Whoever ends up
// holding `done` invokes it exactly once, from any thread: std::move(done)(value). That
// posts the value to the awaiting coroutine's own executor (its io_context), and the
// coroutine resumes there: never on the job's thread, and never inside the call to `done`.
//
// Refusal: a queue that will not take the job (full, closed) completes it at once with its
// own refusal value (an error Result): std::move(done)(refused). Invoked on the calling
// thread, inside `submit`, it still only posts: the coroutine resumes after the current
// handler returns, not inline, so a refusal cannot re-enter the caller.
//
// Ownership: `done` owns the coroutine's continuation (the handler) and a copy of its
// executor; it is move-only. Destroying it uninvoked abandons the coroutine: its frames are
// destroyed and it never resumes, so every job must complete or refuse. The executor's
// io_context must still exist when `done` posts (an owner of such a thread drains it before
// the loops are destroyed: search/embedded/engine.h, store/store_thread.h).
// Allocation: none beyond the post; `done`'s type is concrete (a template), so a job can hold
// it inline with no type-erasure.
// Threads: `submit` on the caller's; `done` from any one thread, once.
#pragma once

#include <boost/asio/associated_executor.hpp>
#include <boost/asio/async_result.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <type_traits>
#include <utility>

namespace turnpike::net {

// The continuation of a coroutine suspended in AwaitJob<R>; see the top of this file.
template <typename R, typename Handler>
class Completion {
 public:
  explicit Completion(Handler handler)
      : executor_(boost::asio::get_associated_executor(handler)), handler_(std::move(handler)) {}
  Completion(Completion&&) = default;
  Completion& operator=(Completion&&) = default;
  Completion(const Completion&) = delete;
  Completion& operator=(const Completion&) = delete;

  // Resumes the coroutine with `value` on its own executor (posted, never inline).
  void operator()(R value) && {
    boost::asio::post(executor_,
                      [handler = std::move(handler_), value = std::move(value)]() mutable {
                        std::move(handler)(std::move(value));
                      });
  }

 private:
  boost::asio::associated_executor_t<Handler> executor_;
  Handler handler_;
};

// Suspends the calling coroutine, calls submit(Completion) at once, and resumes with the
// value the completion is invoked with (see the top of this file).
template <typename R, typename Submit>
boost::asio::awaitable<R> AwaitJob(Submit submit) {
  // Not a coroutine: the initiation may capture nothing and takes its state as arguments all
  // the same (the GCC 12 rule is about coroutine lambdas; one form for every bridge).
  auto initiate = [](auto handler, Submit job_submit) {
    using Handler = std::decay_t<decltype(handler)>;
    std::move(job_submit)(Completion<R, Handler>(std::move(handler)));
  };
  R result = co_await boost::asio::async_initiate<const boost::asio::use_awaitable_t<>&, void(R)>(
      initiate, boost::asio::use_awaitable, std::move(submit));
  co_return result;
}

}  // namespace turnpike::net
