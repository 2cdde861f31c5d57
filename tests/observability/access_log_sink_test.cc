#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <boost/json.hpp>
#include <fstream>
#include <map>
#include <sstream>
#include <system_error>
#include <thread>

#include "observability/access_log.h"

namespace turnpike::observability {
namespace {

// A fresh temp file path, removed at scope exit.
class TempFile {
 public:
  TempFile() {
    std::string pattern = ::testing::TempDir() + "turnpike_access_log_XXXXXX";
    const int fd = mkstemp(pattern.data());
    EXPECT_GE(fd, 0);
    close(fd);
    path_ = pattern;
  }
  ~TempFile() { unlink(path_.c_str()); }
  const std::string& path() const { return path_; }
  std::string Read() const {
    std::ifstream in(path_, std::ios::binary);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
  }

 private:
  std::string path_;
};

std::vector<std::string> SplitLines(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

// `lines` lines of `line_bytes` bytes each (including '\n').
std::string MakeBatch(char fill, size_t lines, size_t line_bytes) {
  std::string batch;
  for (size_t i = 0; i < lines; ++i) {
    batch.append(line_bytes - 1, fill);
    batch += '\n';
  }
  return batch;
}

// Reads a pipe until EOF on its own thread.
class PipeReader {
 public:
  explicit PipeReader(int fd)
      : thread_([this, fd] {
          char buf[4096];
          ssize_t n;
          while ((n = read(fd, buf, sizeof(buf))) > 0) data_.append(buf, static_cast<size_t>(n));
          close(fd);
        }) {}
  std::string Join() {
    thread_.join();
    return data_;
  }

 private:
  std::string data_;
  std::thread thread_;
};

TEST(AccessLogSinkTest, TwoThreadsManyBatchesEveryLineExactlyOnce) {
  constexpr int kThreads = 2;
  constexpr int kBatches = 300;
  constexpr int kLinesPerBatch = 40;
  TempFile file;
  {
    auto sink = AccessLogSink::Open(file.path());
    std::vector<std::thread> threads;
    for (int t = 0; t < kThreads; ++t) {
      threads.emplace_back([&, t] {
        for (int b = 0; b < kBatches; ++b) {
          std::string batch;
          for (int l = 0; l < kLinesPerBatch; ++l) {
            batch += "t" + std::to_string(t) + "-b" + std::to_string(b) + "-l" + std::to_string(l) +
                     "\n";
          }
          sink->Submit(std::move(batch));
        }
      });
    }
    for (std::thread& t : threads) t.join();
    EXPECT_EQ(sink->dropped_lines(), 0u);
  }
  std::map<std::string, int> seen;
  for (const std::string& line : SplitLines(file.Read())) ++seen[line];
  EXPECT_EQ(seen.size(), static_cast<size_t>(kThreads * kBatches * kLinesPerBatch));
  for (int t = 0; t < kThreads; ++t) {
    for (int b = 0; b < kBatches; ++b) {
      for (int l = 0; l < kLinesPerBatch; ++l) {
        const std::string line =
            "t" + std::to_string(t) + "-b" + std::to_string(b) + "-l" + std::to_string(l);
        ASSERT_EQ(seen[line], 1) << line;
      }
    }
  }
}

TEST(AccessLogSinkTest, PerWorkerBuffersProduceValidJsonLines) {
  constexpr int kRecordsPerWorker = 3000;
  TempFile file;
  {
    auto sink = AccessLogSink::Open(file.path());
    std::vector<std::thread> workers;
    for (int w = 0; w < 2; ++w) {
      workers.emplace_back([&, w] {
        AccessLogBuffer buffer(*sink, /*flush_bytes=*/2048);
        for (int i = 0; i < kRecordsPerWorker; ++i) {
          const std::string id = "w" + std::to_string(w) + "-" + std::to_string(i);
          AccessRecord r;
          r.request_id = id;
          r.status = 200;
          buffer.Append(r);
        }
      });  // the buffer's destructor submits the tail
    }
    for (std::thread& t : workers) t.join();
  }
  std::map<std::string, int> ids;
  for (const std::string& line : SplitLines(file.Read())) {
    boost::json::error_code ec;
    const boost::json::value v = boost::json::parse(line, ec);
    ASSERT_FALSE(ec) << line;
    ++ids[std::string(v.at("request_id").as_string())];
  }
  EXPECT_EQ(ids.size(), 2u * kRecordsPerWorker);
  for (const auto& [id, count] : ids) EXPECT_EQ(count, 1) << id;
}

TEST(AccessLogSinkTest, FlushWaitsUntilWritten) {
  TempFile file;
  auto sink = AccessLogSink::Open(file.path());
  sink->Submit("one\n");
  sink->Submit("two\nthree\n");
  sink->Flush();
  EXPECT_EQ(file.Read(), "one\ntwo\nthree\n");
}

TEST(AccessLogSinkTest, OpenAppendsToAnExistingFile) {
  TempFile file;
  std::ofstream(file.path()) << "old\n";
  {
    auto sink = AccessLogSink::Open(file.path());
    sink->Submit("new\n");
  }
  EXPECT_EQ(file.Read(), "old\nnew\n");
}

TEST(AccessLogSinkTest, OpenFailureThrowsNamingThePath) {
  try {
    AccessLogSink::Open("/nonexistent-dir/turnpike/access.log");
    FAIL() << "expected std::system_error";
  } catch (const std::system_error& e) {
    EXPECT_NE(std::string(e.what()).find("/nonexistent-dir/turnpike/access.log"),
              std::string::npos);
  }
}

// The writer blocks on a full pipe nobody reads, so unwritten bytes pile up deterministically.
TEST(AccessLogSinkTest, DropsWholeBatchesBeyondThePendingBound) {
  constexpr size_t kLineBytes = 1024;
  constexpr size_t kLinesPerBatch = 100;  // 100 KiB: more than a pipe holds
  int fds[2];
  ASSERT_EQ(pipe(fds), 0);
  const std::string a = MakeBatch('a', kLinesPerBatch, kLineBytes);
  const std::string b = MakeBatch('b', kLinesPerBatch, kLineBytes);
  auto sink = std::make_unique<AccessLogSink>(
      fds[1], /*owns_fd=*/true, AccessLogSinkOptions{.max_pending_bytes = 2 * a.size()});
  sink->Submit(std::string(a));
  sink->Submit(std::string(b));                                      // exactly at the bound
  sink->Submit(MakeBatch('c', kLinesPerBatch, kLineBytes));          // over: dropped
  sink->Submit(MakeBatch('d', 3, 4 * kLinesPerBatch * kLineBytes));  // alone over: dropped
  EXPECT_EQ(sink->dropped_lines(), kLinesPerBatch + 3);

  PipeReader reader(fds[0]);
  sink->Flush();
  sink.reset();  // closes the write end: the reader sees EOF
  EXPECT_EQ(reader.Join(), a + b);
}

TEST(AccessLogSinkTest, DestructorDrainsEverythingSubmitted) {
  int fds[2];
  ASSERT_EQ(pipe(fds), 0);
  std::string expected;
  auto sink = std::make_unique<AccessLogSink>(fds[1], /*owns_fd=*/true);
  for (char c = 'a'; c <= 'h'; ++c) {
    std::string batch = MakeBatch(c, 64, 512);  // 32 KiB each; the pipe fills up at once
    expected += batch;
    sink->Submit(std::move(batch));
  }
  PipeReader reader(fds[0]);
  sink.reset();  // no Flush(): the destructor alone must write all of it
  EXPECT_EQ(reader.Join(), expected);
}

TEST(AccessLogBufferTest, SubmitsAtFlushBytesAndOnFlushNow) {
  TempFile file;
  auto sink = AccessLogSink::Open(file.path());
  AccessRecord r;
  r.request_id = "x";
  std::string one_line;
  AppendAccessLogLine(r, one_line);

  AccessLogBuffer buffer(*sink, /*flush_bytes=*/one_line.size() * 3);
  buffer.Append(r);
  buffer.Append(r);
  sink->Flush();
  EXPECT_EQ(file.Read(), "") << "below flush_bytes nothing is submitted";
  buffer.Append(r);  // reaches flush_bytes
  sink->Flush();
  EXPECT_EQ(file.Read(), one_line + one_line + one_line);
  buffer.Append(r);
  buffer.FlushNow();
  sink->Flush();
  EXPECT_EQ(SplitLines(file.Read()).size(), 4u);
  buffer.FlushNow();  // empty: no-op
  sink->Flush();
  EXPECT_EQ(SplitLines(file.Read()).size(), 4u);
}

}  // namespace
}  // namespace turnpike::observability
