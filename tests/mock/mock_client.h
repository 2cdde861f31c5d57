// Test support: a mock provider served in-process on port 0, and a small synchronous Beast
// client that keeps whatever arrived before an error (to observe resets).
#pragma once

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core/error.hpp>
#include <boost/beast/http/fields.hpp>
#include <boost/json/value.hpp>
#include <cstdint>
#include <memory>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "http/server.h"
#include "mock/mock_service.h"

namespace turnpike::mock::testing {

// Serves a MockService on 127.0.0.1:0 on a background thread; stops it on destruction.
class RunningMock {
 public:
  explicit RunningMock(MockOptions options = {});
  ~RunningMock();
  uint16_t port() const { return server_->port(); }
  MockService& service() { return service_; }
  http::Server& server() { return *server_; }

 private:
  MockService service_;
  std::unique_ptr<http::Server> server_;
  std::thread thread_;
};

using Headers = std::vector<std::pair<std::string, std::string>>;

struct Reply {
  bool head_received = false;
  unsigned status = 0;
  boost::beast::http::fields headers;
  std::string body;                // as much as arrived
  boost::beast::error_code error;  // why reading stopped early, or empty
};

Reply Send(uint16_t port, std::string_view method, std::string_view target,
           std::string_view body = {}, const Headers& headers = {});

// A chat request body.
std::string ChatBody(bool stream, bool include_usage = false, std::string_view extra = {});

// The payloads of `data: ` lines, in order.
std::vector<std::string> SseData(std::string_view body);

// The JSON payloads of an SSE body, without the final [DONE].
std::vector<boost::json::value> SseEvents(std::string_view body);

// A JSON string's text; any other value serialized (so comparisons print something useful).
std::string Text(const boost::json::value& value);

// GET /mock/stats, parsed.
boost::json::value Stats(uint16_t port);

// A client that sends one stream request, reads until `marker` shows up in the body, then
// closes its connection (a client that leaves mid-stream).
void ReadUntilThenLeave(uint16_t port, std::string_view body, const Headers& headers,
                        std::string_view marker);

}  // namespace turnpike::mock::testing
