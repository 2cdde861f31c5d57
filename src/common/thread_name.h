// Names the calling thread, so that top -H, perf and /proc/PID/task/TID/comm tell a worker
// from the store thread. Linux keeps at most 15 characters; longer names are cut.
#pragma once

#include <string_view>

namespace turnpike {

void SetThreadName(std::string_view name);

}  // namespace turnpike
