#include "mock/mock_service.h"

#include "mock/mock_handler.h"

namespace turnpike::mock {

MockService::MockService(MockOptions options)
    : options_(std::move(options)), stats_(options_.workers) {}

http::ServerOptions MockService::server_options() const {
  http::ServerOptions server;
  server.host = options_.host;
  server.port = options_.port;
  server.workers = options_.workers;
  // HTTP/2 by prior knowledge beside HTTP/1.1, for gateways that speak h2 upstream.
  server.http2 = true;
  return server;
}

http::HandlerFactory MockService::MakeHandlerFactory() {
  return [this](int worker_index, boost::asio::io_context& context) {
    return std::make_unique<MockHandler>(options_, stats_, worker_index, context);
  };
}

}  // namespace turnpike::mock
