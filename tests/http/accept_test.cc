// The worker's accept loop (http/worker.cc): a queue longer than one batch is served whole,
// and out of file descriptors (EMFILE, made by lowering RLIMIT_NOFILE in this process) the
// loop backs off instead of spinning, counts each failure by cause and serves the waiting
// connections by itself once descriptors are free again.
#include <gtest/gtest.h>
#include <sys/resource.h>
#include <unistd.h>

#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/write.hpp>
#include <chrono>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "http/exchange.h"
#include "http/server.h"

// Sanitizer builds (GCC defines the first, clang answers the second).
#if defined(__SANITIZE_ADDRESS__)
#define TURNPIKE_ACCEPT_TEST_SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define TURNPIKE_ACCEPT_TEST_SANITIZED 1
#endif
#endif

namespace turnpike::http {
namespace {
namespace net = boost::asio;
using tcp = net::ip::tcp;

class OkHandler : public Handler {
 public:
  net::awaitable<void> Handle(Exchange& exchange) override {
    const bool sent = co_await exchange.Respond(200, "text/plain", "ok");
    (void)sent;
  }
  std::string RenderError(std::string_view, const Error& error) const override {
    return error.message;
  }
};

HandlerFactory OkFactory() {
  return [](int, net::io_context&) { return std::make_unique<OkHandler>(); };
}

ServerOptions OneWorker() {
  ServerOptions options;
  options.workers = 1;
  return options;
}

constexpr std::string_view kRequest = "GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n";

// Reads `socket` to its end; true if it carried a 200.
bool Answered200(tcp::socket& socket) {
  std::string all;
  char buffer[1024];
  boost::system::error_code ec;
  while (!ec) {
    const size_t n = socket.read_some(net::buffer(buffer), ec);
    all.append(buffer, n);
  }
  return all.rfind("HTTP/1.1 200", 0) == 0;
}

uint64_t AllAcceptErrors(const Server& server) {
  uint64_t sum = 0;
  for (size_t cause = 0; cause < kAcceptErrorCauses; ++cause) {
    sum += server.accept_errors(static_cast<AcceptError>(cause));
  }
  return sum;
}

TEST(AcceptTest, AQueueLongerThanOneBatchIsServedWhole) {
  // Connected and sent before the server runs: all of them wait in the listen queue, several
  // batches' worth, for the first pass of the loop.
  constexpr int kClients = 300;
  Server server(OneWorker(), OkFactory());
  ASSERT_TRUE(server.Bind().ok());
  net::io_context io;
  std::vector<tcp::socket> clients;
  for (int i = 0; i < kClients; ++i) {
    clients.emplace_back(io);
    clients.back().connect(tcp::endpoint(net::ip::make_address("127.0.0.1"), server.port()));
    net::write(clients.back(), net::buffer(kRequest));
  }
  std::thread run([&server] { server.Run(); });
  int answered = 0;
  for (tcp::socket& client : clients) answered += Answered200(client) ? 1 : 0;
  server.Stop();
  run.join();
  EXPECT_EQ(answered, kClients);
  EXPECT_EQ(AllAcceptErrors(server), 0u);
}

TEST(AcceptTest, OutOfDescriptorsBacksOffCountsAndRecovers) {
#if defined(TURNPIKE_ACCEPT_TEST_SANITIZED)
  GTEST_SKIP() << "a sanitizer build: UBSan's checks open descriptors themselves";
#endif
  constexpr int kClients = 4;
  Server server(OneWorker(), OkFactory());
  ASSERT_TRUE(server.Bind().ok());
  std::thread run([&server] { server.Run(); });
  net::io_context io;
  std::vector<tcp::socket> clients;
  for (int i = 0; i < kClients; ++i) {
    clients.emplace_back(io);
    clients.back().open(tcp::v4());  // the descriptor now; connect() takes none
  }
  // The next descriptor number becomes the limit: every new descriptor fails with EMFILE.
  rlimit saved{};
  ASSERT_EQ(::getrlimit(RLIMIT_NOFILE, &saved), 0);
  const int next_fd = ::dup(0);
  ASSERT_GE(next_fd, 0);
  ::close(next_fd);
  rlimit low = saved;
  low.rlim_cur = static_cast<rlim_t>(next_fd);
  ASSERT_EQ(::setrlimit(RLIMIT_NOFILE, &low), 0);
  for (tcp::socket& client : clients) {
    client.connect(tcp::endpoint(net::ip::make_address("127.0.0.1"), server.port()));
    net::write(client, net::buffer(kRequest));
  }
  // 1.5 s out of descriptors: pauses of 10, 20, 40 ... 640 ms, then 1 s, make 8 attempts or
  // so; a fixed 50 ms pause would make 30, a spin thousands.
  std::this_thread::sleep_for(std::chrono::milliseconds(1'500));
  const uint64_t failed = server.accept_errors(AcceptError::kProcessDescriptors);
  ASSERT_EQ(::setrlimit(RLIMIT_NOFILE, &saved), 0);
  int answered = 0;
  for (tcp::socket& client : clients) answered += Answered200(client) ? 1 : 0;
  server.Stop();
  run.join();
  EXPECT_GE(failed, 1u);
  EXPECT_LE(failed, 15u);
  EXPECT_EQ(server.accept_errors(AcceptError::kOther), 0u);
  EXPECT_EQ(answered, kClients);
}

}  // namespace
}  // namespace turnpike::http
