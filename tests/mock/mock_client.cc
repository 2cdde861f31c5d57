#include "mock_client.h"

#include <boost/asio/connect.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http/parser.hpp>
#include <boost/beast/http/read.hpp>
#include <boost/beast/http/string_body.hpp>
#include <boost/beast/http/write.hpp>
#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <stdexcept>

namespace turnpike::mock::testing {
namespace {

namespace net = boost::asio;
namespace bhttp = boost::beast::http;
using tcp = net::ip::tcp;
constexpr int kHttp11 = 11;
constexpr std::string_view kDataPrefix = "data: ";
constexpr std::string_view kDone = "[DONE]";

tcp::socket Connect(net::io_context& context, uint16_t port) {
  tcp::socket socket(context);
  socket.connect(tcp::endpoint(net::ip::make_address("127.0.0.1"), port));
  return socket;
}

void WriteRequest(tcp::socket& socket, std::string_view method, std::string_view target,
                  std::string_view body, const Headers& headers) {
  bhttp::request<bhttp::string_body> request(bhttp::string_to_verb(method), target, kHttp11);
  request.set(bhttp::field::host, "127.0.0.1");
  request.set(bhttp::field::content_type, "application/json");
  for (const auto& [name, value] : headers) request.set(name, value);
  request.body() = std::string(body);
  request.prepare_payload();
  bhttp::write(socket, request);
}

MockOptions OnFreePort(MockOptions options) {
  options.host = "127.0.0.1";
  options.port = 0;
  return options;
}

}  // namespace

RunningMock::RunningMock(MockOptions options) : service_(OnFreePort(std::move(options))) {
  server_ =
      std::make_unique<http::Server>(service_.server_options(), service_.MakeHandlerFactory());
  Status bound = server_->Bind();
  if (!bound.ok()) throw std::runtime_error(bound.error().message);
  thread_ = std::thread([server = server_.get()] { server->Run(); });
}

RunningMock::~RunningMock() {
  server_->Stop();
  thread_.join();
}

Reply Send(uint16_t port, std::string_view method, std::string_view target, std::string_view body,
           const Headers& headers) {
  net::io_context context;
  tcp::socket socket = Connect(context, port);
  WriteRequest(socket, method, target, body, headers);
  boost::beast::flat_buffer buffer;
  bhttp::response_parser<bhttp::string_body> parser;
  parser.body_limit(boost::none);
  Reply reply;
  bhttp::read(socket, buffer, parser, reply.error);
  reply.head_received = parser.is_header_done();
  if (reply.head_received) {
    reply.status = parser.get().result_int();
    reply.headers = parser.get().base();
  }
  reply.body = parser.get().body();
  return reply;
}

std::string ChatBody(bool stream, bool include_usage, std::string_view extra) {
  std::string body = R"({"model":"gpt-test","messages":[{"role":"user","content":"hi"}],)";
  body += stream ? R"("stream":true)" : R"("stream":false)";
  if (include_usage) body += R"(,"stream_options":{"include_usage":true})";
  if (!extra.empty()) body += "," + std::string(extra);
  body += "}";
  return body;
}

std::vector<std::string> SseData(std::string_view body) {
  std::vector<std::string> data;
  size_t pos = 0;
  while (pos < body.size()) {
    size_t end = body.find('\n', pos);
    if (end == std::string_view::npos) end = body.size();
    std::string_view line = body.substr(pos, end - pos);
    if (line.substr(0, kDataPrefix.size()) == kDataPrefix) {
      data.emplace_back(line.substr(kDataPrefix.size()));
    }
    pos = end + 1;
  }
  return data;
}

std::vector<boost::json::value> SseEvents(std::string_view body) {
  std::vector<boost::json::value> events;
  for (const std::string& data : SseData(body)) {
    if (data == kDone) continue;
    events.push_back(boost::json::parse(data));
  }
  return events;
}

std::string Text(const boost::json::value& value) {
  if (value.is_string()) return std::string(value.as_string());
  return boost::json::serialize(value);
}

boost::json::value Stats(uint16_t port) {
  Reply reply = Send(port, "GET", "/mock/stats");
  return boost::json::parse(reply.body);
}

void ReadUntilThenLeave(uint16_t port, std::string_view body, const Headers& headers,
                        std::string_view marker) {
  net::io_context context;
  tcp::socket socket = Connect(context, port);
  WriteRequest(socket, "POST", "/v1/chat/completions", body, headers);
  boost::beast::flat_buffer buffer;
  bhttp::response_parser<bhttp::string_body> parser;
  while (parser.get().body().find(marker) == std::string::npos) {
    boost::beast::error_code ec;
    bhttp::read_some(socket, buffer, parser, ec);
    if (ec) throw std::runtime_error("stream ended before the marker: " + ec.message());
  }
  socket.close();
}

}  // namespace turnpike::mock::testing
