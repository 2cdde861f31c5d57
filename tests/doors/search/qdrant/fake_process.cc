#include "fake_process.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstring>
#include <regex>

namespace turnpike::search::qdrant::testing {

FakeQdrant::FakeQdrant() {
  int in[2];
  int out[2];
  if (pipe(in) != 0 || pipe(out) != 0) {
    skip_reason = "pipe failed";
    return;
  }
  pid_ = fork();
  if (pid_ == 0) {
    dup2(in[0], 0);
    dup2(out[1], 1);
    dup2(out[1], 2);
    close(in[1]);
    close(out[0]);
    execlp("node", "node", QDRANT_FAKE_MAIN, static_cast<char*>(nullptr));
    _exit(127);
  }
  close(in[0]);
  close(out[1]);
  stdin_fd_ = in[1];
  std::string text;
  char buffer[512];
  std::smatch m;
  static const std::regex kListening("listening on 127\\.0\\.0\\.1:(\\d+)");
  while (true) {
    const ssize_t n = read(out[0], buffer, sizeof buffer);
    if (n <= 0) break;
    text.append(buffer, static_cast<size_t>(n));
    if (std::regex_search(text, m, kListening)) {
      port = std::stoi(m[1]);
      break;
    }
  }
  close(out[0]);
  if (port == 0) {
    int status = 0;
    waitpid(pid_, &status, 0);
    pid_ = -1;
    skip_reason = WIFEXITED(status) && WEXITSTATUS(status) == 127
                      ? "node is not installed"
                      : "the Qdrant fake did not start: " + text;
  }
}

FakeQdrant::~FakeQdrant() {
  if (stdin_fd_ >= 0) close(stdin_fd_);
  if (pid_ > 0) {
    kill(pid_, SIGTERM);
    int status = 0;
    waitpid(pid_, &status, 0);
  }
}

std::string FakeQdrant::Violations() const {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
    close(fd);
    return "";
  }
  const std::string request =
      "GET /__fake/violations HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n";
  (void)!write(fd, request.data(), request.size());
  std::string answer;
  char buffer[4096];
  ssize_t n;
  while ((n = read(fd, buffer, sizeof buffer)) > 0) answer.append(buffer, static_cast<size_t>(n));
  close(fd);
  const size_t body = answer.find("\r\n\r\n");
  return body == std::string::npos ? "" : answer.substr(body + 4);
}

}  // namespace turnpike::search::qdrant::testing
