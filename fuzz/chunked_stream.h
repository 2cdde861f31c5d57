// An AsyncReadStream over a fuzz input's payload, for the targets that read HTTP/1.1 as a
// connection does (http_read_fuzz.cc, http_response_fuzz.cc): each read hands out the plan's
// next chunk (chunk_plan.h; at most what the buffers hold), then end of stream. Completions
// are posted, as a socket's are.
#pragma once

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/async_result.hpp>
#include <boost/asio/buffer.hpp>
#include <boost/asio/error.hpp>
#include <boost/asio/post.hpp>
#include <cstddef>
#include <string_view>
#include <utility>

#include "chunk_plan.h"

namespace turnpike::fuzz {

class ChunkedStream {
 public:
  using executor_type = boost::asio::any_io_executor;

  ChunkedStream(executor_type executor, const ChunkPlan& plan)
      : executor_(std::move(executor)), plan_(plan) {}

  executor_type get_executor() { return executor_; }
  size_t handed_out() const { return at_; }

  template <typename MutableBufferSequence, typename ReadToken>
  auto async_read_some(const MutableBufferSequence& buffers, ReadToken&& token) {
    return boost::asio::async_initiate<ReadToken, void(boost::system::error_code, size_t)>(
        [this](auto handler, const MutableBufferSequence& to) {
          boost::system::error_code ec;
          size_t n = 0;
          const std::string_view payload = plan_.payload();
          if (at_ == payload.size()) {
            ec = boost::asio::error::eof;
          } else {
            const size_t size = plan_.ChunkSize(turn_++, payload.size() - at_);
            n = boost::asio::buffer_copy(to, boost::asio::buffer(payload.data() + at_, size));
            at_ += n;
          }
          boost::asio::post(executor_, [handler = std::move(handler), ec, n]() mutable {
            std::move(handler)(ec, n);
          });
        },
        token, buffers);
  }

 private:
  executor_type executor_;
  const ChunkPlan& plan_;
  size_t at_ = 0;  // payload bytes handed out
  size_t turn_ = 0;
};

}  // namespace turnpike::fuzz
