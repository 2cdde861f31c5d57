// Starts the Qdrant fake (tests/integration/lib/qdrant_fake_main.mjs) as a child process for
// a C++ test, on a port it picks itself, and stops it when destroyed. `skip_reason` is set
// (and `port` is 0) when node or Qdrant's OpenAPI document is missing: the test skips with it.
#pragma once

#include <sys/types.h>

#include <string>

namespace turnpike::search::qdrant::testing {

class FakeQdrant {
 public:
  FakeQdrant();
  ~FakeQdrant();
  FakeQdrant(const FakeQdrant&) = delete;
  FakeQdrant& operator=(const FakeQdrant&) = delete;

  int port = 0;
  std::string skip_reason;
  std::string url() const { return "http://127.0.0.1:" + std::to_string(port); }
  // GET /__fake/violations: {"requests": N, "violations": [...]} (blocking; tests only).
  std::string Violations() const;

 private:
  pid_t pid_ = -1;
  int stdin_fd_ = -1;
};

}  // namespace turnpike::search::qdrant::testing
