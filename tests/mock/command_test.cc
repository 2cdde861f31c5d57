// `mock-provider` as a process: prints its port, serves, drains on SIGTERM and exits 0.
#include <gtest/gtest.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <string>
#include <vector>

#include "mock_client.h"

namespace turnpike::mock::testing {
namespace {

constexpr std::string_view kBanner = "mock-provider listening on 127.0.0.1:";
// Bounds a wait for the child so a broken binary fails the test instead of hanging it.
constexpr int kStartupTimeoutMs = 20'000;

struct Child {
  pid_t pid = -1;
  int stdout_fd = -1;
};

Child Spawn(const std::vector<std::string>& args) {
  int fds[2];
  if (pipe(fds) != 0) return {};
  const pid_t pid = fork();
  if (pid == 0) {
    dup2(fds[1], STDOUT_FILENO);
    close(fds[0]);
    close(fds[1]);
    std::vector<char*> argv;
    for (const std::string& arg : args) argv.push_back(const_cast<char*>(arg.c_str()));
    argv.push_back(nullptr);
    execv(argv[0], argv.data());
    _exit(127);
  }
  close(fds[1]);
  return Child{pid, fds[0]};
}

// The first line the child prints, or empty on timeout / EOF.
std::string ReadLine(int fd) {
  std::string line;
  char c = 0;
  while (line.find('\n') == std::string::npos) {
    pollfd p{fd, POLLIN, 0};
    if (poll(&p, 1, kStartupTimeoutMs) <= 0) return {};
    if (read(fd, &c, 1) != 1) return {};
    line.push_back(c);
  }
  return line;
}

int WaitExit(pid_t pid) {
  int status = 0;
  waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -WTERMSIG(status);
}

TEST(MockCommand, ServesUntilSigtermThenExitsZero) {
  Child child = Spawn({MOCK_CLI_PATH, "mock-provider", "--listen", "127.0.0.1:0", "--tokens", "3",
                       "--first-token-delay", "1ms"});
  ASSERT_GT(child.pid, 0);
  const std::string line = ReadLine(child.stdout_fd);
  ASSERT_TRUE(line.starts_with(kBanner)) << line;
  const auto port = static_cast<uint16_t>(std::stoi(line.substr(kBanner.size())));
  EXPECT_EQ(Send(port, "GET", "/healthz").status, 200u);
  Reply reply = Send(port, "POST", "/v1/chat/completions", ChatBody(true));
  EXPECT_EQ(reply.status, 200u);
  EXPECT_NE(reply.body.find("tok2 "), std::string::npos);
  kill(child.pid, SIGTERM);
  EXPECT_EQ(WaitExit(child.pid), 0);
  close(child.stdout_fd);
}

TEST(MockCommand, ReplyDescribeAnswersWithTheConversation) {
  Child child =
      Spawn({MOCK_CLI_PATH, "mock-provider", "--listen", "127.0.0.1:0", "--reply", "describe"});
  ASSERT_GT(child.pid, 0);
  const std::string line = ReadLine(child.stdout_fd);
  ASSERT_TRUE(line.starts_with(kBanner)) << line;
  const auto port = static_cast<uint16_t>(std::stoi(line.substr(kBanner.size())));
  Reply reply = Send(port, "POST", "/v1/chat/completions", ChatBody(false));
  EXPECT_EQ(reply.status, 200u);
  EXPECT_NE(reply.body.find(R"("content":"user: hi")"), std::string::npos) << reply.body;
  kill(child.pid, SIGTERM);
  EXPECT_EQ(WaitExit(child.pid), 0);
  close(child.stdout_fd);
}

TEST(MockCommand, RejectsBadOptions) {
  for (const char* option : {"--first-token-delay", "--reply"}) {
    Child child = Spawn({MOCK_CLI_PATH, "mock-provider", option, "fast"});
    ASSERT_GT(child.pid, 0);
    EXPECT_NE(WaitExit(child.pid), 0) << option;
    close(child.stdout_fd);
  }
}

}  // namespace
}  // namespace turnpike::mock::testing
