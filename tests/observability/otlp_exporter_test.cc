#include "observability/otlp_exporter.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <boost/json.hpp>
#include <chrono>
#include <string>
#include <thread>
#include <vector>

namespace turnpike::observability {
namespace {

// A loopback listener on port 0.
int Listen(uint16_t& port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  EXPECT_EQ(::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
  EXPECT_EQ(::listen(fd, 4), 0);
  socklen_t len = sizeof addr;
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
  port = ntohs(addr.sin_port);
  return fd;
}

SpanRecord MakeRecord(uint64_t id) {
  SpanRecord r;
  r.trace_hi = 1;
  r.trace_lo = id;
  r.span_id = id;
  r.method = "GET";
  r.path = "/x";
  return r;
}

// Queues a copy of the record MakeRecord(id) (Push of a const record copies it into its slot).
bool PushRecord(OtlpExporter& exporter, uint64_t id) {
  const SpanRecord r = MakeRecord(id);
  return exporter.Push(r);
}

OtlpExporterOptions Options(uint16_t port) {
  OtlpExporterOptions o;
  o.endpoint = "http://127.0.0.1:" + std::to_string(port) + "/v1/traces";
  o.queue_size = 2;
  o.batch_size = 100;
  o.export_interval = std::chrono::hours(1);  // only Stop sends
  o.timeout = std::chrono::seconds(5);
  o.headers = {{"x-token", "abc"}};
  return o;
}

TEST(OtlpExporter, DropsAndCountsWhenTheQueueIsFullAndCountsAFailedExport) {
  uint16_t port = 0;
  const int fd = Listen(port);
  ::close(fd);  // nothing listens there now: the export is refused
  OtlpExporter exporter(Options(port));
  EXPECT_TRUE(PushRecord(exporter, 1));
  EXPECT_TRUE(PushRecord(exporter, 2));
  EXPECT_FALSE(PushRecord(exporter, 3));
  EXPECT_EQ(exporter.dropped_requests(), 1u);
  exporter.Stop();
  EXPECT_EQ(exporter.exports(), 1u);
  EXPECT_EQ(exporter.failed_exports(), 1u);
  EXPECT_EQ(exporter.exported_requests(), 0u);
  EXPECT_FALSE(PushRecord(exporter, 4));  // stopped
  EXPECT_EQ(exporter.dropped_requests(), 2u);
}

// One export of two records in `protocol`; what the collector received (head and body).
std::string PostTwoRecords(OtlpProtocol protocol) {
  uint16_t port = 0;
  const int listener = Listen(port);
  std::string received;
  std::thread collector([listener, &received] {
    const int c = ::accept(listener, nullptr, nullptr);
    char buf[4096];
    for (;;) {
      const ssize_t n = ::recv(c, buf, sizeof buf, 0);
      if (n <= 0) break;
      received.append(buf, static_cast<size_t>(n));
      const size_t head_end = received.find("\r\n\r\n");
      if (head_end == std::string::npos) continue;
      const size_t cl = received.find("Content-Length: ");
      const size_t length = std::stoul(received.substr(cl + 16));
      if (received.size() >= head_end + 4 + length) break;
    }
    const std::string answer = "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\n{}";
    ::send(c, answer.data(), answer.size(), 0);
    ::close(c);
  });
  OtlpExporterOptions options = Options(port);
  options.protocol = protocol;
  OtlpExporter exporter(options);
  EXPECT_TRUE(PushRecord(exporter, 1));
  EXPECT_TRUE(PushRecord(exporter, 2));
  exporter.Stop();
  collector.join();
  ::close(listener);
  EXPECT_EQ(exporter.exports(), 1u);
  EXPECT_EQ(exporter.failed_exports(), 0u);
  EXPECT_EQ(exporter.exported_requests(), 2u);
  EXPECT_EQ(received.rfind("POST /v1/traces HTTP/1.1\r\n", 0), 0u);
  EXPECT_NE(received.find("\r\nx-token: abc\r\n"), std::string::npos);
  return received;
}

TEST(OtlpExporter, PostsOneBatchToTheCollector) {
  const std::string received = PostTwoRecords(OtlpProtocol::kJson);
  EXPECT_NE(received.find("\r\nContent-Type: application/json\r\n"), std::string::npos);
  const boost::json::value doc = boost::json::parse(received.substr(received.find("\r\n\r\n") + 4));
  EXPECT_EQ(doc.at("resourceSpans").at(0).at("scopeSpans").at(0).at("spans").as_array().size(), 2u);
}

TEST(OtlpExporter, PostsProtobufByDefault) {
  EXPECT_EQ(OtlpExporterOptions{}.protocol, OtlpProtocol::kProtobuf);
  const std::string received = PostTwoRecords(OtlpProtocol::kProtobuf);
  EXPECT_NE(received.find("\r\nContent-Type: application/x-protobuf\r\n"), std::string::npos);
  // The message (otlp_protobuf_test.cc decodes it field by field): the two spans' ids as
  // their raw bytes.
  const std::string body = received.substr(received.find("\r\n\r\n") + 4);
  EXPECT_EQ(body[0], '\x0a');  // ExportTraceServiceRequest.resource_spans
  for (const char id : {'\x01', '\x02'}) {
    const std::string span_id = std::string("\x12\x08", 2) + std::string(7, '\0') + id;
    EXPECT_NE(body.find(span_id), std::string::npos) << int{id};
  }
}

// Reads one HTTP request from `c` into `received` (appending); false when the peer closed.
bool ReadRequest(int c, std::string& received) {
  const size_t start = received.size();
  char buf[4096];
  for (;;) {
    const size_t head_end = received.find("\r\n\r\n", start);
    if (head_end != std::string::npos) {
      const size_t cl = received.find("Content-Length: ", start);
      const size_t length = std::stoul(received.substr(cl + 16));
      if (received.size() >= head_end + 4 + length) return true;
    }
    const ssize_t n = ::recv(c, buf, sizeof buf, 0);
    if (n <= 0) return false;
    received.append(buf, static_cast<size_t>(n));
  }
}

OtlpExporterOptions OneRecordBatches(uint16_t port) {
  OtlpExporterOptions o = Options(port);
  o.batch_size = 1;  // every record is its own export
  return o;
}

TEST(OtlpExporter, KeepsOneConnectionAcrossExports) {
  uint16_t port = 0;
  const int listener = Listen(port);
  std::string received;
  std::thread collector([listener, &received] {
    const int c = ::accept(listener, nullptr, nullptr);
    for (int i = 0; i < 3 && ReadRequest(c, received); ++i) {
      const std::string answer = "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\n{}";
      ::send(c, answer.data(), answer.size(), 0);
    }
    ::close(c);
  });
  OtlpExporter exporter(OneRecordBatches(port));
  EXPECT_TRUE(PushRecord(exporter, 1));
  EXPECT_TRUE(PushRecord(exporter, 2));
  exporter.Stop();
  EXPECT_FALSE(PushRecord(exporter, 3));
  collector.join();
  EXPECT_EQ(exporter.exports(), 2u);
  EXPECT_EQ(exporter.failed_exports(), 0u);
  EXPECT_EQ(exporter.exported_requests(), 2u);
  // Both posts came on the one accepted connection, none asked to close it.
  size_t posts = 0;
  for (size_t at = received.find("POST "); at != std::string::npos;
       at = received.find("POST ", at + 1)) {
    ++posts;
  }
  EXPECT_EQ(posts, 2u);
  EXPECT_EQ(received.find("Connection: close"), std::string::npos);
  ::close(listener);
}

TEST(OtlpExporter, ReconnectsWhenTheCollectorClosedTheKeptConnection) {
  uint16_t port = 0;
  const int listener = Listen(port);
  std::atomic<int> served{0};
  std::thread collector([listener, &served] {
    // Each connection answers one export (with a length, no "Connection: close") and is then
    // closed by the collector, as an idle timeout would.
    for (int i = 0; i < 2; ++i) {
      const int c = ::accept(listener, nullptr, nullptr);
      std::string received;
      if (ReadRequest(c, received)) {
        const std::string answer = "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\n{}";
        ::send(c, answer.data(), answer.size(), 0);
      }
      ::close(c);
      served.fetch_add(1);
    }
  });
  OtlpExporter exporter(OneRecordBatches(port));
  EXPECT_TRUE(PushRecord(exporter, 1));
  while (served.load() < 1) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  EXPECT_TRUE(PushRecord(exporter, 2));
  exporter.Stop();
  collector.join();
  ::close(listener);
  EXPECT_EQ(exporter.exports(), 2u);
  EXPECT_EQ(exporter.failed_exports(), 0u);
  EXPECT_EQ(exporter.exported_requests(), 2u);
  EXPECT_EQ(served.load(), 2);
}

// Pushes from several threads at once all land, each in a slot of its own: the export holds
// every record's span id once.
TEST(OtlpExporter, ConcurrentPushesEachTakeASlot) {
  constexpr int kThreads = 4;
  constexpr int kPerThread = 500;
  uint16_t port = 0;
  const int listener = Listen(port);
  std::string received;
  std::thread collector([listener, &received] {
    const int c = ::accept(listener, nullptr, nullptr);
    if (ReadRequest(c, received)) {
      const std::string answer = "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\n{}";
      ::send(c, answer.data(), answer.size(), 0);
    }
    ::close(c);
  });
  OtlpExporterOptions options = Options(port);
  options.queue_size = kThreads * kPerThread;
  options.batch_size = kThreads * kPerThread + 1;  // one export, at Stop
  OtlpExporter exporter(options);
  std::vector<std::thread> pushers;
  for (int t = 0; t < kThreads; ++t) {
    pushers.emplace_back([&exporter, t] {
      for (int i = 0; i < kPerThread; ++i) {
        EXPECT_TRUE(PushRecord(exporter, static_cast<uint64_t>(t * kPerThread + i + 1)));
      }
    });
  }
  for (std::thread& p : pushers) p.join();
  exporter.Stop();
  collector.join();
  ::close(listener);
  EXPECT_EQ(exporter.dropped_requests(), 0u);
  EXPECT_EQ(exporter.exports(), 1u);
  EXPECT_EQ(exporter.exported_requests(), static_cast<uint64_t>(kThreads * kPerThread));
  const std::string body = received.substr(received.find("\r\n\r\n") + 4);
  for (uint64_t id = 1; id <= kThreads * kPerThread; ++id) {
    std::string span_id("\x12\x08", 2);  // Span.span_id: the id's bytes, most significant first
    for (int shift = 56; shift >= 0; shift -= 8) span_id += static_cast<char>(id >> shift);
    size_t count = 0;
    for (size_t at = body.find(span_id); at != std::string::npos; at = body.find(span_id, at + 1)) {
      ++count;
    }
    // The server span's id appears once as its own id (its phase spans name it as parent,
    // with tag 0x22); MakeRecord's records have no phases or attempts.
    EXPECT_EQ(count, 1u) << id;
  }
}

}  // namespace
}  // namespace turnpike::observability
