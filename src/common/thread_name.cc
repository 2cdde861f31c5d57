#include "common/thread_name.h"

#include <pthread.h>

#include <algorithm>
#include <array>

namespace turnpike {

void SetThreadName(std::string_view name) {
  std::array<char, 16> text{};  // 15 characters and the terminator
  const size_t n = std::min(name.size(), text.size() - 1);
  std::copy_n(name.data(), n, text.data());
  pthread_setname_np(pthread_self(), text.data());
}

}  // namespace turnpike
